//! The endpoint service: deploys and changes records through a [`Store`]
//! with the core's rules. It knows nothing of HTTP.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gco_spec::deploy::{DeployCheck, plan_deploy_owned};
use gco_spec::json::{Object, Value};
use gco_spec::time::{format_timestamp, next_timestamp};
use gco_spec::{Change, DeployContext, Diagnostic, OpError, Record, Report, apply, new_record};

use crate::listing::{Filter, Listing, Page};
use crate::store::{
    DYNAMO_NUMBER_DIGITS, Expected, Oversized, Store, StoreError, Stored, Unreadable,
    fits_dynamo_number,
};
use crate::version::if_match_holds;

/// Read-modify-write attempts before a change under heavy contention gives
/// up. Each lost race means another writer made progress, so 50 writers on
/// one record need at most 50 rounds; the margin absorbs backoff jitter and
/// GCO's monitors, whose status writes (every 15 s per region) cost a
/// change in flight a round too.
const MAX_ATTEMPTS: u32 = 256;

/// Longest endpoint name stored, in bytes: DynamoDB's limit for a partition
/// key, so GCO's own table cannot hold a longer one either. Both stores
/// refuse it the same way (a 422, not the table's ValidationException).
pub const MAX_NAME_BYTES: usize = 2048;

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
    /// Contention outlasted every retry.
    Busy,
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
            StoreError::AlreadyExists | StoreError::ConditionFailed => ServiceError::Busy,
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
        }
    }

    fn context(&self) -> DeployContext<'_> {
        DeployContext {
            deployed_regions: Some(&self.deployed_regions),
            default_image: &self.default_image,
        }
    }

    /// The deploy defaults: the regions a request without any targets, and
    /// the image a mooncake deploy without one gets.
    pub fn config(&self) -> Value {
        let mut o = Object::new();
        o.insert(
            "deployed_regions",
            self.deployed_regions
                .iter()
                .map(|r| Value::str(r))
                .collect::<Vec<_>>(),
        );
        o.insert("default_image", self.default_image.as_str());
        Value::Object(o)
    }

    /// Checks a deploy request (or a bare spec) without storing anything.
    pub fn validate(&self, body: impl Into<RequestBody>) -> Validation {
        use gco_spec::document::DocumentKind;
        let body = body.into();
        // A body that is not an object is no spec either: it is refused as
        // deploy refuses it, not read as a bare block.
        if body.value.as_object().is_none()
            || DocumentKind::of(&body.value) == DocumentKind::DeployRequest
        {
            let check = self.plan(body);
            return Validation {
                report: check.report,
                spec: check.deployment.map(|d| d.spec),
            };
        }
        let report = gco_spec::document::check_document(&body.value);
        let spec = match body.value {
            Value::Object(spec) if report.is_ok() => Some(spec),
            _ => None,
        };
        Validation { report, spec }
    }

    /// A deploy request checked by the core's rules, and for what this
    /// service cannot store (its own errors follow the core's).
    fn plan(&self, request: RequestBody) -> DeployCheck {
        let unstorable = unstorable(&request);
        let mut check = plan_deploy_owned(request.value, &self.context());
        if !unstorable.is_empty() {
            check.report.diagnostics.extend(unstorable);
            check.deployment = None;
        }
        check
    }

    /// Deploys; answers the record as stored.
    pub async fn deploy(
        &self,
        request: impl Into<RequestBody>,
    ) -> Result<Arc<Stored>, ServiceError> {
        let check = self.plan(request.into());
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
        if name.len() > MAX_NAME_BYTES {
            return Err(ServiceError::NotFound(name.to_owned()));
        }
        self.store
            .get_stored(name)
            .await?
            .ok_or_else(|| ServiceError::NotFound(name.to_owned()))
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
        for _ in 0..MAX_ATTEMPTS {
            let stored = self.get_stored(name).await?;
            if if_match.is_some_and(|tags| !if_match_holds(tags, stored.etag())) {
                return Err(ServiceError::Stale);
            }
            let current = &stored.record;
            let change = match &change {
                // A fresh generation token for a region seen for the first time.
                Change::AddRegion { region, .. } => Change::AddRegion {
                    region: region.clone(),
                    generation: random_token(),
                },
                other => other.clone(),
            };
            let now = next_timestamp(now_micros(), &current.updated_at);
            let mut next = apply(current, &change, &now).map_err(ServiceError::Refused)?;
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
                .update(&next, Expected::of(current, change == Change::Delete))
                .await
            {
                Ok(written) => return Ok(written),
                // Another write came first: a change (the next read tells,
                // and with `If-Match` answers Stale) or a monitor's status.
                Err(StoreError::ConditionFailed) => tokio::time::sleep(jitter()).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy)
    }
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

/// What a deploy request holds that the stores cannot keep, or that no
/// request could then address, whatever the spec's rules say.
fn unstorable(request: &RequestBody) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    if let Some(name) = request
        .value
        .as_object()
        .and_then(|o| o.get("endpoint_name"))
        .and_then(Value::as_str)
    {
        if name.len() > MAX_NAME_BYTES {
            let message = format!(
                "endpoint_name has {} bytes; at most {MAX_NAME_BYTES} can be stored",
                name.len()
            );
            errors.push(Diagnostic::error("endpoint_name", message));
        } else if let Some(message) = not_a_path_segment(name) {
            errors.push(Diagnostic::error("endpoint_name", message));
        }
    }
    errors.extend(request.unstorable_value());
    errors
}

