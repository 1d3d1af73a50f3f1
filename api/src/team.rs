//! What a team's console adds to the API: who is asking ([`Me`], with
//! [`Role`]s), and the history of every change ([`HistoryPage`]).

use gco_spec::json::Value;
use serde::{Deserialize, Serialize};

gco_spec::vocabulary! {
    serde;
    /// What an identity may do. Each role includes the ones before it.
    #[derive(PartialOrd, Ord)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Role {
        /// Read, validate, preview, and read the history.
        Viewer = "viewer",
        /// Every change except a delete (and reverting one).
        Operator = "operator",
        /// Delete, and deploy a deleted endpoint again from its history.
        Admin = "admin",
    }
}

impl Role {
    /// Whether an identity holding `roles` may act as `self` needs.
    pub fn granted_by(self, roles: &[Role]) -> bool {
        roles.iter().any(|held| *held >= self)
    }
}

/// `GET /api/me`: the identity a request was made with, and its roles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    #[cfg_attr(feature = "openapi", schema(example = "ada@example.com"))]
    pub name: String,
    /// Empty for a signed-in user in no mapped group (`default = "none"`).
    pub roles: Vec<Role>,
    /// The console's own sign-in session (`--auth oidc`), when the request
    /// came with one: the page warns before it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionEnd>,
}

/// When a session ends, relative to the answer (so a browser's clock
/// does not matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionEnd {
    /// Seconds left.
    pub expires_in: u64,
    /// The session's whole length (`--session-lifetime`), in seconds.
    pub lifetime: u64,
}

impl Me {
    pub fn may(&self, needed: Role) -> bool {
        needed.granted_by(&self.roles)
    }
}

gco_spec::vocabulary! {
    serde;
    /// How the console knows who is asking (its `--auth`).
    #[derive(Default)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum AuthMode {
        /// Loopback only: everyone is `local`, with every role.
        #[default]
        None = "none",
        /// Bearer tokens: the shared token file, or named tokens.
        Token = "token",
        /// The console signs users in with an OpenID provider.
        Oidc = "oidc",
        /// An AWS Application Load Balancer signs users in.
        Alb = "alb",
    }
}

impl std::str::FromStr for AuthMode {
    type Err = String;

    fn from_str(text: &str) -> Result<AuthMode, String> {
        AuthMode::parse(text)
            .ok_or_else(|| format!("{text:?} is not an auth mode: none, token, oidc or alb"))
    }
}

/// What a history entry records.
pub mod operation {
    pub const DEPLOY: &str = "deploy";
    pub const REVERT: &str = "revert";
    /// A change made outside the console, found by comparing the record
    /// with the newest entry.
    pub const EXTERNAL: &str = "external";

    /// Every operation a stored entry names: a deploy, a revert, and each
    /// `gco_spec::Change::name`. The audit view's filter takes these, and
    /// on DynamoDB its index is read per operation.
    pub const RECORDED: [&str; 14] = [
        DEPLOY,
        REVERT,
        "scale",
        "set-topology",
        "configure-store",
        "update-image",
        "add-region",
        "remove-region",
        "stop",
        "start",
        "delete",
        "canary",
        "promote",
        "rollback",
    ];
}

/// Whether `text` can be a history entry's id (a page's cursor, a
/// revert's `to`): short printable ASCII, no more. What it names is the
/// store's question.
pub fn is_entry_id(text: &str) -> bool {
    (1..=128).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic())
}

/// One change of an endpoint, as `GET /api/endpoints/{name}/history`
/// answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistoryEntry {
    /// Sortable: a later change has a greater id.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "2026-12-06T19:30:00.123456Z.8f2a61c0")
    )]
    pub id: String,
    /// When the change was written (UTC, RFC 3339, as GCO's timestamps); for
    /// a change made outside the console, the newest time it can have been.
    pub at: String,
    /// For a change made outside the console, the oldest time it can have
    /// been (the entry before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The verified identity; null for a change made outside the console.
    pub who: Option<String>,
    /// `deploy`, `revert`, `external`, or the operation's name (`scale`,
    /// `set-topology`, `delete`, ...).
    #[cfg_attr(feature = "openapi", schema(example = "scale"))]
    pub operation: String,
    /// The id of the request that made it: the console's own (a UUIDv7,
    /// its answer's `x-request-id`); for entries written before it made its
    /// own, the `x-request-id` as it was then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The `X-Request-Id` the client sent with the request, as given (its
    /// answer's `x-client-request-id`): the client's to choose, so neither
    /// unique nor checked beyond its length and characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_request_id: Option<String>,
    /// The record's content before (null for a deploy), without what the
    /// monitors write (`region_status`, `updated_at`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub before: Option<Value>,
    /// The record's content after.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub after: Option<Value>,
}

