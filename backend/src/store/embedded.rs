//! The embedded store: one redb file, each record a JSON document keyed by
//! name. redb commits are durable (fsync) before they return, so an
//! acknowledged write survives a crash; one writer at a time makes the
//! conditional writes atomic. redb locks its file to one process, so a read
//! cache in front of it, filled at start-up and updated after each commit,
//! stays exact: a list is the cache's records (and unreadable items),
//! without reading the file, and a page is a range of their index in the
//! list's order.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, RwLock};

use gco_api::HistoryEntry;
use gco_spec::Record;
use gco_spec::json;
use redb::{
    Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
    WriteTransaction,
};

use super::history::{self, Author, Span};
use super::listing::{self, Cursor, Filter, Listing, Page};
use super::sign_outs::SignOuts;
use super::{
    BoxFuture, Expected, Scan, Storable, Store, StoreError, Stored, Unreadable, read_item,
};
use crate::audit::{self, AuditFilter, AuditRead, PartRead, Position};

const ENDPOINTS: TableDefinition<&str, &str> = TableDefinition::new("endpoints");
/// The history: (endpoint name, entry id) to the entry as JSON.
const HISTORY: TableDefinition<(&str, &str), &str> = TableDefinition::new("history");
/// The audit view's index: (entry id, endpoint name) to the entry without
/// its contents ([`crate::audit`]), as JSON; written with the entry. An
/// older file (no index, or one an older console wrote past) is indexed
/// again at open.
const AUDIT: TableDefinition<(&str, &str), &str> = TableDefinition::new("history_by_time");
/// Sessions signed out: their digest to their expiry (seconds since the
/// epoch). See [`super::sign_outs`].
const SIGNED_OUT: TableDefinition<&str, u64> = TableDefinition::new("signed_out");
/// Above every entry id (they are ASCII).
const ABOVE_IDS: &str = "\u{10ffff}";

type Cache = Arc<RwLock<Records>>;

/// Every stored item: the records by name and in the list's order (the
/// same records: [`Records::put`] and [`Records::remove`] keep both), and
/// the items that are none. Each stored name is in exactly one of
/// `by_name` and `unreadable`.
#[derive(Default)]
struct Records {
    by_name: HashMap<String, Arc<Stored>>,
    /// Keyed by place, then by stored name: a record written by another
    /// program may repeat another's name and time, and is still listed.
    in_order: BTreeMap<(Cursor, String), Arc<Stored>>,
    unreadable: BTreeMap<String, Unreadable>,
}

impl Records {
    /// Puts what is stored under `name` in the place of what was.
    fn put(&mut self, name: String, stored: Result<Arc<Stored>, Unreadable>) {
        self.remove(&name);
        match stored {
            Ok(stored) => {
                let place = (Cursor::of(&stored.record), name.clone());
                self.in_order.insert(place, Arc::clone(&stored));
                self.by_name.insert(name, stored);
            }
            Err(unreadable) => {
                self.unreadable.insert(name, unreadable);
            }
        }
    }

    fn remove(&mut self, name: &str) {
        if let Some((name, old)) = self.by_name.remove_entry(name) {
            self.in_order.remove(&(Cursor::of(&old.record), name));
        }
        self.unreadable.remove(name);
    }

    fn unreadable(&self) -> Vec<Unreadable> {
        self.unreadable.values().cloned().collect()
    }

    /// The page of the list, read from the index: the records after the
    /// page's cursor, as many as the page holds.
    fn page(&self, filter: &Filter<'_>, page: &Page) -> Listing {
        let after = match &page.after {
            // Every key of the cursor's place sorts after this one.
            Some(c) => self.in_order.range((c.clone(), String::new())..),
            None => self.in_order.range(..),
        };
        let records = after
            .skip_while(|((place, _), _)| page.after.as_ref() == Some(place))
            .map(|(_, stored)| stored);
        listing::select_ordered(records, filter, page.limit).reporting(page, || self.unreadable())
    }
}

pub struct EmbeddedStore {
    db: Arc<Database>,
    cache: Cache,
    /// Whether each write records its history entry.
    history: bool,
}

