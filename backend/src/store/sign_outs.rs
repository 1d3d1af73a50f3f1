//! Sessions signed out (`--auth oidc`), kept where the console keeps its
//! records, so a sign-out holds at every console that shares the session
//! key and the store, and across restarts, until the session would have
//! expired. A session is named by the SHA-256 of its id ([`digest`]), so
//! the store holds nothing a cookie could be made from.
//!
//! - The embedded store: a redb table of its own, digest to expiry.
//! - DynamoDB: items of the console's history table (never GCO's endpoints
//!   table, which GCO's CLI and monitors read), in a partition of their
//!   own, [`DYNAMODB_PARTITION`], which no endpoint's name can be (names
//!   are DNS labels), so no endpoint's history ever shows them. Each item
//!   carries its expiry as [`DYNAMODB_TTL_ATTRIBUTE`] for DynamoDB's TTL to
//!   delete it; reads leave out the expired ones TTL has not deleted yet.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::{BoxFuture, StoreError};

/// The history table's partition (`endpoint_name`) that holds sign-outs;
/// the sort key (`change_id`) is the session's digest.
pub const DYNAMODB_PARTITION: &str = "#signed-out";

/// The attribute with a sign-out's expiry (seconds since the epoch): the
/// history table's TTL attribute. History entries have none, so TTL never
/// deletes them.
pub const DYNAMODB_TTL_ATTRIBUTE: &str = "expires_at";

/// Where sign-outs are kept.
pub trait SignOuts: Send + Sync + 'static {
    /// Records that the session digested to `digest` is signed out until
    /// `until` (seconds since the epoch).
    fn sign_out<'a>(&'a self, digest: &'a str, until: u64)
    -> BoxFuture<'a, Result<(), StoreError>>;

    /// Every session signed out and not yet expired at `now`: its digest
    /// and its expiry.
    fn signed_out(&self, now: u64) -> BoxFuture<'_, Result<Vec<(String, u64)>, StoreError>>;
}

/// A session id as the store keeps it: its SHA-256, hex.
pub fn digest(session_id: &str) -> String {
    Sha256::digest(session_id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Sign-outs in this process's memory only: for a console whose sessions
/// end with it (a session key made at start-up) and that shares them with
/// no other.
#[derive(Default)]
pub struct InMemory(Mutex<HashMap<String, u64>>);

impl SignOuts for InMemory {
    fn sign_out<'a>(
        &'a self,
        digest: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(digest.to_owned(), until);
        Box::pin(async { Ok(()) })
    }

    /// Forgets the expired ones as it goes, so the map does not grow.
    fn signed_out(&self, now: u64) -> BoxFuture<'_, Result<Vec<(String, u64)>, StoreError>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|_, until| *until > now);
        let digests = kept.iter().map(|(d, u)| (d.clone(), *u)).collect();
        Box::pin(async { Ok(digests) })
    }
}
