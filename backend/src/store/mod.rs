//! Where endpoint records live: one trait, two implementations with the same
//! semantics (conditional create, conditional update of the attributes a
//! change touches, full scans), checked by one conformance suite.

mod attr;
mod dynamo;
mod embedded;
pub mod history;
pub mod listing;
mod open;
mod shared_scan;
pub mod sign_outs;
mod update_expression;
pub mod view;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use gco_api::HistoryEntry;
use gco_spec::Record;
use gco_spec::json::Value;

use crate::audit::{AuditFilter, AuditRead, Position};
use listing::{Filter, Listing, Page};

pub use dynamo::{AUDIT_INDEX, DynamoConfig, DynamoStore, HistoryState};
pub use embedded::EmbeddedStore;
pub use history::{Author, Span};
pub use open::{Location, Opened, open};
pub use sign_outs::SignOuts;
pub use view::{Freshness, ViewedStore};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Create: an endpoint with this name exists.
    AlreadyExists,
    /// Update: the record changed, vanished or was deleted since it was read.
    ConditionFailed,
    /// The store failed or could not be reached; a write may or may not
    /// have been applied. The text is for the log, never for clients.
    Unavailable(String),
    /// The store answered with an error and wrote nothing (a missing table,
    /// denied access). The text is for the log.
    Rejected(String),
    /// A stored item is not a readable record.
    Corrupt(Unreadable),
    /// The store wrote nothing, for a reason a client may read: the
    /// history table is missing or throttled (its name and the reason,
    /// never credentials or items).
    NotSaved(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::AlreadyExists => f.write_str("already exists"),
            StoreError::ConditionFailed => f.write_str("condition failed"),
            StoreError::Unavailable(e) => write!(f, "store unavailable: {e}"),
            StoreError::Rejected(e) => write!(f, "store refused the call: {e}"),
            StoreError::Corrupt(u) => write!(f, "unreadable item {:?}: {u}", u.endpoint_name),
            StoreError::NotSaved(reason) => write!(f, "not saved: {reason}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// What an update requires of the stored record: optimistic concurrency on
/// `updated_at`, the same lifecycle, and (unless deleting) not deleted, all
/// as in `read`, the record the change was made to.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub read: &'a Record,
    pub allow_deleted: bool,
}

impl<'a> Expected<'a> {
    pub fn of(read: &'a Record, allow_deleted: bool) -> Expected<'a> {
        Expected {
            read,
            allow_deleted,
        }
    }

    /// Whether `stored` still meets the expectation.
    pub fn holds_for(&self, stored: &Record) -> bool {
        stored.updated_at == self.read.updated_at
            && stored.lifecycle_id == self.read.lifecycle_id
            && (self.allow_deleted || stored.desired_state != gco_spec::DesiredState::Deleted)
    }

    /// The [`MUTABLE_ATTRIBUTES`] of `next` whose stored form differs from
    /// the read record's: what an update writes. An attribute the change
    /// left alone is not rewritten, so what another writer keeps there (in a
    /// form the console reads but could not write back the same) stays as
    /// stored.
    pub fn changed_attributes(&self, next: &Storable) -> Vec<ChangedAttribute> {
        let before = storable(self.read);
        let before = before.as_object();
        MUTABLE_ATTRIBUTES
            .into_iter()
            .filter_map(|name| {
                let new = next.item().get(name)?;
                let old = before.and_then(|b| b.get(name));
                // The version always moves, so a write is never empty.
                let changed = name == "updated_at" || old != Some(new);
                changed.then(|| ChangedAttribute {
                    name,
                    old: old.cloned(),
                    new: new.clone(),
                })
            })
            .collect()
    }
}

/// An attribute an update writes: its value in the stored form of the record
/// that was read (`None` when it had none), and the one it gets.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedAttribute {
    pub name: &'static str,
    pub old: Option<Value>,
    pub new: Value,
}

/// The attributes an operation may change. Everything else (notably
/// `region_status`, which the monitors write) is left as stored.
pub const MUTABLE_ATTRIBUTES: [&str; 8] = [
    "desired_state",
    "target_regions",
    "spec",
    "updated_at",
    "cleanup_regions",
    "region_generations",
    "deletion_generation",
    "deletion_regions",
];

/// A stored item that is no record this service can read (another writer's,
/// say, with a state it does not know): a list reports it by name rather
/// than fail whole or pass it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub endpoint_name: String,
    /// The field at fault, or "" when the item is not a record at all.
    pub path: String,
    pub message: String,
}

