//! One view of the table per console process, so the table's read cost is
//! set by its size and the refresh interval, not by how many people look.
//!
//! Every open list page asks for the list every few seconds. Read from the
//! table each time, N viewers scan it N times per interval, paid in read
//! units and in throttling GCO's own monitors then share. [`ViewedStore`]
//! answers lists, and the reads of pages that need not be current, from
//! one in-memory copy of the table: a background refresh re-reads it at
//! most once per interval, and only while someone asked within the last
//! two intervals, so an idle console reads nothing. A write through this
//! console goes into the copy at once (its own writes read back); a write
//! made elsewhere (GCO's monitors, its CLI) shows within one interval.
//! A change still reads the current version from the table (its condition
//! needs it). A refresh that fails keeps the last copy, marked stale with
//! its age, and is retried with backoff; a list is never answered from a
//! half-read table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Author, BoxFuture, Expected, Scan, Span, Store, StoreError, Stored, Unreadable};
use gco_api::HistoryEntry;
use gco_spec::Record;

/// The longest pause between refreshes that keep failing.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How current the view is, for the console to say.
#[derive(Debug, Clone, PartialEq)]
pub struct Freshness {
    /// Seconds since the table was last read whole.
    pub age: Duration,
    /// Why the refreshes since then failed; `None` while they succeed.
    pub failing: Option<String>,
    /// Someone looked within the last two intervals, so the view is kept
    /// fresh: its age is what they see. An idle view only grows older.
    pub watched: bool,
}

/// A store whose lists come from one shared, refreshed copy of `inner`.
pub struct ViewedStore {
    inner: Arc<dyn Store>,
    view: Arc<View>,
}

struct View {
    interval: Duration,
    /// When the process started: the clock the atomics below count from.
    epoch: Instant,
    /// Milliseconds since `epoch` of the last ask.
    last_ask: AtomicU64,
    refresher_running: AtomicBool,
    /// Held while the table is read: one read at a time.
    reading: tokio::sync::Mutex<()>,
    copy: Mutex<Copy>,
}

#[derive(Default)]
struct Copy {
    records: HashMap<String, Arc<Stored>>,
    unreadable: Vec<Unreadable>,
    /// When the last whole read started (what it shows is at least that
    /// current); `None` before the first.
    read_at: Option<Instant>,
    /// Why the reads since `read_at` failed.
    failing: Option<String>,
    /// Writes through this console, counted: a read that started before a
    /// write may miss it, and must not undo it.
    writes: u64,
    /// Each record this console wrote, with the write's count.
    written: HashMap<String, u64>,
    /// The table's size at the last read, which sizes the next one.
    items: usize,
}

impl ViewedStore {
    pub fn new(inner: Arc<dyn Store>, interval: Duration) -> ViewedStore {
        ViewedStore {
            inner,
            view: Arc::new(View {
                interval,
                epoch: Instant::now(),
                last_ask: AtomicU64::new(0),
                refresher_running: AtomicBool::new(false),
                reading: tokio::sync::Mutex::new(()),
                copy: Mutex::new(Copy::default()),
            }),
        }
    }

    /// The view as a list answers it, read first when it is older than one
    /// interval with no refresher keeping it (at start, or after idling).
    async fn scan(&self) -> Result<Scan, StoreError> {
        let view = &self.view;
        view.asked();
        if !view.fresh() {
            view.read(&*self.inner).await?;
        }
        View::keep_fresh(view, &self.inner);
        Ok(view.snapshot())
    }
}

impl View {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn asked(&self) {
        self.last_ask.store(self.now_ms(), Ordering::Relaxed);
    }

    fn copy(&self) -> std::sync::MutexGuard<'_, Copy> {
        self.copy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the copy may answer: read within the interval, or kept by
    /// a refresher (which marks it stale when reads fail).
    fn fresh(&self) -> bool {
        let copy = self.copy();
        match copy.read_at {
            None => false,
            Some(at) => {
                self.refresher_running.load(Ordering::SeqCst) || at.elapsed() <= self.interval
            }
        }
    }

    fn snapshot(&self) -> Scan {
        let copy = self.copy();
        Scan {
            records: copy.records.values().cloned().collect(),
            unreadable: copy.unreadable.clone(),
        }
    }

    fn freshness(&self) -> Option<Freshness> {
        let copy = self.copy();
        Some(Freshness {
            age: copy.read_at?.elapsed(),
            failing: copy.failing.clone(),
            watched: self.refresher_running.load(Ordering::SeqCst),
        })
    }

