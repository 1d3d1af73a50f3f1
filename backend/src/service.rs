//! The endpoint service: deploys and changes records through a [`Store`]
//! with the core's rules. It knows nothing of HTTP.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gco_api::{HistoryEntry, HistoryPage, Role, operation};
use gco_spec::deploy::DeployCheck;
use gco_spec::json::{Object, Value};
use gco_spec::ops::{Reverted, record_of_content, revert};
use gco_spec::record::CREATED_BY;
use gco_spec::time::{format_timestamp, next_timestamp, parse_timestamp};
use gco_spec::{
    Change, DeployContext, Diagnostic, Frameworks, OpError, Record, Report, apply, new_record,
};

use crate::auth::identity::{Identity, Refusal};
use crate::clock::{pause, unix_micros};
use crate::store::history::{MAX_ENTRY_CONTENT_BYTES, content, same_content};
use crate::store::listing::{Filter, Listing, Page};
use crate::store::{
    Author, Expected, Freshness, Oversized, Span, Store, StoreError, Stored, Unreadable, storable,
};
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
    /// The store failed before anything was written (its error, for the
    /// log).
    Unavailable(StoreError),
    /// A write was sent but the store did not confirm it (it failed or
    /// stopped answering), so it may or may not have landed (its error, for
    /// the log).
    Unconfirmed(StoreError),
    /// A stored item is no record this service reads.
    Corrupt(Unreadable),
    /// The store wrote nothing, for the reason given (the history table
    /// missing or throttled), which names what failed.
    NotSaved(String),
    /// The history could not be read, for the reason given.
    HistoryUnavailable(String),
    /// The console records no history (`--history-table off`).
    HistoryOff,
    /// The endpoint has no history entry of this id.
    NoSuchEntry {
        endpoint: String,
        id: String,
    },
    /// The identity lacks the role the change needs (here: which depends
    /// on the endpoint's state, as a revert's does).
    Forbidden(Refusal),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> ServiceError {
        match e {
            StoreError::Corrupt(unreadable) => ServiceError::Corrupt(unreadable),
            StoreError::NotSaved(reason) => ServiceError::NotSaved(reason),
            // Creates and updates answer the others themselves; a read
            // never does.
            other => ServiceError::Unavailable(other),
        }
    }
}

impl ServiceError {
    /// A failed write: a store that stopped answering may still have applied
    /// it, so the client must not be told that nothing changed.
    fn from_write(e: StoreError) -> ServiceError {
        match e {
            StoreError::Unavailable(_) => ServiceError::Unconfirmed(e),
            other => ServiceError::from(other),
        }
    }
}

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

/// The history's page size when a client names none, and the most it may.
pub const HISTORY_PAGE: usize = 50;
pub use gco_api::MAX_HISTORY_PAGE;

/// The id of a change made outside the console: the id of the entry
/// before it (`0` when none is) with this suffix, so it sorts between
/// that entry and the next.
pub const EXTERNAL_SUFFIX: &str = "~external";

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

    /// Deploys, as `by` (the record's `created_by`); answers the record as
    /// stored.
    pub async fn deploy(&self, request: Value, by: &Actor) -> Result<Arc<Stored>, ServiceError> {
        let check = self.plan(request);
        let Some(deployment) = check.deployment else {
            return Err(ServiceError::Invalid(check.report));
        };
        let name = deployment.endpoint_name.clone();
        let mut record = new_record(
            deployment,
            &format_timestamp(unix_micros()),
            &mut random_token,
        );
        record.extra.insert(CREATED_BY, by.identity.name.as_str());
        refuse_oversized(&record)?;
        self.refuse_oversized_entry(None, &record)?;
        match self
            .store
            .create(&record, &by.author(operation::DEPLOY))
            .await
        {
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

    /// Since when the table cannot be read, while the store finds it so.
    pub fn unreadable_since(&self) -> Option<SystemTime> {
        self.store.unreadable_since()
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
        by: &Actor,
    ) -> Result<Arc<Stored>, ServiceError> {
        let kind = change.kind();
        let author = by.author(kind.as_str());
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
                    operation: kind.operation(),
                });
            }
            if membership {
                computed_on = Some(stored.etag().to_owned());
            }
            let current = &stored.record;
            let now = next_timestamp(unix_micros(), &current.updated_at);
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
            self.refuse_oversized_entry(Some(current), &next)?;
            match self
                .store
                .update(
                    &next,
                    Expected::of(current, matches!(change, Change::Delete { .. })),
                    &author,
                )
                .await
            {
                Ok(written) => return Ok(written),
                // Another write came first: a change (the next read tells,
                // and with `If-Match` answers Stale) or a monitor's status.
                Err(StoreError::ConditionFailed) => pause(Duration::ZERO, MAX_BACKOFF).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy {
            endpoint: name.to_owned(),
            operation: kind.operation(),
        })
    }
}

