//! The endpoint service: deploys and changes records through a [`Store`]
//! with the core's rules. It knows nothing of HTTP.
//!
//! Here the service and its reads; `writes.rs` its deploys, changes and
//! reverts; `history.rs` the history and the audit view; `error.rs` what
//! they answer when they cannot.

use std::sync::Arc;
use std::time::SystemTime;

use gco_api::Role;
use gco_spec::deploy::DeployCheck;
use gco_spec::json::{Object, Value};
use gco_spec::{DeployContext, Frameworks, Report};

use crate::auth::identity::Identity;
use crate::store::listing::{Filter, Listing, Page};
use crate::store::{Author, Freshness, Store, Stored};

mod error;
mod history;
mod writes;

pub use error::ServiceError;
pub use history::{EXTERNAL_SUFFIX, HISTORY_PAGE, MAX_HISTORY_PAGE};

/// What a validation returns: the diagnostics, and the spec a deploy would
/// store when there is no error.
pub struct Validation {
    pub report: Report,
    pub spec: Option<Object>,
}

/// Who asks for a change: the verified identity, the request's id (the
/// console's own, `x-request-id`) and the one the client sent, which the
/// change's history entry records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub identity: Identity,
    pub request_id: Option<String>,
    pub client_request_id: Option<String>,
}

impl Actor {
    pub fn new(identity: Identity, request_id: Option<String>) -> Actor {
        Actor {
            identity,
            request_id,
            client_request_id: None,
        }
    }

    /// With the `X-Request-Id` the client sent.
    pub fn with_client_request_id(mut self, id: Option<String>) -> Actor {
        self.client_request_id = id;
        self
    }

    /// The author of a change `operation` (its history entry's who, what
    /// and request).
    fn author(&self, operation: &str) -> Author {
        Author::new(&self.identity.name, operation, self.request_id.as_deref())
            .with_client_request_id(self.client_request_id.as_deref())
    }

    fn require(&self, needed: Role, doing: &'static str) -> Result<(), ServiceError> {
        self.identity
            .require(needed, doing)
            .map_err(ServiceError::Forbidden)
    }
}

pub struct Service {
    store: Arc<dyn Store>,
    deployed_regions: Vec<String>,
    default_image: String,
    frameworks: Frameworks,
    /// What each region's monitor is configured with (`--monitor-settings`).
    monitors: Arc<gco_spec::MonitorSettings>,
    /// How users are known (`--auth`), for the console to sign in by.
    auth: gco_api::AuthMode,
}

/// 64 lowercase hex characters from the OS's random source.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
impl Service {
    pub fn new(
        store: Arc<dyn Store>,
        deployed_regions: Vec<String>,
        default_image: String,
    ) -> Service {
        Service {
            store,
            deployed_regions,
            default_image,
            frameworks: Frameworks::CURRENT,
            monitors: Arc::default(),
            auth: gco_api::AuthMode::None,
        }
    }

    /// The frameworks the team's GCO accepts (GCO's current ones unless set).
    pub fn with_frameworks(self, frameworks: Frameworks) -> Service {
        Service { frameworks, ..self }
    }

    /// The service as the console's `--auth` makes it known.
    pub fn with_auth(self, auth: gco_api::AuthMode) -> Service {
        Service { auth, ..self }
    }

    pub fn frameworks(&self) -> &Frameworks {
        &self.frameworks
    }

    /// The service with what each region's monitor is configured with:
    /// the preview's manifests use it, and deploy checks warn about a
    /// region left without a master image. Without it, no region has one
    /// (GCO has no default).
    pub fn with_monitor_settings(mut self, monitors: gco_spec::MonitorSettings) -> Service {
        self.monitors = Arc::new(monitors);
        self
    }

    /// What each region's monitor is configured with.
    pub fn monitor_settings(&self) -> &gco_spec::MonitorSettings {
        &self.monitors
    }

    pub fn context(&self) -> DeployContext<'_> {
        DeployContext {
            deployed_regions: Some(&self.deployed_regions),
            default_image: &self.default_image,
            frameworks: self.frameworks,
        }
    }

    /// The deploy defaults: the regions a request without any targets, and
    /// the image a mooncake deploy without one gets.
    pub fn config(&self) -> gco_api::Config {
        gco_api::Config {
            deployed_regions: self.deployed_regions.clone(),
            default_image: self.default_image.clone(),
            frameworks: self
                .frameworks
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            auth: self.auth,
            history: self.store.records_history(),
        }
    }

    /// Checks a deploy request without storing anything: the check deploy
    /// makes, and the one the console's editor runs.
    pub fn validate(&self, body: Value) -> Validation {
        let check = self.plan(body);
        Validation {
            report: check.report,
            spec: check.deployment.map(|d| d.spec),
        }
    }

    /// A deploy request checked by the core's rules: the same check the
    /// console's editor runs, so both refuse the same requests.
    pub fn plan(&self, request: Value) -> DeployCheck {
        gco_spec::plan_deploy_with_monitors(request, &self.context(), &self.monitors)
    }

    /// A record with its JSON as stored, for sending on unchanged.
    pub async fn get_stored(&self, name: &str) -> Result<Arc<Stored>, ServiceError> {
        if name.len() > gco_spec::table::MAX_NAME_BYTES {
            return Err(ServiceError::NotFound(name.to_owned()));
        }
        found(name, self.store.get_stored(name).await?)
    }

    /// A record for a page to show: at most one refresh interval old (see
    /// [`crate::store::ViewedStore`]). A change reads with [`Self::get_stored`].
    pub async fn read(&self, name: &str) -> Result<Arc<Stored>, ServiceError> {
        if name.len() > gco_spec::table::MAX_NAME_BYTES {
            return Err(ServiceError::NotFound(name.to_owned()));
        }
        found(name, self.store.peek(name).await?)
    }

    /// How current lists are, when they come from a view of the table.
    pub fn freshness(&self) -> Option<Freshness> {
        self.store.freshness()
    }

    /// Since when the table cannot be read, while the store finds it so.
    pub fn unreadable_since(&self) -> Option<SystemTime> {
        self.store.unreadable_since()
    }

    /// The records `filter` admits, newest first, one `page` of them.
    pub async fn list(&self, filter: &Filter<'_>, page: &Page) -> Result<Listing, ServiceError> {
        Ok(self.store.list_page(filter, page).await?)
    }
}

/// A read's record, or `name`'s 404.
fn found(name: &str, stored: Option<Arc<Stored>>) -> Result<Arc<Stored>, ServiceError> {
    stored.ok_or_else(|| ServiceError::NotFound(name.to_owned()))
}
