//! The history of every change the console writes: one entry per change,
//! written by the store in the same transaction as the record (DynamoDB's
//! TransactWriteItems, one redb write transaction), so there is no record
//! change without its entry and a failed entry write changes nothing.
//!
//! An entry holds who made the change ([`Author`]), when, the operation,
//! the request's id, and the record's content before and after it: the
//! stored record without what GCO's monitors write (`region_status`,
//! `updated_at`), so their status writes make no entry and change no
//! content. Entry ids sort by time (`2026-12-06T19:30:00.123456Z.8f2a61c0`,
//! the change's time and 8 random hex digits), so a later change of an
//! endpoint has a greater id.

use gco_api::HistoryEntry;
use gco_spec::json::{Object, Value};

/// Who made a change, and which change: what its history entry says
/// besides the record's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// The verified identity's name.
    pub who: String,
    /// `deploy`, `revert`, or the change's name (`gco_spec::Change::name`).
    pub operation: String,
    /// The request's id, the console's own (`x-request-id`).
    pub request_id: Option<String>,
    /// The `X-Request-Id` the client sent, as given.
    pub client_request_id: Option<String>,
}

impl Author {
    pub fn new(who: &str, operation: &str, request_id: Option<&str>) -> Author {
        Author {
            who: who.to_owned(),
            operation: operation.to_owned(),
            request_id: request_id.map(str::to_owned),
            client_request_id: None,
        }
    }

    /// With the `X-Request-Id` the client sent.
    pub fn with_client_request_id(mut self, id: Option<&str>) -> Author {
        self.client_request_id = id.map(str::to_owned);
        self
    }
}

/// Which stored entries of an endpoint a read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span<'a> {
    /// Newest first: those with an id below the one given (every one
    /// without).
    Older(Option<&'a str>),
    /// Oldest first: those with an id from the one given on.
    From(&'a str),
}

/// The attributes a record's content leaves out: GCO's monitors write
/// them (every status write moves `updated_at`).
pub const NOT_CONTENT: [&str; 2] = ["region_status", "updated_at"];

/// A stored record's content: `item` (the record as stored, as a read
/// returns it) without [`NOT_CONTENT`].
pub fn content(item: &Value) -> Value {
    let mut item = item.clone();
    if let Some(o) = item.as_object_mut() {
        for name in NOT_CONTENT {
            o.remove(name);
        }
    }
    item
}

/// Whether two contents are the same record: maps compared by their keys,
/// not their order (a DynamoDB map has none).
pub fn same_content(a: &Value, b: &Value) -> bool {
    a == b || a.with_sorted_keys() == b.with_sorted_keys()
}

/// A stored entry id's length: `YYYY-MM-DDTHH:MM:SS.ffffffZ.xxxxxxxx`.
pub const ID_LENGTH: usize = 36;

/// A new entry's id for a change written at `at` (GCO's timestamp; the
/// clock's time when it is none).
pub fn new_id(at: &str) -> String {
    let micros = gco_spec::time::parse_timestamp(at).unwrap_or_else(crate::clock::unix_micros);
    let time = gco_spec::time::format_timestamp(micros);
    let time = time.strip_suffix("+00:00").unwrap_or(&time);
    let mut random = [0u8; 4];
    getrandom::fill(&mut random).expect("the OS random source is available");
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("{time}Z.{hex}")
}

/// The entry a change makes.
pub fn entry(
    author: &Author,
    at: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> HistoryEntry {
    HistoryEntry {
        id: new_id(at),
        at: at.to_owned(),
        since: None,
        who: Some(author.who.clone()),
        operation: author.operation.clone(),
        request_id: author.request_id.clone(),
        client_request_id: author.client_request_id.clone(),
        before,
        after,
    }
}

/// An entry as the embedded store keeps it: a JSON object.
pub fn to_value(entry: &HistoryEntry) -> Value {
    let mut o = Object::new();
    o.insert("id", entry.id.as_str());
    o.insert("at", entry.at.as_str());
    if let Some(since) = &entry.since {
        o.insert("since", since.as_str());
    }
    o.insert("who", entry.who.as_deref().map_or(Value::Null, Value::str));
    o.insert("operation", entry.operation.as_str());
    if let Some(id) = &entry.request_id {
        o.insert("request_id", id.as_str());
    }
    if let Some(id) = &entry.client_request_id {
        o.insert("client_request_id", id.as_str());
    }
    o.insert("before", entry.before.clone().unwrap_or(Value::Null));
    o.insert("after", entry.after.clone().unwrap_or(Value::Null));
    Value::Object(o)
}

/// An entry read back from [`to_value`]'s object; `None` when it is none.
pub fn from_value(v: &Value) -> Option<HistoryEntry> {
    let o = v.as_object()?;
    let text = |key: &str| o.get(key).and_then(Value::as_str).map(str::to_owned);
    let content = |key: &str| o.get(key).filter(|v| !matches!(v, Value::Null)).cloned();
    Some(HistoryEntry {
        id: text("id")?,
        at: text("at")?,
        since: text("since"),
        who: text("who"),
        operation: text("operation")?,
        request_id: text("request_id"),
        client_request_id: text("client_request_id"),
        before: content("before"),
        after: content("after"),
    })
}

/// The most bytes an entry's content takes: a DynamoDB item holds 400 KB,
/// and an entry holds the record twice (before and after) as JSON text,
/// with room for the rest of the entry.
pub const MAX_ENTRY_CONTENT_BYTES: usize = super::MAX_ITEM_BYTES - 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use gco_spec::json::parse;

    #[test]
    fn ids_sort_by_time_and_are_fixed_width() {
        let a = new_id("2026-12-06T19:30:00.000001+00:00");
        let b = new_id("2026-12-06T19:30:00.000002+00:00");
        let c = new_id("2026-12-06T19:30:01+00:00");
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(a.len(), ID_LENGTH);
        assert!(a.starts_with("2026-12-06T19:30:00.000001Z."), "{a}");
        assert!(gco_api::is_entry_id(&a));
    }

    #[test]
    fn content_leaves_out_what_the_monitors_write() {
        let item = parse(r#"{"endpoint_name": "e", "updated_at": "t", "region_status": {"x": 1}, "spec": {"b": 1, "a": 2}}"#).unwrap();
        let c = content(&item);
        assert_eq!(
            c.to_json(),
            r#"{"endpoint_name": "e", "spec": {"b": 1, "a": 2}}"#
        );
        let reordered = parse(r#"{"spec": {"a": 2, "b": 1}, "endpoint_name": "e"}"#).unwrap();
        assert!(same_content(&c, &reordered));
        assert!(!same_content(&c, &item));
    }

    #[test]
    fn entries_read_back() {
        let author =
            Author::new("ada", "scale", Some("req-1")).with_client_request_id(Some("ci-7"));
        let e = entry(
            &author,
            "2026-12-06T19:30:00.000001+00:00",
            None,
            Some(parse(r#"{"a": 1}"#).unwrap()),
        );
        assert_eq!(from_value(&to_value(&e)), Some(e));
    }
}