impl Unreadable {
    fn new(endpoint_name: &str, path: &str, message: impl Into<String>) -> Unreadable {
        Unreadable {
            endpoint_name: endpoint_name.to_owned(),
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// An item whose stored text (the embedded store's) is not JSON.
    fn not_json(endpoint_name: &str, e: impl std::fmt::Display) -> Unreadable {
        Unreadable::new(
            endpoint_name,
            "",
            format!("the stored text is not JSON: {e}"),
        )
    }
}

/// `path: message`, or the message alone when no field is at fault.
impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Every item of a store: the records, and the items that are none.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub records: Vec<Arc<Stored>>,
    pub unreadable: Vec<Unreadable>,
}

/// A record as stored, with the JSON text a read returns.
#[derive(Debug)]
pub struct Stored {
    pub record: Record,
    pub json: String,
    /// [`Stored::etag`], made on first use: a record a store keeps ready
    /// (the embedded store's cache) is digested once, not on every read.
    etag: OnceLock<String>,
}

impl Stored {
    pub fn of(record: Record) -> Stored {
        let json = record.to_value().to_json();
        Stored::new(record, json)
    }

    /// `record` as read from `json`, its stored text.
    pub fn new(record: Record, json: String) -> Stored {
        Stored {
            record,
            json,
            etag: OnceLock::new(),
        }
    }

    /// The version clients hold (see [`crate::version`]).
    pub fn etag(&self) -> &str {
        self.etag
            .get_or_init(|| crate::version::etag(&self.record, &self.json))
    }
}

/// The record and its text; the tag follows from them.
impl PartialEq for Stored {
    fn eq(&self, other: &Stored) -> bool {
        self.record == other.record && self.json == other.json
    }
}

/// A write answers the record as the next read of it returns it (with its
/// JSON, byte for byte), so a client holds what is stored, not what was sent.
///
/// Every write is a change `by` someone: when the store records history
/// ([`Store::records_history`]), the change's entry is written in the same
/// transaction as the record (see [`history`]), or neither is.
pub trait Store: Send + Sync + 'static {
    /// Writes a new record; [`StoreError::AlreadyExists`] when the name is taken.
    fn create<'a>(
        &'a self,
        write: &'a Storable,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>>;
    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>>;
    /// Writes the [`MUTABLE_ATTRIBUTES`] of `write` when `expected` holds,
    /// else [`StoreError::ConditionFailed`] and nothing changes.
    fn update<'a>(
        &'a self,
        write: &'a Storable,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>>;

    /// Whether each write records its history entry (false with
    /// `--history-table off`).
    fn records_history(&self) -> bool;

    /// The stored history entries of endpoint `name` in `span`, at most
    /// `limit` of them; none when no history is recorded.
    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>>;
    /// Keeps `entry` in endpoint `name`'s history unless an entry with its
    /// id is there, and answers the one kept: a change made outside the
    /// console, kept as first found (see `Service::history`), so every
    /// reader after it, at any console and after restarts, shows the same
    /// time window. Writes no record.
    fn keep_entry<'a>(
        &'a self,
        name: &'a str,
        entry: &'a HistoryEntry,
    ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>>;

    /// The audit view's changes ([`crate::audit`]): those `filter` admits
    /// strictly below `below`, newest first, at most `limit`, read by time
    /// (never a scan of the history), with where the next page begins. A
    /// store that records no history has none.
    fn audit<'a>(
        &'a self,
        filter: &'a AuditFilter,
        below: Option<&'a Position>,
        limit: usize,
    ) -> BoxFuture<'a, Result<AuditRead, StoreError>> {
        let _ = (filter, below, limit);
        Box::pin(std::future::ready(Ok(AuditRead::default())))
    }

    /// Every record (all pages), with its JSON as a read of it answers, and
    /// every item that is none.
    fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>>;

    /// The records `filter` admits, in the list's order, one `page` of them
    /// (see [`listing`]), with the unreadable items on the first page: by
    /// default every record, then a selection. A store that keeps its
    /// records in that order reads only the page.
    fn list_page<'a>(
        &'a self,
        filter: &'a Filter<'a>,
        page: &'a Page,
    ) -> BoxFuture<'a, Result<Listing, StoreError>> {
        page_of_all(self, filter, page)
    }

    /// A record with its JSON, for reads that send it on as it is. Stores
    /// that can keep it ready (the embedded one caches it) do so.
    fn get_stored<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        Box::pin(async move { Ok(self.get(name).await?.map(|r| Arc::new(Stored::of(r)))) })
    }

    /// A record for a read that need not be the current version (a page
    /// showing it): at most one refresh interval old. By default the
    /// current one.
    fn peek<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        self.get_stored(name)
    }

    /// How current lists are, for a store that answers them from a copy
    /// ([`view::ViewedStore`]); `None` when they are read whole each time.
    fn freshness(&self) -> Option<view::Freshness> {
        None
    }

    /// Since when the table cannot be read, while a store that keeps a
    /// copy of it ([`view::ViewedStore`]) finds it so; `None` otherwise.
    fn unreadable_since(&self) -> Option<std::time::SystemTime> {
        None
    }
}

