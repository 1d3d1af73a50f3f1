//! The console's HTTP API as types both sides share: the routes (path
//! templates the backend's router serves), the request each
//! [`gco_spec::Change`] makes ([`change_request`]), the change bodies and
//! the `/api/config` answer.
//!
//! Bodies are the core's JSON ([`gco_spec::json::Value`]), not serde's: the
//! backend reads them with Python's semantics (exact integers, duplicate
//! keys), and a change carries a client's value as it was typed so that the
//! server's rules name what is wrong with it. With the feature `openapi`,
//! the types also describe themselves for the backend's OpenAPI document.

mod answer;
mod body;
mod change;
mod config;
mod query;
pub mod route;
mod team;

pub use answer::{
    Diagnostic, ErrorBody, Health, HealthStatus, Listing, MAX_LISTED_DIAGNOSTICS, Manifests,
    STORE_UNREADABLE_HEADER, Stale, StoreUnreadable, Unreadable, Validation, listed,
};
pub use body::{CanaryBody, ImageBody, RegionBody, ReplicasBody, TopologyBody, field};
pub use change::{ChangeRequest, change_of, change_request};
pub use config::{Config, ConfigError};
pub use query::{
    AuditQuery, ExportFormat, HistoryQuery, ListQuery, MAX_HISTORY_PAGE, MAX_LIST_PAGE,
};
pub use route::{CHANGES, ChangeRoute, Method};
pub use team::{
    AuditEntry, AuditPage, AuthMode, HistoryEntry, HistoryPage, Me, RevertBody, Role, SessionEnd,
    is_entry_id, operation,
};