/// `GET /api/endpoints/{name}/history`: newest first, one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistoryPage {
    pub items: Vec<HistoryEntry>,
    /// The cursor of the next (older) page, for `?after=`; null on the last.
    pub next: Option<String>,
}

/// One change of any endpoint, as the audit view (`GET /api/history`)
/// lists it: who, when, what, and where its entry is; the contents are in
/// the endpoint's own history (`GET /api/endpoints/{name}/history`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// The endpoint changed.
    #[cfg_attr(feature = "openapi", schema(example = "chat"))]
    pub endpoint: String,
    /// The entry's id in the endpoint's history.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "2026-12-06T19:30:00.123456Z.8f2a61c0")
    )]
    pub id: String,
    /// When the change was written (UTC, RFC 3339).
    pub at: String,
    /// The verified identity.
    pub who: Option<String>,
    /// `deploy`, `revert`, or the operation's name.
    #[cfg_attr(feature = "openapi", schema(example = "scale"))]
    pub operation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_request_id: Option<String>,
}

impl AuditEntry {
    /// The console's address of this entry on its endpoint's History tab.
    pub fn console_path(&self) -> String {
        format!(
            "/endpoints/{}?tab=history&entry={}",
            crate::route::encode_segment(&self.endpoint),
            crate::route::encode_segment(&self.id)
        )
    }
}

/// `GET /api/history`: newest first, one page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditPage {
    pub items: Vec<AuditEntry>,
    /// The cursor of the next (older) page, for `?after=`; null on the
    /// last. A page may hold fewer than `limit` changes and still have a
    /// `next`: a read stops after a bounded stretch of the index, so a
    /// rare filter never reads the whole history at once.
    pub next: Option<String>,
}

/// `POST /api/endpoints/{name}/revert`: the entry whose `after` the
/// endpoint goes back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RevertBody {
    pub to: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_id_is_short_printable_ascii() {
        assert!(is_entry_id("2026-12-06T19:30:00.000001Z.0a1b2c3d"));
        assert!(!is_entry_id("") && !is_entry_id("a b") && !is_entry_id(&"x".repeat(129)));
    }

    #[test]
    fn roles_include_the_ones_before() {
        assert!(Role::Viewer.granted_by(&[Role::Operator]));
        assert!(Role::Operator.granted_by(&[Role::Viewer, Role::Admin]));
        assert!(!Role::Admin.granted_by(&[Role::Operator]));
        assert!(!Role::Viewer.granted_by(&[]));
        assert_eq!(Role::parse("operator"), Some(Role::Operator));
        assert_eq!(Role::parse("Operator"), None);
    }

    #[test]
    fn every_change_is_a_recorded_operation() {
        use gco_spec::Change;
        let v = Value::Null;
        let changes = [
            Change::Scale {
                replicas: v.clone(),
            },
            Change::SetTopology {
                prefill: v.clone(),
                decode: v.clone(),
            },
            Change::ConfigureStore { store: v.clone() },
            Change::UpdateImage {
                image: v.clone(),
                with_proxy: v.clone(),
            },
            Change::AddRegion { region: v.clone() },
            Change::RemoveRegion { region: v.clone() },
            Change::Stop,
            Change::Start,
            Change::DELETE,
            Change::CanaryDeploy {
                image: v.clone(),
                weight: None,
                replicas: None,
            },
            Change::PromoteCanary,
            Change::RollbackCanary,
        ];
        for change in &changes {
            assert!(
                operation::RECORDED.contains(&change.kind().as_str()),
                "{}",
                change.kind().as_str()
            );
        }
        assert_eq!(operation::RECORDED.len(), changes.len() + 2);
        let entry = AuditEntry {
            endpoint: "a b".into(),
            id: "2026-12-06T19:30:00.123456Z.8f2a61c0".into(),
            at: String::new(),
            who: None,
            operation: "scale".into(),
            request_id: None,
            client_request_id: None,
        };
        assert_eq!(
            entry.console_path(),
            "/endpoints/a%20b?tab=history&entry=2026-12-06T19%3A30%3A00.123456Z.8f2a61c0"
        );
    }

    #[test]
    fn auth_modes_read_by_name() {
        for mode in AuthMode::ALL {
            assert_eq!(mode.as_str().parse::<AuthMode>(), Ok(mode));
        }
        assert_eq!(
            "sso".parse::<AuthMode>(),
            Err("\"sso\" is not an auth mode: none, token, oidc or alb".into())
        );
    }
}