/// Caches what was just committed as `text`, readable or not, and answers
/// it as reads will.
fn remember(cache: &Cache, name: &str, text: &str) -> Result<Arc<Stored>, StoreError> {
    // Parsed before the lock is taken: readers wait for the insert only.
    let stored = read_stored(name, text).map(Arc::new);
    cache
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .put(name.to_owned(), stored.clone());
    stored.map_err(StoreError::Corrupt)
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

impl EmbeddedStore {
    /// Opens (or creates) `endpoints.redb` in `dir`, recording history.
    pub fn open(dir: &Path) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::open_with(dir, true)
    }

    /// [`EmbeddedStore::open`], recording history or not
    /// (`--history-table off`).
    pub fn open_with(dir: &Path, history: bool) -> Result<EmbeddedStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(unavailable)?;
        let db = Database::create(dir.join("endpoints.redb")).map_err(unavailable)?;
        let txn = db.begin_write().map_err(unavailable)?;
        txn.open_table(ENDPOINTS).map_err(unavailable)?;
        txn.open_table(HISTORY).map_err(unavailable)?;
        txn.open_table(SIGNED_OUT).map_err(unavailable)?;
        index_history(&txn)?;
        txn.commit().map_err(unavailable)?;
        let mut records = Records::default();
        for (name, stored) in scan(&db)? {
            records.put(name, stored.map(Arc::new));
        }
        Ok(EmbeddedStore {
            db: Arc::new(db),
            cache: Arc::new(RwLock::new(records)),
            history,
        })
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Database) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let db = Arc::clone(&self.db);
        tokio::task::spawn_blocking(move || f(&db))
            .await
            .map_err(unavailable)?
    }
}

/// Indexes every history entry by time unless the index holds them all:
/// once for a file written before the index, and for one an older console
/// wrote to since.
fn index_history(txn: &WriteTransaction) -> Result<(), StoreError> {
    let history = txn.open_table(HISTORY).map_err(unavailable)?;
    let mut index = txn.open_table(AUDIT).map_err(unavailable)?;
    if index.len().map_err(unavailable)? == history.len().map_err(unavailable)? {
        return Ok(());
    }
    index.retain(|_, _| false).map_err(unavailable)?;
    for row in history.iter().map_err(unavailable)? {
        let (key, text) = row.map_err(unavailable)?;
        let (name, id) = key.value();
        if let Some(entry) = json::parse(text.value())
            .ok()
            .as_ref()
            .and_then(history::from_value)
        {
            let summary =
                serde_json::to_string(&audit::of_entry(name, &entry)).map_err(unavailable)?;
            index
                .insert((id, name), summary.as_str())
                .map_err(unavailable)?;
        }
    }
    Ok(())
}

/// Writes `author`'s entry for the change of `name` at `at` in `txn`, the
/// record's transaction: both commit, or neither does.
fn record_entry(
    txn: &WriteTransaction,
    name: &str,
    author: &Author,
    at: &str,
    before: Option<json::Value>,
    after: &json::Value,
) -> Result<(), StoreError> {
    let mut table = txn.open_table(HISTORY).map_err(unavailable)?;
    let before = before.map(|b| history::content(&b));
    let mut entry = history::entry(author, at, before, Some(history::content(after)));
    // Ids carry 32 random bits: a second change in the same microsecond
    // draws again.
    while table
        .get((name, entry.id.as_str()))
        .map_err(unavailable)?
        .is_some()
    {
        entry.id = history::new_id(at);
    }
    let text = history::to_value(&entry).to_json();
    table
        .insert((name, entry.id.as_str()), text.as_str())
        .map_err(unavailable)?;
    let summary = serde_json::to_string(&audit::of_entry(name, &entry)).map_err(unavailable)?;
    txn.open_table(AUDIT)
        .map_err(unavailable)?
        .insert((entry.id.as_str(), name), summary.as_str())
        .map_err(unavailable)?;
    Ok(())
}

/// The record stored under `name` as `text`, or why it is none.
fn read_stored(name: &str, text: &str) -> Result<Stored, Unreadable> {
    let value = json::parse(text).map_err(|e| Unreadable::not_json(name, e))?;
    Ok(Stored::new(read_item(name, &value)?, text.to_owned()))
}

/// A stored record's name, and the record as read (or why it could not be).
type Scanned = (String, Result<Stored, Unreadable>);

/// Every stored record.
fn scan(db: &Database) -> Result<Vec<Scanned>, StoreError> {
    let txn = db.begin_read().map_err(unavailable)?;
    let table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
    let mut out = Vec::new();
    for entry in table.iter().map_err(unavailable)? {
        let (name, text) = entry.map_err(unavailable)?;
        let name = name.value().to_owned();
        let stored = read_stored(&name, text.value());
        out.push((name, stored));
    }
    Ok(out)
}

