//! Lists asked for while a scan of the table runs share the next scan.
//!
//! A list reads every item of the table (on DynamoDB, every page of a
//! scan), and a console's clients list at the same moments: page loads, and
//! after each action. Scanning once per list, N lists at once read the table
//! N times, queue behind one another at the table, and the last ones run
//! out of time. Here one scan runs at a time, and the lists that arrived
//! while it ran are all answered by the next one, which starts after every
//! one of them arrived. So a list still sees every write acknowledged
//! before it was asked for, and N lists at once cost at most two scans.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Mutex;

pub struct SharedScan<T, E> {
    /// Lists asked for so far; a list's ticket is its place in that order.
    arrivals: AtomicU64,
    /// The last scan. Held while a scan runs, so scans never overlap.
    last: Mutex<Option<LastScan<T, E>>>,
}

struct LastScan<T, E> {
    /// How many lists had arrived when it started: it answers those whose
    /// ticket is lower.
    started: u64,
    /// How many had arrived when it ended. When it failed, it also answers
    /// those that waited for it: a failing table fails them in the time of
    /// one scan, not of one scan each.
    ended: u64,
    result: Result<T, E>,
}

impl<T, E> Default for SharedScan<T, E> {
    fn default() -> SharedScan<T, E> {
        SharedScan {
            arrivals: AtomicU64::new(0),
            last: Mutex::new(None),
        }
    }
}

impl<T: Clone, E: Clone> SharedScan<T, E> {
    /// The result of a scan that started after this call (the one that
    /// answers lists arrived before it, or `scan` run now), or the failure
    /// of the scan that ran while this call waited.
    pub async fn run<F, Fut>(&self, scan: F) -> Result<T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let ticket = self.arrivals.fetch_add(1, Ordering::SeqCst);
        // Waiters get the lock in arrival order (tokio's mutex is fair).
        let mut last = self.last.lock().await;
        if let Some(scan) = &*last
            && (ticket < scan.started || (scan.result.is_err() && ticket < scan.ended))
        {
            return scan.result.clone();
        }
        let started = self.arrivals.load(Ordering::SeqCst);
        let result = scan().await;
        *last = Some(LastScan {
            started,
            ended: self.arrivals.load(Ordering::SeqCst),
            result: result.clone(),
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use tokio::sync::Notify;

    use super::*;

    /// A table whose scans are counted and read its version (the number of
    /// writes so far) when they start, then take `took` to finish.
    #[derive(Default)]
    struct Table {
        version: AtomicU64,
        scans: AtomicUsize,
        shared: SharedScan<u64, String>,
        /// Scans fail while set.
        failing: std::sync::atomic::AtomicBool,
    }

    impl Table {
        async fn try_list(&self, took: Duration) -> Result<u64, String> {
            self.shared
                .run(|| async {
                    self.scans.fetch_add(1, Ordering::SeqCst);
                    let seen = self.version.load(Ordering::SeqCst);
                    tokio::time::sleep(took).await;
                    if self.failing.load(Ordering::SeqCst) {
                        return Err("unavailable".to_owned());
                    }
                    Ok(seen)
                })
                .await
        }

        async fn list(&self, took: Duration) -> u64 {
            self.try_list(took).await.expect("the table answers")
        }
    }

    #[tokio::test(start_paused = true)]
    async fn many_lists_at_once_cost_at_most_two_scans() {
        let table = Arc::new(Table::default());
        let lists: Vec<_> = (0..50)
            .map(|_| {
                let table = Arc::clone(&table);
                tokio::spawn(async move { table.list(Duration::from_millis(40)).await })
            })
            .collect();
        for list in lists {
            assert_eq!(list.await.unwrap(), 0);
        }
        assert!(table.scans.load(Ordering::SeqCst) <= 2);
        // One at a time, each list scans: nothing is answered from the past.
        table.version.fetch_add(1, Ordering::SeqCst);
        assert_eq!(table.list(Duration::ZERO).await, 1);
        table.version.fetch_add(1, Ordering::SeqCst);
        assert_eq!(table.list(Duration::ZERO).await, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_sees_the_writes_acknowledged_before_it_was_asked_for() {
        let table = Arc::new(Table::default());
        let release = Arc::new(Notify::new());
        let slow = {
            let (table, release) = (Arc::clone(&table), Arc::clone(&release));
            tokio::spawn(async move {
                table
                    .shared
                    .run(|| async {
                        let seen = table.version.load(Ordering::SeqCst);
                        release.notified().await;
                        Ok(seen)
                    })
                    .await
            })
        };
        // The slow scan has read version 0 and waits; then a write lands,
        // then two more lists arrive.
        tokio::time::sleep(Duration::from_millis(1)).await;
        table.version.fetch_add(1, Ordering::SeqCst);
        let after: Vec<_> = (0..2)
            .map(|_| {
                let table = Arc::clone(&table);
                tokio::spawn(async move { table.list(Duration::from_millis(5)).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        release.notify_one();
        assert_eq!(slow.await.unwrap(), Ok(0));
        for list in after {
            assert_eq!(list.await.unwrap(), 1, "a list after the write sees it");
        }
        assert_eq!(
            table.scans.load(Ordering::SeqCst),
            1,
            "the two shared a scan"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn lists_waiting_for_a_failing_scan_share_its_failure() {
        let table = Arc::new(Table::default());
        table.failing.store(true, Ordering::SeqCst);
        let lists: Vec<_> = (0..10)
            .map(|_| {
                let table = Arc::clone(&table);
                tokio::spawn(async move { table.try_list(Duration::from_secs(4)).await })
            })
            .collect();
        let started = tokio::time::Instant::now();
        for list in lists {
            assert_eq!(list.await.unwrap(), Err("unavailable".to_owned()));
        }
        assert_eq!(table.scans.load(Ordering::SeqCst), 1);
        assert_eq!(started.elapsed(), Duration::from_secs(4), "one scan's time");
        // A list after the failure tries the table again.
        table.failing.store(false, Ordering::SeqCst);
        assert_eq!(table.try_list(Duration::ZERO).await, Ok(0));
        assert_eq!(table.scans.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_given_up_leaves_the_next_to_scan() {
        let table = Arc::new(Table::default());
        let abandoned =
            tokio::time::timeout(Duration::from_millis(1), table.list(Duration::from_secs(1)))
                .await;
        assert!(abandoned.is_err());
        table.version.fetch_add(1, Ordering::SeqCst);
        assert_eq!(table.list(Duration::ZERO).await, 1);
    }
}