    /// Reads the whole table into the copy, unless another read that
    /// started after this call was made has done it meanwhile.
    async fn read(&self, inner: &dyn Store) -> Result<(), StoreError> {
        let asked_at = Instant::now();
        let _reading = self.reading.lock().await;
        if self.copy().read_at.is_some_and(|at| at >= asked_at) {
            return Ok(());
        }
        let (started, writes_before) = (Instant::now(), self.copy().writes);
        let result = inner.list().await;
        let mut copy = self.copy();
        match result {
            Ok(scan) => {
                let mut records: HashMap<String, Arc<Stored>> = scan
                    .records
                    .into_iter()
                    .map(|s| (s.record.endpoint_name.clone(), s))
                    .collect();
                // A write of this console made while the table was read may
                // be missing from the read, or in it as an older version.
                for (name, &count) in &copy.written {
                    if count < writes_before {
                        continue;
                    }
                    if let Some(own) = copy.records.get(name)
                        && records
                            .get(name)
                            .is_none_or(|read| read.record.updated_at < own.record.updated_at)
                    {
                        records.insert(name.clone(), Arc::clone(own));
                    }
                }
                copy.written.retain(|_, count| *count >= writes_before);
                copy.items = records.len() + scan.unreadable.len();
                copy.records = records;
                copy.unreadable = scan.unreadable;
                copy.read_at = Some(started);
                copy.failing = None;
                crate::metrics::view_refreshed(true, copy.items);
                Ok(())
            }
            Err(e) => {
                copy.failing = Some(e.to_string());
                crate::metrics::view_refreshed(false, copy.items);
                Err(e)
            }
        }
    }

    /// A write of this console: in the copy at once.
    fn wrote(&self, stored: &Arc<Stored>) {
        let mut copy = self.copy();
        copy.writes += 1;
        let count = copy.writes;
        let name = stored.record.endpoint_name.clone();
        copy.written.insert(name.clone(), count);
        copy.records.insert(name, Arc::clone(stored));
    }

    /// A record read from the table (a change reads the current version):
    /// in the copy unless the copy holds a newer one; `None` (gone) leaves
    /// it out. A page that was refused a change as stale then shows what
    /// refused it.
    fn saw(&self, name: &str, stored: Option<&Arc<Stored>>) {
        let mut copy = self.copy();
        match stored {
            Some(stored) => {
                let newer = copy
                    .records
                    .get(name)
                    .is_none_or(|held| held.record.updated_at <= stored.record.updated_at);
                if newer {
                    copy.records.insert(name.to_owned(), Arc::clone(stored));
                }
            }
            None => {
                copy.records.remove(name);
            }
        }
    }

    /// Starts the refresher unless it runs: it reads the table once per
    /// interval while someone asked within the last two, then stops.
    fn keep_fresh(view: &Arc<View>, inner: &Arc<dyn Store>) {
        if view.refresher_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let (view, inner) = (Arc::clone(view), Arc::clone(inner));
        tokio::spawn(async move {
            let mut pause = view.interval;
            loop {
                tokio::time::sleep(pause).await;
                let idle_ms = view.now_ms() - view.last_ask.load(Ordering::Relaxed);
                if u128::from(idle_ms) > 2 * view.interval.as_millis() {
                    view.refresher_running.store(false, Ordering::SeqCst);
                    // An ask between the check and the store found it
                    // running and started none: start again for it.
                    let asked_since = view.now_ms() - view.last_ask.load(Ordering::Relaxed);
                    if u128::from(asked_since) > 2 * view.interval.as_millis()
                        || view.refresher_running.swap(true, Ordering::SeqCst)
                    {
                        return;
                    }
                }
                pause = match view.read(&*inner).await {
                    Ok(()) => view.interval,
                    Err(e) => {
                        tracing::warn!(error = %e, "refreshing the view of the table failed; serving the last one");
                        (pause * 2).clamp(view.interval, MAX_BACKOFF.max(view.interval))
                    }
                };
            }
        });
    }
}

impl Store for ViewedStore {
    fn create<'a>(
        &'a self,
        record: &'a Record,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let stored = self.inner.create(record, by).await?;
            self.view.wrote(&stored);
            Ok(stored)
        })
    }

    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        self.inner.get(name)
    }

    fn get_stored<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        Box::pin(async move {
            let stored = self.inner.get_stored(name).await?;
            self.view.saw(name, stored.as_ref());
            Ok(stored)
        })
    }

    fn update<'a>(
        &'a self,
        record: &'a Record,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let stored = self.inner.update(record, expected, by).await?;
            self.view.wrote(&stored);
            Ok(stored)
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>> {
        Box::pin(self.scan())
    }

    /// From the view while it is kept fresh; a record it lacks (created
    /// elsewhere since the last read) or a view left idle is read from the
    /// table.
    fn peek<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        Box::pin(async move {
            self.view.asked();
            if self.view.fresh() {
                let found = self.view.copy().records.get(name).cloned();
                if let Some(found) = found {
                    View::keep_fresh(&self.view, &self.inner);
                    return Ok(Some(found));
                }
            }
            self.get_stored(name).await
        })
    }

    fn freshness(&self) -> Option<Freshness> {
        self.view.freshness()
    }

    fn records_history(&self) -> bool {
        self.inner.records_history()
    }

    /// From the table: the history is read only when asked for.
    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
        self.inner.history(name, span, limit)
    }

    /// From the table's index, as the history.
    fn audit<'a>(
        &'a self,
        filter: &'a crate::audit::AuditFilter,
        below: Option<&'a crate::audit::Position>,
        limit: usize,
    ) -> BoxFuture<'a, Result<crate::audit::AuditRead, StoreError>> {
        self.inner.audit(filter, below, limit)
    }
}
