//! The endpoint service: deploys and changes records through a [`Store`]
//! with the core's rules. It knows nothing of HTTP.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gco_spec::deploy::DeployCheck;
use gco_spec::json::{Object, Value};
use gco_spec::time::{format_timestamp, next_timestamp};
use gco_spec::{
    Change, DeployContext, Diagnostic, Frameworks, OpError, Record, Report, apply, new_record,
};

use crate::listing::{Filter, Listing, Page};
use crate::store::{Expected, Freshness, Oversized, Store, StoreError, Stored, Unreadable};
use crate::version::if_match_holds;

/// Read-modify-write attempts before a change under heavy contention gives
/// up. Each lost race means another writer made progress, so 50 writers on
/// one record need at most 50 rounds; the margin absorbs backoff jitter and
/// GCO's monitors, whose status writes (every 15 s per region) cost a
/// change in flight a round too.
const MAX_ATTEMPTS: u32 = 256;

/// Upper bound of the random pause after a lost race.
const MAX_BACKOFF: Duration = Duration::from_millis(20);

#[derive(Debug)]
pub enum ServiceError {
    NotFound(String),
    /// The request or the spec it makes is invalid (every diagnostic).
    Invalid(Report),
    AlreadyExists(String),
    /// The core refused the change.
    Refused(OpError),
    /// `If-Match` named a version whose content (what a change depends
    /// on) is no longer current.
    Stale,
    /// Contention outlasted every retry of the change `operation` (GCO's
    /// `<op>`: "scaled", "updated", ...), or a region's addition or removal
    /// lost its conditional write to another change, as GCO's raise.
    Busy {
        endpoint: String,
        operation: &'static str,
    },
    /// The store failed before anything was written (details logged).
    Unavailable,
    /// A write was sent but the store did not confirm it (it failed or
    /// stopped answering), so it may or may not have landed (details logged).
    Unconfirmed,
    /// A stored item is no record this service reads.
    Corrupt(Unreadable),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> ServiceError {
        match e {
            StoreError::Unavailable(detail) => {
                tracing::error!(%detail, "store unavailable");
                ServiceError::Unavailable
            }
            StoreError::Rejected(detail) => {
                tracing::error!(%detail, "store refused the call");
                ServiceError::Unavailable
            }
            StoreError::Corrupt(unreadable) => {
                tracing::error!(%unreadable, name = %unreadable.endpoint_name, "unreadable item in the store");
                ServiceError::Corrupt(unreadable)
            }
            // Creates and updates answer these themselves; a read never does.
            StoreError::AlreadyExists | StoreError::ConditionFailed => {
                tracing::error!(error = %e, "a store call answered a write's outcome");
                ServiceError::Unavailable
            }
        }
    }
}

impl ServiceError {
    /// A failed write: a store that stopped answering may still have applied
    /// it, so the client must not be told that nothing changed.
    fn from_write(e: StoreError) -> ServiceError {
        let unknown = matches!(e, StoreError::Unavailable(_));
        match ServiceError::from(e) {
            ServiceError::Unavailable if unknown => ServiceError::Unconfirmed,
            other => other,
        }
    }
}

/// What a validation returns: the diagnostics, and the spec a deploy would
/// store when there is no error.
pub struct Validation {
    pub report: Report,
    pub spec: Option<Object>,
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

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// 64 lowercase hex characters from the OS's random source.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn jitter() -> Duration {
    let mut b = [0u8; 2];
    let _ = getrandom::fill(&mut b);
    MAX_BACKOFF.mul_f64(f64::from(u16::from_le_bytes(b)) / f64::from(u16::MAX))
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
            history: false,
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

