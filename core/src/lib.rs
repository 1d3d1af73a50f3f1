//! The GCO inference endpoint spec: types, defaults, validation and every
//! operation on an endpoint record, as pure functions.
//!
//! This crate knows nothing of HTTP, DynamoDB or the DOM. The `mooncake`
//! block's rules answer exactly as GCO's Python reference does (same
//! accept/reject, same first message byte for byte); see `ARCHITECTURE.md`.

#[macro_use]
mod vocabulary;

pub mod bytesize;
#[cfg(feature = "cli")]
pub mod cli;
pub mod commands;
pub mod deploy;
pub mod diagnostics;
pub mod diff;
pub mod document;
pub mod ecr;
pub mod framework;
pub mod json;
pub mod limits;
#[cfg(feature = "lsp")]
mod lsp;
#[cfg(feature = "manifests")]
pub mod manifests;
pub mod message_kind;
pub mod mooncake;
pub mod names;
pub mod ops;
#[cfg(feature = "cli")]
pub mod output_format;
pub mod plan;
#[cfg(feature = "cli")]
pub mod protocol;
pub mod pyrepr;
pub mod record;
pub mod region;
pub mod routing;
#[cfg(feature = "schema")]
pub mod schemas;
pub mod scope;
pub mod share;
pub mod spec;
pub mod status;
mod suggest;
pub mod table;
pub mod text_range;
pub mod time;
#[cfg(feature = "serde")]
pub mod types;
#[cfg(feature = "wasm")]
mod wasm;

pub use bytesize::{
    ByteSizeArg, ByteSizeError, HumanSizeError, author_byte_size, describe_byte_size,
    format_byte_size, parse_byte_size,
};
pub use commands::{Commands, change_commands, deploy_commands, record_commands, try_it_commands};
pub use deploy::{
    DeployCheck, DeployContext, DeployRequest, Deployment, TokenSource, new_record, plan_deploy,
    plan_deploy_with_monitors,
};
pub use diagnostics::{Diagnostic, Report, Severity};
pub use framework::{Framework, Frameworks};
pub use json::{JsonError, Value};
pub use mooncake::{
    BuildArgs, BuildError, MetricKind, Mode, OffloadTier, Role, TransferProtocol, check_mooncake,
    validate_mooncake,
};
pub use ops::{Change, ChangeKind, OpError, OpErrorKind, apply};
pub use plan::{Plan, PlanError, plan, plan_deployment, plan_in_region};
pub use record::{DesiredState, Record};
pub use region::{MonitorSettings, RegionContext};
pub use spec::check_spec;
pub use status::{CanarySpec, RegionState, RegionStatus};