impl Store for EmbeddedStore {
    fn create<'a>(
        &'a self,
        write: &'a Storable,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        let record = write.record();
        let name = record.endpoint_name.clone();
        let item = write.value().clone();
        let text = item.to_json();
        let cache = Arc::clone(&self.cache);
        let (by, at, history) = (by.clone(), record.updated_at.clone(), self.history);
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_write().map_err(unavailable)?;
            {
                let mut table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
                if table.get(name.as_str()).map_err(unavailable)?.is_some() {
                    return Err(StoreError::AlreadyExists);
                }
                table
                    .insert(name.as_str(), text.as_str())
                    .map_err(unavailable)?;
            }
            if history {
                record_entry(&txn, &name, &by, &at, None, &item)?;
            }
            txn.commit().map_err(unavailable)?;
            remember(&cache, &name, &text)
        }))
    }

    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move { Ok(self.get_stored(name).await?.map(|s| s.record.clone())) })
    }

    fn get_stored<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        // Every stored item is cached: a miss is an absence.
        let records = self.cache.read().unwrap_or_else(|e| e.into_inner());
        let found = match records.by_name.get(name) {
            Some(hit) => Ok(Some(Arc::clone(hit))),
            None => match records.unreadable.get(name) {
                Some(unreadable) => Err(StoreError::Corrupt(unreadable.clone())),
                None => Ok(None),
            },
        };
        Box::pin(std::future::ready(found))
    }

    fn update<'a>(
        &'a self,
        write: &'a Storable,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        let record = write.record();
        let name = record.endpoint_name.clone();
        let changed = expected.changed_attributes(write);
        let (read, allow_deleted) = (expected.read.clone(), expected.allow_deleted);
        let cache = Arc::clone(&self.cache);
        let (by, at, history) = (by.clone(), record.updated_at.clone(), self.history);
        Box::pin(self.blocking(move |db| {
            let expected = Expected::of(&read, allow_deleted);
            let txn = db.begin_write().map_err(unavailable)?;
            let (current, merged) = {
                let mut table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
                let current = match table.get(name.as_str()).map_err(unavailable)? {
                    Some(text) => json::parse(text.value())
                        .map_err(|e| StoreError::Corrupt(Unreadable::not_json(&name, e)))?,
                    None => return Err(StoreError::ConditionFailed),
                };
                let stored = read_item(&name, &current).map_err(StoreError::Corrupt)?;
                if !expected.holds_for(&stored) {
                    return Err(StoreError::ConditionFailed);
                }
                let mut merged = current.as_object().cloned().unwrap_or_default();
                for attribute in changed {
                    merged.insert(attribute.name, attribute.new);
                }
                let merged = json::Value::Object(merged);
                table
                    .insert(name.as_str(), merged.to_json().as_str())
                    .map_err(unavailable)?;
                (current, merged)
            };
            if history {
                record_entry(&txn, &name, &by, &at, Some(current), &merged)?;
            }
            txn.commit().map_err(unavailable)?;
            remember(&cache, &name, &merged.to_json())
        }))
    }

    fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>> {
        let records = self.cache.read().unwrap_or_else(|e| e.into_inner());
        let scan = Scan {
            records: records.by_name.values().cloned().collect(),
            unreadable: records.unreadable(),
        };
        Box::pin(std::future::ready(Ok(scan)))
    }

    fn list_page<'a>(
        &'a self,
        filter: &'a Filter<'a>,
        page: &'a Page,
    ) -> BoxFuture<'a, Result<Listing, StoreError>> {
        let records = self.cache.read().unwrap_or_else(|e| e.into_inner());
        Box::pin(std::future::ready(Ok(records.page(filter, page))))
    }

    fn records_history(&self) -> bool {
        self.history
    }

    fn keep_entry<'a>(
        &'a self,
        name: &'a str,
        entry: &'a HistoryEntry,
    ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>> {
        let (name, entry) = (name.to_owned(), entry.clone());
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_write().map_err(unavailable)?;
            let kept = {
                let mut table = txn.open_table(HISTORY).map_err(unavailable)?;
                let key = (name.as_str(), entry.id.as_str());
                let held = table
                    .get(key)
                    .map_err(unavailable)?
                    .map(|text| json::parse(text.value()));
                match held {
                    Some(text) => text
                        .ok()
                        .as_ref()
                        .and_then(history::from_value)
                        .ok_or_else(|| {
                            StoreError::Unavailable(format!(
                                "history entry {} of {name} is unreadable",
                                entry.id
                            ))
                        })?,
                    None => {
                        let text = history::to_value(&entry).to_json();
                        table.insert(key, text.as_str()).map_err(unavailable)?;
                        entry
                    }
                }
            };
            txn.commit().map_err(unavailable)?;
            Ok(kept)
        }))
    }

    fn audit<'a>(
        &'a self,
        filter: &'a AuditFilter,
        below: Option<&'a Position>,
        limit: usize,
    ) -> BoxFuture<'a, Result<AuditRead, StoreError>> {
        self.read_audit(filter.clone(), below.cloned(), limit)
    }

    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
        let (name, history) = (name.to_owned(), self.history);
        let span = match span {
            Span::Older(before) => (true, before.map(str::to_owned)),
            Span::From(from) => (false, Some(from.to_owned())),
        };
        Box::pin(self.blocking(move |db| {
            if !history {
                return Ok(Vec::new());
            }
            let txn = db.begin_read().map_err(unavailable)?;
            let table = txn.open_table(HISTORY).map_err(unavailable)?;
            let name = name.as_str();
            let rows = match &span {
                (true, None) => table.range((name, "")..=(name, ABOVE_IDS)),
                (true, Some(before)) => table.range((name, "")..(name, before.as_str())),
                (false, Some(from)) => table.range((name, from.as_str())..=(name, ABOVE_IDS)),
                (false, None) => unreachable!("a span from nowhere"),
            }
            .map_err(unavailable)?;
            let read = |row: Result<_, redb::StorageError>| -> Result<HistoryEntry, StoreError> {
                let (key, text): (redb::AccessGuard<(&str, &str)>, redb::AccessGuard<&str>) =
                    row.map_err(unavailable)?;
                json::parse(text.value())
                    .ok()
                    .as_ref()
                    .and_then(history::from_value)
                    .ok_or_else(|| {
                        let (name, id) = key.value();
                        StoreError::Unavailable(format!(
                            "history entry {id} of {name} is unreadable"
                        ))
                    })
            };
            if span.0 {
                rows.rev().take(limit).map(read).collect()
            } else {
                rows.take(limit).map(read).collect()
            }
        }))
    }
}