/// Why a name cannot be one segment of a URL path as it stands, which the
/// API (`/api/endpoints/{name}`) and GCO's ingress path
/// (`/inference/{name}`) need: with a `/` it would sit inside another
/// endpoint's path, and the other characters end, escape or break a path.
/// Other names that are not DNS labels are the core's warning (GCO stores
/// them but cannot route them).
fn not_a_path_segment(name: &str) -> Option<String> {
    let repr = |text: &str| Value::str(text).repr();
    if name == "." || name == ".." {
        return Some(format!(
            "endpoint_name {} cannot be one segment of a URL path: clients read it as a directory",
            repr(name)
        ));
    }
    let c = name.chars().find(|&c| {
        matches!(c, '/' | '\\' | '?' | '#' | '%') || c.is_whitespace() || c.is_control()
    })?;
    Some(format!(
        "endpoint_name {} cannot be one segment of a URL path, as the API and GCO's ingress path (/inference/<name>) need: it holds {}",
        repr(name),
        repr(&c.to_string())
    ))
}

/// A JSON request body as the service takes it.
pub struct RequestBody {
    pub value: Value,
    /// Whether the text had a `\u` escape. JSON text holds a lone surrogate
    /// only through one, so without it (most bodies) the search of the
    /// whole value for one is skipped.
    pub unicode_escapes: bool,
}

impl RequestBody {
    /// A body read from `text`.
    pub fn parsed(value: Value, text: &str) -> RequestBody {
        RequestBody {
            value,
            unicode_escapes: text.contains("\\u"),
        }
    }

    /// The first value in the body that no store can keep as it is, as an
    /// error at its path: a string with a lone surrogate, or an integer too
    /// long for a DynamoDB number.
    pub fn unstorable_value(&self) -> Option<Diagnostic> {
        let surrogate = if self.unicode_escapes {
            lone_surrogate(&self.value)
        } else {
            None
        };
        surrogate.or_else(|| too_long_number(&self.value))
    }
}

/// A value from elsewhere than text is searched.
impl From<Value> for RequestBody {
    fn from(value: Value) -> RequestBody {
        RequestBody {
            value,
            unicode_escapes: true,
        }
    }
}

/// The first string of `value` with a lone surrogate, as an error at its
/// path: DynamoDB and the embedded store keep UTF-8 text, which cannot hold
/// one, and replacing it would store something else than was sent.
fn lone_surrogate(value: &Value) -> Option<Diagnostic> {
    let (path, text) = value.lone_surrogate()?;
    let message = format!(
        "{} holds a lone surrogate ({text:?}), which cannot be stored: text is kept as UTF-8",
        if path.is_empty() { "the body" } else { &path }
    );
    Some(Diagnostic::error(path, message))
}

/// The first integer with more digits than a DynamoDB number holds, as an
/// error at its path: GCO could not write it, and kept as its digits (as
/// the stores keep such a number read from elsewhere) it would be a string
/// where the rules want an integer.
fn too_long_number(value: &Value) -> Option<Diagnostic> {
    let (path, number) =
        value.first_where(|v| matches!(v, Value::Int(i) if !fits_dynamo_number(i)))?;
    let Value::Int(number) = number else {
        return None;
    };
    let digits = number.to_string().trim_start_matches('-').len();
    let message = format!(
        "{} is {number}, {digits} digits; a DynamoDB number holds at most {DYNAMO_NUMBER_DIGITS}, so it cannot be stored",
        if path.is_empty() { "the body" } else { &path }
    );
    Some(Diagnostic::error(path, message))
}