    /// Deploys; answers the record as stored.
    pub async fn deploy(&self, request: Value) -> Result<Arc<Stored>, ServiceError> {
        let check = self.plan(request);
        let Some(deployment) = check.deployment else {
            return Err(ServiceError::Invalid(check.report));
        };
        let name = deployment.endpoint_name.clone();
        let record = new_record(
            deployment,
            &format_timestamp(now_micros()),
            &mut random_token,
        );
        refuse_oversized(&record)?;
        match self.store.create(&record).await {
            Ok(stored) => Ok(stored),
            Err(StoreError::AlreadyExists) => Err(ServiceError::AlreadyExists(name)),
            Err(e) => Err(ServiceError::from_write(e)),
        }
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

    /// The records `filter` admits, newest first, one `page` of them.
    pub async fn list(&self, filter: &Filter<'_>, page: &Page) -> Result<Listing, ServiceError> {
        Ok(self.store.list_page(filter, page).await?)
    }

    /// Applies a change with optimistic concurrency: each attempt reads,
    /// applies the core's operation and writes on the condition that the
    /// record is still as read, retrying on a fresh read when another write
    /// came first.
    ///
    /// With `if_match`, a record whose content (what the change depends on,
    /// see [`crate::version`]) is not the named version is
    /// [`ServiceError::Stale`] and nothing is written. A monitor's status
    /// write in between moves `updated_at`, so the write that follows it
    /// fails its condition and is tried again on a fresh read: the status is
    /// never written over, and the change still lands while its content
    /// stays as the client saw it.
    pub async fn change(
        &self,
        name: &str,
        change: Change,
        if_match: Option<&str>,
    ) -> Result<Arc<Stored>, ServiceError> {
        change.check_arguments().map_err(ServiceError::Refused)?;
        // GCO's add_region and remove_region raise when their conditional
        // write loses (GCO_FACTS_NEWEST section 3.2): a membership change
        // computed on regions that another change has since moved is not
        // made on the new ones. A lost race with a status write is retried.
        let membership = matches!(
            change,
            Change::AddRegion { .. } | Change::RemoveRegion { .. }
        );
        let mut computed_on: Option<String> = None;
        for _ in 0..MAX_ATTEMPTS {
            let stored = self.get_stored(name).await?;
            if if_match.is_some_and(|tags| !if_match_holds(tags, stored.etag())) {
                return Err(ServiceError::Stale);
            }
            if let Some(tag) = &computed_on
                && !if_match_holds(tag, stored.etag())
            {
                return Err(ServiceError::Busy {
                    endpoint: name.to_owned(),
                    operation: change.operation(),
                });
            }
            if membership {
                computed_on = Some(stored.etag().to_owned());
            }
            let current = &stored.record;
            let now = next_timestamp(now_micros(), &current.updated_at);
            let mut next =
                apply(current, &change, &now, &mut random_token).map_err(ServiceError::Refused)?;
            // A change that changes nothing (a region removed that was no
            // target, a stopped endpoint stopped) is not written: the
            // version others hold stays current.
            let now = std::mem::replace(&mut next.updated_at, current.updated_at.clone());
            if next == *current {
                return Ok(stored);
            }
            next.updated_at = now;
            refuse_oversized(&next)?;
            match self
                .store
                .update(
                    &next,
                    Expected::of(current, matches!(change, Change::Delete { .. })),
                )
                .await
            {
                Ok(written) => return Ok(written),
                // Another write came first: a change (the next read tells,
                // and with `If-Match` answers Stale) or a monitor's status.
                Err(StoreError::ConditionFailed) => tokio::time::sleep(jitter()).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy {
            endpoint: name.to_owned(),
            operation: change.operation(),
        })
    }
}

/// A read's record, or `name`'s 404.
fn found(name: &str, stored: Option<Arc<Stored>>) -> Result<Arc<Stored>, ServiceError> {
    stored.ok_or_else(|| ServiceError::NotFound(name.to_owned()))
}

/// A record no DynamoDB item could hold, refused (at its largest part)
/// before either store sees it.
fn refuse_oversized(record: &Record) -> Result<(), ServiceError> {
    let Some(oversized) = Oversized::of(record) else {
        return Ok(());
    };
    let mut report = Report::default();
    report.push(Diagnostic::error(
        oversized.part.clone(),
        oversized.message(),
    ));
    Err(ServiceError::Invalid(report))
}
