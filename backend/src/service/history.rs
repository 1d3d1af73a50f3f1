//! An endpoint's history, with the changes made outside the console found
//! between its entries, and the audit view across endpoints.

use gco_api::{HistoryEntry, HistoryPage, operation};
use gco_spec::json::Value;
use gco_spec::time::{format_timestamp, parse_timestamp};

use crate::clock::unix_micros;
use crate::store::history::{content, same_content};
use crate::store::{Span, StoreError, Stored};

use super::{Service, ServiceError};

/// The history's page size when a client names none, and the most it may.
pub const HISTORY_PAGE: usize = 50;

pub use gco_api::MAX_HISTORY_PAGE;

/// The id of a change made outside the console: the id of the entry
/// before it (`0` when none is) with this suffix, so it sorts between
/// that entry and the next.
pub const EXTERNAL_SUFFIX: &str = "~external";

impl Service {
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
    pub(super) async fn entry_after(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Option<Value>, ServiceError> {
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
pub(super) fn history_read(e: StoreError) -> ServiceError {
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
