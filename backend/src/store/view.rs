//! One view of the table per console process, so the table's read cost is
//! set by its size and the refresh interval, not by how many people look.
//!
//! Every open list page asks for the list every few seconds. Read from the
//! table each time, N viewers scan it N times per interval, paid in read
//! units and in throttling GCO's own monitors then share. [`ViewedStore`]
//! answers lists, and the reads of pages that need not be current, from
//! one in-memory copy of the table ([`Snapshot`]): one refresher task
//! re-reads it once per interval while someone asked within the last two
//! intervals, and waits for the next ask otherwise
//! (woken through a [`Notify`]), so an idle console reads nothing. A write
//! through this console goes into the copy at once (its own writes read
//! back); a write made elsewhere (GCO's monitors, its CLI) shows within
//! one interval. A change still reads the current version from the table
//! (its condition needs it). A refresh that fails keeps the last copy,
//! marked stale with when the reads began to fail, and is tried again
//! every second (at most every interval), so the copy is current again
//! soon after the table returns; a list is never answered from a
//! half-read table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::{
    Author, BoxFuture, Expected, Scan, Span, Storable, Store, StoreError, Stored, Unreadable,
};
use gco_api::HistoryEntry;
use gco_spec::Record;

/// The pause before another read while reads fail, when the interval is
/// longer: a failed read costs the table nothing, and the pages say the
/// table cannot be read until one succeeds, so the next read comes soon
/// after the table returns.
const RETRY_WHILE_FAILING: Duration = Duration::from_secs(1);

/// How current the view is, for the console to say.
#[derive(Debug, Clone, PartialEq)]
pub struct Freshness {
    /// Seconds since the table was last read whole.
    pub age: Duration,
    /// When that read was made (the clock's time).
    pub read: SystemTime,
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
    /// Wakes the refresher from idle: someone asked.
    asked: Notify,
    /// The refresher task was started (by the first ask).
    started: AtomicBool,
    /// Held while the table is read: one read at a time.
    reading: tokio::sync::Mutex<()>,
    snapshot: Mutex<Snapshot>,
}

/// The copy of the table and what is known of its reads and readers.
#[derive(Default)]
struct Snapshot {
    records: HashMap<String, Arc<Stored>>,
    unreadable: Vec<Unreadable>,
    /// When the last whole read started (what it shows is at least that
    /// current), by the monotonic clock and by the wall clock; `None`
    /// before the first.
    read_at: Option<(Instant, SystemTime)>,
    /// Why the reads since `read_at` failed, and when the first of them
    /// was made.
    failing: Option<(String, SystemTime)>,
    /// When someone last asked (a list, a page).
    last_ask: Option<Instant>,
    /// The refresher is reading once per interval (someone asked within
    /// the last two); otherwise it waits for an ask.
    watched: bool,
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
                asked: Notify::new(),
                started: AtomicBool::new(false),
                reading: tokio::sync::Mutex::new(()),
                snapshot: Mutex::new(Snapshot::default()),
            }),
        }
    }

    /// Someone asked for what the copy answers: the refresher keeps the
    /// view fresh for the next two intervals (started by the first ask,
    /// woken when idle).
    fn asked(&self) {
        if !self.view.started.swap(true, Ordering::SeqCst) {
            let (view, inner) = (Arc::clone(&self.view), Arc::clone(&self.inner));
            tokio::spawn(view.refresher(inner));
        }
        // The idle check and this ask take the same lock: an ask either
        // lands before the refresher's check (which then finds it) or
        // after it went idle (and wakes it).
        if !self.view.note_ask() {
            self.view.asked.notify_one();
        }
    }

    /// The view as a list answers it, read first when it is older than one
    /// interval with no refresher keeping it (at start, or after idling).
    async fn scan(&self) -> Result<Scan, StoreError> {
        if !self.view.fresh() {
            self.view.read(&*self.inner).await?;
        }
        self.asked();
        Ok(self.view.copy())
    }
}