impl Service {
    /// A change whose history entry no DynamoDB item could hold (the
    /// record twice, before and after), refused while history is recorded.
    fn refuse_oversized_entry(
        &self,
        before: Option<&Record>,
        after: &Record,
    ) -> Result<(), ServiceError> {
        if !self.store.records_history() {
            return Ok(());
        }
        let size = |r: &Record| content(&storable(r)).to_json().len();
        let bytes = before.map_or(0, size) + size(after);
        if bytes <= MAX_ENTRY_CONTENT_BYTES {
            return Ok(());
        }
        let mut report = Report::default();
        report.push(Diagnostic::error(
            "",
            format!(
                "the change's history entry would hold {bytes} bytes of the record (before and after it); a DynamoDB item holds at most {}: a record this large cannot be changed while changes are recorded (--history-table off records none)",
                crate::store::MAX_ITEM_BYTES
            ),
        ));
        Err(ServiceError::Invalid(report))
    }

    /// One page of the endpoint's history, newest first: `limit` stored
    /// entries after the cursor `after` (an entry's id), with the changes
    /// made outside the console found among them (see [`between`]), and the
    /// cursor of the next page. The endpoint may be gone (purged): its
    /// history stays. No record is written; an outside change found since
    /// the newest entry is kept as first found ([`Self::keep_found`]).
    pub async fn history(
        &self,
        name: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<HistoryPage, ServiceError> {
        if !self.store.records_history() {
            return Err(ServiceError::HistoryOff);
        }
        if name.len() > gco_spec::table::MAX_NAME_BYTES {
            return Err(ServiceError::NotFound(name.to_owned()));
        }
        let mut stored = self
            .store
            .history(name, Span::Older(after), limit + 1)
            .await
            .map_err(history_read)?;
        let older = (stored.len() > limit).then(|| stored.pop()).flatten();
        let mut items = Vec::with_capacity(stored.len() + 2);
        if after.is_none() {
            let current = self.store.get_stored(name).await?;
            if current.is_none() && stored.is_empty() {
                return Err(ServiceError::NotFound(name.to_owned()));
            }
            if let Some(found) = newest_external(current.as_deref(), stored.first()) {
                items.push(self.keep_found(name, found).await);
            }
        }
        for (i, entry) in stored.iter().enumerate() {
            items.push(entry.clone());
            let below = match stored.get(i + 1) {
                Some(next) => Some(next),
                None => older.as_ref(),
            };
            items.extend(between(below, entry));
        }
        let next = older.and(stored.last().map(|e| e.id.clone()));
        Ok(HistoryPage { items, next })
    }

    /// The change made outside the console since the newest entry, as the
    /// first history read that found it kept it: its window (`since` to
    /// `at`) is when that reader first saw it, and never widens as GCO's
    /// monitors move `updated_at` or the console changes the endpoint
    /// again. Kept as an entry of its own (its id sorts after the entry it
    /// follows); a later outside change follows it with its own window.
    /// When it cannot be kept, it is shown as found, and logged.
    async fn keep_found(&self, name: &str, found: HistoryEntry) -> HistoryEntry {
        match self.store.keep_entry(name, &found).await {
            Ok(kept) => kept,
            Err(e) => {
                tracing::warn!(error = %e, endpoint = name, "keeping an outside change failed; shown as found");
                found
            }
        }
    }

    /// The record content entry `id` of the endpoint's history left (its
    /// `after`): a stored entry's (an outside change once kept included),
    /// or a change made outside the console not yet kept.
    async fn entry_after(&self, name: &str, id: &str) -> Result<Option<Value>, ServiceError> {
        let no_such = || ServiceError::NoSuchEntry {
            endpoint: name.to_owned(),
            id: id.to_owned(),
        };
        let found = self
            .store
            .history(name, Span::From(id), 1)
            .await
            .map_err(history_read)?;
        if let Some(entry) = found.into_iter().next().filter(|e| e.id == id) {
            return Ok(entry.after);
        }
        let Some(base) = id.strip_suffix(EXTERNAL_SUFFIX) else {
            return Err(no_such());
        };
        // The external change between entry `base` (none: "0") and the
        // next stored one, or the current record.
        let around = self
            .store
            .history(name, Span::From(base), 2)
            .await
            .map_err(history_read)?;
        let mut around = around.into_iter().peekable();
        let older = match around.peek() {
            Some(entry) if entry.id == base => around.next(),
            _ if base == "0" => None,
            _ => return Err(no_such()),
        };
        let external = match around.next() {
            Some(newer) => between(older.as_ref(), &newer),
            None => {
                let current = self.store.get_stored(name).await?;
                newest_external(current.as_deref(), older.as_ref())
            }
        };
        match external {
            Some(external) if external.id == id => Ok(external.after),
            _ => Err(no_such()),
        }
    }

    /// Puts the endpoint back as history entry `to` left it (see
    /// [`gco_spec::ops::revert`]), with `If-Match` as any change. A gone
    /// (purged) endpoint is deployed again from it, which needs the admin
    /// role; otherwise the operator role. Answers the record and whether it
    /// was created.
    pub async fn revert(
        &self,
        name: &str,
        to: &str,
        if_match: Option<&str>,
        by: &Actor,
    ) -> Result<(Arc<Stored>, bool), ServiceError> {
        if !self.store.records_history() {
            return Err(ServiceError::HistoryOff);
        }
        let Some(after) = self.entry_after(name, to).await? else {
            return Err(ServiceError::Refused(OpError {
                kind: gco_spec::OpErrorKind::Invalid,
                path: "to".into(),
                message: format!("Entry '{to}' left no endpoint '{name}' to put back"),
            }));
        };
        let target = record_of_content(&after).map_err(ServiceError::Refused)?;
        let author = by.author(operation::REVERT);
        for _ in 0..MAX_ATTEMPTS {
            let current = self.store.get_stored(name).await?;
            let since = match &current {
                None => {
                    by.require(
                        Role::Admin,
                        "deploying a deleted endpoint again from its history",
                    )?;
                    if if_match.is_some() {
                        return Err(ServiceError::Stale);
                    }
                    // After the newest entry, whatever the clock says.
                    let newest = self
                        .store
                        .history(name, Span::Older(None), 1)
                        .await
                        .map_err(history_read)?;
                    newest.first().map(|e| e.at.clone()).unwrap_or_default()
                }
                // The operator role the route needs is checked before.
                Some(stored) => {
                    if if_match.is_some_and(|tags| !if_match_holds(tags, stored.etag())) {
                        return Err(ServiceError::Stale);
                    }
                    stored.record.updated_at.clone()
                }
            };
            let now = next_timestamp(unix_micros(), &since);
            let read = current.as_ref().map(|s| &s.record);
            let reverted =
                revert(read, &target, &now, &mut random_token).map_err(ServiceError::Refused)?;
            let written = match (reverted, &current) {
                (Reverted::Created(mut record), _) => {
                    record.extra.insert(CREATED_BY, by.identity.name.as_str());
                    refuse_oversized(&record)?;
                    self.refuse_oversized_entry(None, &record)?;
                    match self.store.create(&record, &author).await {
                        Ok(stored) => return Ok((stored, true)),
                        // Deployed meanwhile: read it again.
                        Err(StoreError::AlreadyExists) => continue,
                        Err(e) => Err(e),
                    }
                }
                (Reverted::Updated(mut next), Some(stored)) => {
                    let now =
                        std::mem::replace(&mut next.updated_at, stored.record.updated_at.clone());
                    if next == stored.record {
                        return Ok((Arc::clone(stored), false));
                    }
                    next.updated_at = now;
                    refuse_oversized(&next)?;
                    self.refuse_oversized_entry(Some(&stored.record), &next)?;
                    self.store
                        .update(&next, Expected::of(&stored.record, false), &author)
                        .await
                }
                (Reverted::Updated(_), None) => unreachable!("an update of no record"),
            };
            match written {
                Ok(stored) => return Ok((stored, false)),
                Err(StoreError::ConditionFailed) => pause(Duration::ZERO, MAX_BACKOFF).await,
                Err(e) => return Err(ServiceError::from_write(e)),
            }
        }
        Err(ServiceError::Busy {
            endpoint: name.to_owned(),
            operation: gco_spec::ops::revert::OPERATION,
        })
    }
}

impl Service {
    /// The audit view's changes ([`crate::audit`]): those `filter` admits
    /// below `after`, newest first, at most `limit`.
    pub async fn audit(
        &self,
        filter: &crate::audit::AuditFilter,
        after: Option<&crate::audit::Position>,
        limit: usize,
    ) -> Result<crate::audit::AuditRead, ServiceError> {
        if !self.store.records_history() {
            return Err(ServiceError::HistoryOff);
        }
        // A cursor below the range's start (a client's own) has nothing
        // under it; the stores' ranges assume one above it.
        if let (Some(from), Some(after)) = (&filter.from_id, after)
            && after.id < *from
        {
            return Ok(crate::audit::AuditRead::default());
        }
        self.store
            .audit(filter, after, limit)
            .await
            .map_err(history_read)
    }
}

/// A failed history read, with the reason a client may read when the
/// store gave one.
fn history_read(e: StoreError) -> ServiceError {
    match e {
        StoreError::NotSaved(reason) => ServiceError::HistoryUnavailable(reason),
        other => ServiceError::from(other),
    }
}

/// Whether `later` is the content `earlier` left, or that content as GCO's
/// monitors leave it once every region runs: they promote a classic
/// endpoint's `desired_state` from `deploying` to `running` (as they write
/// status), which is no change anyone made.
fn unchanged(earlier: &Value, later: &Value) -> bool {
    if same_content(earlier, later) {
        return true;
    }
    let state = |v: &Value| {
        v.as_object()
            .and_then(|o| o.get("desired_state"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if state(earlier).as_deref() != Some("deploying") || state(later).as_deref() != Some("running")
    {
        return false;
    }
    let mut promoted = earlier.clone();
    if let Some(o) = promoted.as_object_mut() {
        o.insert("desired_state", "running");
    }
    same_content(&promoted, later)
}

/// Whether a record's content is a deleted endpoint's.
fn is_deleted(content: &Value) -> bool {
    content
        .as_object()
        .and_then(|o| o.get("desired_state"))
        .and_then(Value::as_str)
        == Some("deleted")
}

/// A change made outside the console, between entry `older` (none: the
/// endpoint's first known content) and the content `after` that a newer
/// change found (or the record holds now), no later than `at`.
fn external(older: Option<&HistoryEntry>, at: String, after: Option<Value>) -> HistoryEntry {
    HistoryEntry {
        id: format!("{}{EXTERNAL_SUFFIX}", older.map_or("0", |e| e.id.as_str())),
        at,
        since: older.map(|e| e.at.clone()),
        who: None,
        operation: operation::EXTERNAL.to_owned(),
        request_id: None,
        client_request_id: None,
        before: older.and_then(|e| e.after.clone()),
        after,
    }
}

/// The change made outside the console between two stored entries, when
/// the newer one found another content than the older one left: a
/// `before` that is not the older entry's `after`. A create after a
/// deleted endpoint is none (GCO's monitors purged it in between).
fn between(older: Option<&HistoryEntry>, newer: &HistoryEntry) -> Option<HistoryEntry> {
    let left = older.and_then(|e| e.after.as_ref());
    let found = newer.before.as_ref();
    let same = match (left, found) {
        (Some(a), Some(b)) => unchanged(a, b),
        (None, None) => true,
        (Some(a), None) => is_deleted(a),
        (None, Some(_)) => false,
    };
    (!same).then(|| external(older, newer.at.clone(), found.cloned()))
}

/// The change made outside the console since the newest entry, when the
/// record's content is not what that entry left: no later than the
/// record's `updated_at` (every writer sets it), or than now. A record
/// gone after it was deleted is none (purged).
fn newest_external(
    current: Option<&Stored>,
    newest: Option<&HistoryEntry>,
) -> Option<HistoryEntry> {
    let left = newest.and_then(|e| e.after.as_ref());
    let now = || format_timestamp(unix_micros());
    match current {
        Some(stored) => {
            let content = content(&stored.record.to_value());
            if left.is_some_and(|a| unchanged(a, &content)) {
                return None;
            }
            let since = newest.map(|e| e.at.as_str()).and_then(parse_timestamp);
            let updated = parse_timestamp(&stored.record.updated_at);
            let at = match (updated, since) {
                (Some(u), Some(s)) if u >= s => stored.record.updated_at.clone(),
                (Some(_), None) => stored.record.updated_at.clone(),
                _ => now(),
            };
            Some(external(newest, at, Some(content)))
        }
        None => match left {
            Some(a) if !is_deleted(a) => Some(external(newest, now(), None)),
            _ => None,
        },
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