/// A page picked from every record: [`Store::list_page`] of a store that
/// keeps no index in the list's order.
pub fn page_of_all<'a, S: Store + ?Sized>(
    store: &'a S,
    filter: &'a Filter<'a>,
    page: &'a Page,
) -> BoxFuture<'a, Result<Listing, StoreError>> {
    Box::pin(async move {
        let scan = store.list().await?;
        Ok(listing::select(scan.records, filter, page).reporting(page, || scan.unreadable))
    })
}

/// The largest item DynamoDB keeps: 400 KB, attribute names included.
/// Both stores refuse a larger record the same way (a 422 at its largest
/// part), so the embedded store holds nothing GCO's table could not.
pub const MAX_ITEM_BYTES: usize = 400 * 1024;

/// A record over [`MAX_ITEM_BYTES`] as DynamoDB counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized {
    pub bytes: usize,
    /// Its largest part: an attribute, or a field of the spec when the
    /// spec is the largest attribute.
    pub part: String,
    pub part_bytes: usize,
}

/// Each attribute of an item (or entry of a map) with its size, its name
/// included.
fn sized_parts(o: &gco_spec::json::Object) -> Vec<(String, usize)> {
    o.str_entries()
        .map(|(k, v)| {
            let k = k.to_string_lossy();
            let n = k.len() + attr::attr_size(v);
            (k, n)
        })
        .collect()
}

impl Oversized {
    fn of(item: &gco_spec::json::Object) -> Option<Oversized> {
        let bytes = bytes_of(item);
        if bytes <= MAX_ITEM_BYTES {
            return None;
        }
        let largest = |parts: Vec<(String, usize)>| parts.into_iter().max_by_key(|(_, n)| *n);
        let (mut part, mut part_bytes) = largest(sized_parts(item))?;
        if let Some(spec) = item.get("spec").and_then(Value::as_object)
            && part == "spec"
            && let Some(field) = largest(sized_parts(spec))
        {
            (part, part_bytes) = field;
        }
        Some(Oversized {
            bytes,
            part,
            part_bytes,
        })
    }

    pub fn message(&self) -> String {
        format!(
            "{} takes {} bytes and makes the record {} bytes; a DynamoDB item holds at most {MAX_ITEM_BYTES}",
            self.part, self.part_bytes, self.bytes
        )
    }
}

/// The record as it is stored: GCO writes floats as strings (DynamoDB numbers
/// would turn them into `Decimal`), so both stores do, and a float comes back
/// as its string as it does for GCO's own readers. So do integers too long
/// for a DynamoDB number, which GCO cannot write at all: the service refuses
/// them in what it is sent, and one read from elsewhere (an embedded store
/// an older console wrote) keeps its digits as a string, not rounded.
pub fn storable(record: &Record) -> Value {
    numbers_as_stored(record.to_value())
}

/// A record to write with its stored form ([`storable`]), made once: the
/// size checks, the write and its history entry all read this one.
#[derive(Debug, Clone)]
pub struct Storable {
    record: Record,
    item: Value,
}

impl Storable {
    pub fn of(record: Record) -> Storable {
        let item = storable(&record);
        Storable { record, item }
    }

    pub fn record(&self) -> &Record {
        &self.record
    }

    /// The item's attributes.
    pub fn item(&self) -> &gco_spec::json::Object {
        self.item.as_object().expect("a record is an object")
    }

    /// The item as one value.
    pub fn value(&self) -> &Value {
        &self.item
    }

    /// How it is over [`MAX_ITEM_BYTES`], when it is.
    pub fn oversized(&self) -> Option<Oversized> {
        Oversized::of(self.item())
    }
}

/// The record's size as DynamoDB counts it against [`MAX_ITEM_BYTES`].
pub fn item_bytes(record: &Record) -> usize {
    bytes_of(storable(record).as_object().expect("a record is an object"))
}

fn bytes_of(item: &gco_spec::json::Object) -> usize {
    sized_parts(item).iter().map(|(_, n)| n).sum()
}

pub(crate) use gco_spec::table::fits_number as fits_dynamo_number;

fn numbers_as_stored(v: Value) -> Value {
    match v {
        Value::Float(f) => Value::from(gco_spec::json::float_repr(f)),
        Value::Int(i) if !fits_dynamo_number(&i) => Value::from(i.to_string()),
        Value::List(items) => Value::List(items.into_iter().map(numbers_as_stored).collect()),
        Value::Object(o) => {
            let mut out = gco_spec::json::Object::new();
            for (k, v) in o.str_entries() {
                out.insert(&k.to_string_lossy(), numbers_as_stored(v.clone()));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// The record stored under `name`, or why it is none.
pub fn read_item(name: &str, value: &Value) -> Result<Record, Unreadable> {
    Record::from_value(value).map_err(|e| Unreadable::new(name, e.field, e.message))
}
