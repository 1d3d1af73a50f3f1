//! The sessions signed out, as this console knows them: a copy of the
//! store's list ([`crate::store::sign_outs`]), read again when a session
//! is checked and the copy is older than [`REFRESH`]. A sign-out made here
//! counts here at once; one made by another console sharing the session
//! key and the store counts here within [`REFRESH`] (and at once after a
//! restart, whose first check reads the list). An idle console reads
//! nothing. When the list cannot be read, sessions are not accepted on an
//! old copy: the check fails, and the request with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::store::StoreError;
use crate::store::sign_outs::{InMemory, SignOuts, digest};

/// How old the copy of the list may be when a session is checked: the
/// longest a sign-out takes to count at another console.
pub const REFRESH: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Copy {
    /// Digest to expiry (seconds since the epoch).
    signed_out: HashMap<String, u64>,
    read: Option<Instant>,
}

#[derive(Default)]
pub struct SignOutList {
    /// Where the list is kept; this process's memory until set.
    store: OnceLock<Arc<dyn SignOuts>>,
    copy: Mutex<Copy>,
    /// One read of the store at a time: the requests that find the copy
    /// old at once share the next.
    reading: tokio::sync::Mutex<()>,
}

impl SignOutList {
    /// Keeps the list in `store` from now on; `false` when it was set
    /// already.
    pub fn keep_in(&self, store: Arc<dyn SignOuts>) -> bool {
        self.store.set(store).is_ok()
    }

    fn store(&self) -> &dyn SignOuts {
        self.store
            .get_or_init(|| Arc::new(InMemory::default()))
            .as_ref()
    }

    fn copy(&self) -> std::sync::MutexGuard<'_, Copy> {
        self.copy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Signs the session `id` out until `until`: written to the store, and
    /// so refused everywhere.
    pub async fn sign_out(&self, id: &str, until: u64) -> Result<(), StoreError> {
        let digest = digest(id);
        self.store().sign_out(&digest, until).await?;
        self.copy().signed_out.insert(digest, until);
        Ok(())
    }

    /// Whether the session `id` was signed out (at `now`, seconds since
    /// the epoch).
    pub async fn has_signed_out(&self, id: &str, now: u64) -> Result<bool, StoreError> {
        let digest = digest(id);
        if let Some(known) = self.known(&digest) {
            return Ok(known);
        }
        let _reading = self.reading.lock().await;
        if let Some(known) = self.known(&digest) {
            return Ok(known);
        }
        let read = self.store().signed_out(now).await?;
        let mut copy = self.copy();
        copy.signed_out.retain(|_, until| *until > now);
        copy.signed_out.extend(read);
        copy.read = Some(Instant::now());
        Ok(copy.signed_out.contains_key(&digest))
    }

    /// The answer the copy gives: signed out once seen so (a sign-out is
    /// not undone), else not while the copy is fresh.
    fn known(&self, digest: &str) -> Option<bool> {
        let copy = self.copy();
        if copy.signed_out.contains_key(digest) {
            return Some(true);
        }
        copy.read
            .filter(|read| read.elapsed() < REFRESH)
            .map(|_| false)
    }
}