impl EmbeddedStore {
    /// The audit view's read: the index newest first below `below`, every
    /// entry looked at (a local file reads fast: no budget), up to one more
    /// than `limit` admitted.
    fn read_audit(
        &self,
        filter: AuditFilter,
        below: Option<Position>,
        limit: usize,
    ) -> BoxFuture<'_, Result<AuditRead, StoreError>> {
        let history = self.history;
        Box::pin(self.blocking(move |db| {
            if !history {
                return Ok(AuditRead::default());
            }
            let txn = db.begin_read().map_err(unavailable)?;
            let table = txn.open_table(AUDIT).map_err(unavailable)?;
            let low = filter.from_id.clone().unwrap_or_default();
            let high = match (&below, &filter.to_id) {
                (Some(b), Some(t)) if t.as_str() <= b.id.as_str() => (t.clone(), String::new()),
                (Some(b), _) => (b.id.clone(), b.endpoint.clone()),
                (None, Some(t)) => (t.clone(), String::new()),
                (None, None) => (ABOVE_IDS.to_owned(), String::new()),
            };
            let rows = table
                .range((low.as_str(), "")..(high.0.as_str(), high.1.as_str()))
                .map_err(unavailable)?;
            let mut part = PartRead::default();
            for row in rows.rev() {
                let (_, text) = row.map_err(unavailable)?;
                let entry: gco_api::AuditEntry =
                    serde_json::from_str(text.value()).map_err(unavailable)?;
                if filter.admits(&entry) {
                    part.matches.push(entry);
                    if part.matches.len() > limit {
                        part.frontier = part.matches.last().map(Position::of);
                        break;
                    }
                }
            }
            Ok(audit::merge(vec![part], limit))
        }))
    }
}

/// Each sign-out is its own durable commit; the expired ones go with it.
impl SignOuts for EmbeddedStore {
    fn sign_out<'a>(
        &'a self,
        digest: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let digest = digest.to_owned();
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_write().map_err(unavailable)?;
            {
                let mut table = txn.open_table(SIGNED_OUT).map_err(unavailable)?;
                let now = crate::clock::unix_seconds();
                table
                    .retain(|_, expires| expires > now)
                    .map_err(unavailable)?;
                table.insert(digest.as_str(), until).map_err(unavailable)?;
            }
            txn.commit().map_err(unavailable)
        }))
    }

    fn signed_out(&self, now: u64) -> BoxFuture<'_, Result<Vec<(String, u64)>, StoreError>> {
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_read().map_err(unavailable)?;
            let table = txn.open_table(SIGNED_OUT).map_err(unavailable)?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(unavailable)? {
                let (digest, until) = entry.map_err(unavailable)?;
                if until.value() > now {
                    out.push((digest.value().to_owned(), until.value()));
                }
            }
            Ok(out)
        }))
    }
}