impl View {
    fn snapshot(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes an ask (which keeps a running refresher going); whether the
    /// view is watched.
    fn note_ask(&self) -> bool {
        let mut snapshot = self.snapshot();
        snapshot.last_ask = Some(Instant::now());
        snapshot.watched
    }

    /// When the table's reads began to fail, while they do.
    fn unreadable_since(&self) -> Option<SystemTime> {
        self.snapshot().failing.as_ref().map(|&(_, since)| since)
    }

    /// A read of one record from the table (a page the copy does not
    /// answer): a failure to reach the table marks the view failing, as a
    /// failed whole read does; a success while nobody watches the copy
    /// ends that (a watched copy stays marked until it is read again).
    fn read_one(&self, result: Result<(), &StoreError>) {
        let mut snapshot = self.snapshot();
        match result {
            Err(e @ (StoreError::Unavailable(_) | StoreError::Rejected(_)))
                if snapshot.failing.is_none() =>
            {
                snapshot.failing = Some((e.to_string(), SystemTime::now()));
            }
            Ok(()) if !snapshot.watched => snapshot.failing = None,
            _ => {}
        }
    }

    /// Whether the copy may answer: read within the interval, or kept by
    /// the refresher (which marks it stale when reads fail).
    fn fresh(&self) -> bool {
        let snapshot = self.snapshot();
        snapshot
            .read_at
            .is_some_and(|(at, _)| snapshot.watched || at.elapsed() <= self.interval)
    }

    fn copy(&self) -> Scan {
        let snapshot = self.snapshot();
        Scan {
            records: snapshot.records.values().cloned().collect(),
            unreadable: snapshot.unreadable.clone(),
        }
    }

    fn freshness(&self) -> Option<Freshness> {
        let snapshot = self.snapshot();
        let (at, read) = snapshot.read_at?;
        Some(Freshness {
            age: at.elapsed(),
            read,
            failing: snapshot.failing.as_ref().map(|(why, _)| why.clone()),
            watched: snapshot.watched,
        })
    }

    /// Reads the whole table into the copy, unless another read that
    /// started after this call was made has done it meanwhile.
    async fn read(&self, inner: &dyn Store) -> Result<(), StoreError> {
        let asked_at = Instant::now();
        let _reading = self.reading.lock().await;
        if self
            .snapshot()
            .read_at
            .is_some_and(|(at, _)| at >= asked_at)
        {
            return Ok(());
        }
        let started = (Instant::now(), SystemTime::now());
        let writes_before = self.snapshot().writes;
        let result = inner.list().await;
        let mut snapshot = self.snapshot();
        match result {
            Ok(scan) => {
                let mut records: HashMap<String, Arc<Stored>> = scan
                    .records
                    .into_iter()
                    .map(|s| (s.record.endpoint_name.clone(), s))
                    .collect();
                // A write of this console made while the table was read may
                // be missing from the read, or in it as an older version;
                // one made before the read began is in it (the read is
                // consistent), or gone since (purged by GCO), as it says.
                for (name, &count) in &snapshot.written {
                    if count <= writes_before {
                        continue;
                    }
                    if let Some(own) = snapshot.records.get(name)
                        && records
                            .get(name)
                            .is_none_or(|read| read.record.updated_at < own.record.updated_at)
                    {
                        records.insert(name.clone(), Arc::clone(own));
                    }
                }
                snapshot.written.retain(|_, count| *count > writes_before);
                snapshot.items = records.len() + scan.unreadable.len();
                snapshot.records = records;
                snapshot.unreadable = scan.unreadable;
                snapshot.read_at = Some(started);
                snapshot.failing = None;
                crate::metrics::view_refreshed(true, snapshot.items);
                Ok(())
            }
            Err(e) => {
                let since = snapshot.failing.as_ref().map_or(started.1, |f| f.1);
                snapshot.failing = Some((e.to_string(), since));
                crate::metrics::view_refreshed(false, snapshot.items);
                Err(e)
            }
        }
    }

    /// A write of this console: in the copy at once.
    fn wrote(&self, stored: &Arc<Stored>) {
        let mut snapshot = self.snapshot();
        snapshot.writes += 1;
        let count = snapshot.writes;
        let name = stored.record.endpoint_name.clone();
        snapshot.written.insert(name.clone(), count);
        snapshot.records.insert(name, Arc::clone(stored));
    }

    /// A record read from the table (a change reads the current version):
    /// in the copy unless the copy holds a newer one; `None` (gone) leaves
    /// it out. A page that was refused a change as stale then shows what
    /// refused it.
    fn saw(&self, name: &str, stored: Option<&Arc<Stored>>) {
        let mut snapshot = self.snapshot();
        match stored {
            Some(stored) => {
                let newer = snapshot
                    .records
                    .get(name)
                    .is_none_or(|held| held.record.updated_at <= stored.record.updated_at);
                if newer {
                    snapshot.records.insert(name.to_owned(), Arc::clone(stored));
                }
            }
            None => {
                snapshot.records.remove(name);
            }
        }
    }

    /// Whether nobody asked within the last two intervals; if so the view
    /// is no longer watched (in the same lock as [`ViewedStore::asked`]).
    fn went_idle(&self) -> bool {
        let mut snapshot = self.snapshot();
        let idle = snapshot
            .last_ask
            .is_none_or(|at| at.elapsed() > 2 * self.interval);
        if idle {
            snapshot.watched = false;
        }
        idle
    }

    /// The one refresher: waits for an ask, then reads the table once per
    /// interval (sooner while reads fail) until nobody asked within the
    /// last two intervals, and waits again.
    async fn refresher(self: Arc<View>, inner: Arc<dyn Store>) {
        loop {
            self.asked.notified().await;
            self.snapshot().watched = true;
            loop {
                let failing = self.snapshot().failing.is_some();
                let pause = if failing {
                    RETRY_WHILE_FAILING.min(self.interval)
                } else {
                    self.interval
                };
                tokio::time::sleep(pause).await;
                if self.went_idle() {
                    break;
                }
                if let Err(e) = self.read(&*inner).await {
                    tracing::warn!(error = %e, "refreshing the view of the table failed; serving the last one");
                }
            }
        }
    }
}

impl Store for ViewedStore {
    fn create<'a>(
        &'a self,
        write: &'a Storable,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let stored = self.inner.create(write, by).await?;
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
            let stored = self.inner.get_stored(name).await;
            self.view.read_one(stored.as_ref().map(|_| ()));
            let stored = stored?;
            self.view.saw(name, stored.as_ref());
            Ok(stored)
        })
    }

    fn update<'a>(
        &'a self,
        write: &'a Storable,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            let stored = self.inner.update(write, expected, by).await?;
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
            self.view.note_ask();
            if self.view.fresh() {
                let found = self.view.snapshot().records.get(name).cloned();
                if let Some(found) = found {
                    self.asked();
                    return Ok(Some(found));
                }
            }
            self.get_stored(name).await
        })
    }

    fn freshness(&self) -> Option<Freshness> {
        self.view.freshness()
    }

    fn unreadable_since(&self) -> Option<SystemTime> {
        self.view.unreadable_since()
    }

    fn records_history(&self) -> bool {
        self.inner.records_history()
    }

    fn keep_entry<'a>(
        &'a self,
        name: &'a str,
        entry: &'a HistoryEntry,
    ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>> {
        self.inner.keep_entry(name, entry)
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

/// On tokio's paused clock: time moves only when every task waits, so the
/// refresher's pauses and the asks interleave exactly as timed, and the
/// tests take no real time.
#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    const INTERVAL: Duration = Duration::from_millis(400);

    /// A table in memory whose whole reads are counted, and which can be
    /// made to fail them.
    #[derive(Default)]
    struct Table {
        records: Mutex<Vec<Arc<Stored>>>,
        scans: AtomicUsize,
        down: AtomicBool,
    }

    impl Table {
        fn put(&self, name: &str, replicas: i64) {
            let record = gco_spec::json::parse(&format!(
                r#"{{"endpoint_name": "{name}", "spec": {{"replicas": {replicas}}}, "updated_at": "2026-12-07T00:00:{replicas:02}.000000+00:00"}}"#
            ))
            .unwrap();
            let stored = Arc::new(Stored::of(Record::from_value(&record).unwrap()));
            let mut records = self.records.lock().unwrap();
            records.retain(|s| s.record.endpoint_name != name);
            records.push(stored);
        }

        fn scans(&self) -> usize {
            self.scans.load(Ordering::SeqCst)
        }
    }

    impl Store for Table {
        fn create<'a>(
            &'a self,
            write: &'a Storable,
            _: &'a Author,
        ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
            let stored = Arc::new(Stored::of(write.record().clone()));
            self.records.lock().unwrap().push(Arc::clone(&stored));
            Box::pin(async move { Ok(stored) })
        }

        fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
            let records = self.records.lock().unwrap();
            let found = records.iter().find(|s| s.record.endpoint_name == name);
            let found = found.map(|s| s.record.clone());
            let down = self.down.load(Ordering::SeqCst);
            Box::pin(async move {
                if down {
                    return Err(StoreError::Unavailable("the table does not answer".into()));
                }
                Ok(found)
            })
        }

        fn update<'a>(
            &'a self,
            _: &'a Storable,
            _: Expected<'a>,
            _: &'a Author,
        ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
            unreachable!("the view's tests write to the table directly")
        }

        fn records_history(&self) -> bool {
            false
        }

        fn history<'a>(
            &'a self,
            _: &'a str,
            _: Span<'a>,
            _: usize,
        ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn keep_entry<'a>(
            &'a self,
            _: &'a str,
            entry: &'a HistoryEntry,
        ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>> {
            Box::pin(async move { Ok(entry.clone()) })
        }

        fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>> {
            self.scans.fetch_add(1, Ordering::SeqCst);
            let result = if self.down.load(Ordering::SeqCst) {
                Err(StoreError::Unavailable("the table does not answer".into()))
            } else {
                Ok(Scan {
                    records: self.records.lock().unwrap().clone(),
                    unreadable: Vec::new(),
                })
            };
            Box::pin(async move { result })
        }
    }

    fn viewed(interval: Duration) -> (Arc<Table>, ViewedStore) {
        let table = Arc::new(Table::default());
        table.put("chat", 1);
        let inner: Arc<dyn Store> = Arc::clone(&table) as Arc<dyn Store>;
        (table, ViewedStore::new(inner, interval))
    }

    async fn replicas(view: &ViewedStore) -> Vec<String> {
        let scan = view.list().await.expect("a list");
        scan.records
            .iter()
            .map(|s| s.record.spec.get("replicas").unwrap().to_json())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn asks_cost_one_read_per_interval_and_an_idle_view_none() {
        let (table, view) = viewed(INTERVAL);
        assert_eq!(replicas(&view).await, ["1"]);
        assert_eq!(table.scans(), 1, "the first list reads the table");
        // Ten asks per interval for ten intervals.
        for _ in 0..100 {
            assert_eq!(replicas(&view).await, ["1"]);
            tokio::time::sleep(INTERVAL / 10).await;
        }
        assert!(
            (10..=12).contains(&table.scans()),
            "{} reads for 100 asks over ten intervals",
            table.scans()
        );
        assert!(view.freshness().unwrap().watched);

        // Idle: after two intervals without an ask, nothing is read.
        tokio::time::sleep(INTERVAL * 3).await;
        let idle = table.scans();
        assert!(!view.freshness().unwrap().watched);
        tokio::time::sleep(INTERVAL * 10).await;
        assert_eq!(table.scans(), idle, "an idle view reads nothing");

        // The next list reads at once, and wakes the refresher.
        table.put("chat", 2);
        assert_eq!(replicas(&view).await, ["2"]);
        assert_eq!(table.scans(), idle + 1);
        table.put("chat", 3);
        tokio::time::sleep(INTERVAL + INTERVAL / 10).await;
        assert_eq!(table.scans(), idle + 2, "woken by the ask");
        assert_eq!(replicas(&view).await, ["3"]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_own_write_purged_elsewhere_leaves_the_view_at_the_next_read() {
        let (table, view) = viewed(INTERVAL);
        assert_eq!(replicas(&view).await, ["1"]);
        let record = Record::from_value(
            &gco_spec::json::parse(r#"{"endpoint_name": "mine", "spec": {"replicas": 9}}"#)
                .unwrap(),
        )
        .unwrap();
        let by = Author::new("ada", "deploy", None);
        view.create(&Storable::of(record), &by).await.unwrap();
        assert_eq!(replicas(&view).await.len(), 2, "its own write at once");
        // GCO purges it; the next read of the table leaves it out.
        table
            .records
            .lock()
            .unwrap()
            .retain(|s| s.record.endpoint_name != "mine");
        tokio::time::sleep(INTERVAL + INTERVAL / 10).await;
        assert_eq!(replicas(&view).await, ["1"]);
        assert!(view.peek("mine").await.unwrap().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_alone_reads_the_table_and_says_when_it_cannot() {
        let (table, view) = viewed(INTERVAL);
        // Nobody keeps the copy: a page reads its record from the table.
        let page = view.peek("chat").await.unwrap().unwrap();
        assert_eq!(page.record.spec.get("replicas").unwrap().to_json(), "1");
        tokio::time::sleep(INTERVAL * 3).await;
        assert_eq!(table.scans(), 0, "a page alone starts no refresher");
        assert_eq!(view.unreadable_since(), None);
        // The table goes: the read fails, and the view says since when.
        table.down.store(true, Ordering::SeqCst);
        let before = SystemTime::now();
        assert!(view.peek("chat").await.is_err());
        let since = view.unreadable_since().expect("marked");
        assert!(since >= before);
        assert!(view.peek("chat").await.is_err());
        assert_eq!(
            view.unreadable_since(),
            Some(since),
            "the first failure's time"
        );
        // Back: the next read ends it.
        table.down.store(false, Ordering::SeqCst);
        assert!(view.peek("chat").await.unwrap().is_some());
        assert_eq!(view.unreadable_since(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_table_is_marked_since_its_first_failed_read_and_read_again_each_second() {
        let interval = Duration::from_secs(3);
        let (table, view) = viewed(interval);
        assert_eq!(replicas(&view).await, ["1"]);
        assert_eq!(view.freshness().unwrap().failing, None);

        table.down.store(true, Ordering::SeqCst);
        let down = Instant::now();
        let wall = SystemTime::now();
        // Within one interval the view knows, and keeps answering its copy.
        while view.freshness().unwrap().failing.is_none() {
            assert_eq!(replicas(&view).await, ["1"]);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(down.elapsed() <= interval + Duration::from_millis(100));
        let stale = view.freshness().unwrap();
        let since = view.unreadable_since().expect("since when");
        assert!(since >= wall - Duration::from_secs(1) && stale.read <= since);
        // Later failures keep the first one's time.
        tokio::time::sleep(interval * 2).await;
        replicas(&view).await;
        assert_eq!(view.unreadable_since(), Some(since));
        let failed_reads = table.scans();
        assert!(failed_reads >= 6, "{failed_reads} reads: one a second");

        // Back: read within a second, the mark gone, the copy current.
        table.put("chat", 2);
        table.down.store(false, Ordering::SeqCst);
        let back = Instant::now();
        while view.freshness().unwrap().failing.is_some() {
            replicas(&view).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(back.elapsed() <= RETRY_WHILE_FAILING + Duration::from_millis(50));
        assert_eq!(view.unreadable_since(), None);
        assert_eq!(replicas(&view).await, ["2"]);
    }
}
