//! The load balancer's public keys, by `kid`, fetched from the region's
//! endpoint (`<prefix><kid>`, a PEM public key). A key never changes under
//! its `kid`, so one fetched is kept for the process's life.
//!
//! Anyone who can send a header may name any `kid` (the signature cannot be
//! checked before the key is in hand), so fetches are bounded:
//! - requests for a `kid` being fetched wait for that one fetch;
//! - a `kid` whose fetch failed is refused without another for
//!   [`FAILED_KEY_REMEMBERED`];
//! - at most [`MAX_FETCHES_PER_MINUTE`] fetches start in any minute: beyond
//!   that a new `kid` is refused until the minute has passed (a real key
//!   rotation brings one new `kid`, not dozens).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use p256::ecdsa::VerifyingKey;
use p256::pkcs8::DecodePublicKey;
use tokio::sync::OnceCell;

/// How long a `kid` whose key could not be fetched is refused without
/// another fetch.
pub const FAILED_KEY_REMEMBERED: Duration = Duration::from_secs(60);

/// The most key fetches started in a minute, whatever the `kid`s.
pub const MAX_FETCHES_PER_MINUTE: usize = 10;

const MINUTE: Duration = Duration::from_secs(60);

/// What a `kid` came to.
#[derive(Clone)]
enum Outcome {
    Key(VerifyingKey),
    /// The fetch failed: refused until [`FAILED_KEY_REMEMBERED`] has passed.
    Failed {
        reason: String,
        at: Instant,
    },
    /// Not fetched: the minute's fetches were spent. The next request for
    /// it tries again.
    Capped,
}

/// One `kid`: its outcome, set by the one fetch that everyone asking for
/// it at the time waits for.
#[derive(Default)]
struct Slot(OnceCell<Outcome>);

impl Slot {
    /// Whether its outcome (or its fetch in flight) still answers.
    fn answers(&self) -> bool {
        match self.0.get() {
            None | Some(Outcome::Key(_)) => true,
            Some(Outcome::Failed { at, .. }) => at.elapsed() < FAILED_KEY_REMEMBERED,
            Some(Outcome::Capped) => false,
        }
    }
}

pub struct AlbKeys {
    /// The URL prefix; the `kid` is appended.
    url: String,
    http: reqwest::Client,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// When the fetches of the last minute started.
    started: Mutex<VecDeque<Instant>>,
}

impl AlbKeys {
    pub fn new(url: String) -> AlbKeys {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(3))
            .build()
            .expect("a TLS client builds");
        AlbKeys {
            url,
            http,
            slots: Mutex::default(),
            started: Mutex::default(),
        }
    }

    /// The key named `kid`, or why there is none.
    pub async fn get(&self, kid: &str) -> Result<VerifyingKey, String> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            match slots.get(kid) {
                Some(slot) if slot.answers() => Arc::clone(slot),
                _ => {
                    // Outcomes that no longer answer go, so the map holds
                    // the keys, the fetches in flight and the failures of
                    // the last minute (at most a minute's fetches).
                    slots.retain(|_, slot| slot.answers());
                    let slot = Arc::new(Slot::default());
                    slots.insert(kid.to_owned(), Arc::clone(&slot));
                    slot
                }
            }
        };
        match slot.0.get_or_init(|| self.fetch(kid)).await {
            Outcome::Key(key) => Ok(*key),
            Outcome::Failed { reason, .. } => Err(reason.clone()),
            Outcome::Capped => Err(format!(
                "not fetched: {MAX_FETCHES_PER_MINUTE} keys were fetched in the last minute"
            )),
        }
    }

    /// Whether another fetch may start now (and if so, counts it).
    fn may_fetch(&self) -> bool {
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        while started.front().is_some_and(|at| at.elapsed() >= MINUTE) {
            started.pop_front();
        }
        if started.len() >= MAX_FETCHES_PER_MINUTE {
            return false;
        }
        started.push_back(Instant::now());
        true
    }

    async fn fetch(&self, kid: &str) -> Outcome {
        if !self.may_fetch() {
            tracing::warn!(kid, "ALB key not fetched: too many fetches this minute");
            return Outcome::Capped;
        }
        match self.download(kid).await {
            Ok(key) => Outcome::Key(key),
            Err(reason) => Outcome::Failed {
                reason,
                at: Instant::now(),
            },
        }
    }

    async fn download(&self, kid: &str) -> Result<VerifyingKey, String> {
        let url = format!("{}{kid}", self.url);
        let response = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("fetching {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let pem = response
            .text()
            .await
            .map_err(|e| format!("reading {url}: {e}"))?;
        VerifyingKey::from_public_key_pem(pem.trim())
            .map_err(|e| format!("{url} is no P-256 public key: {e}"))
    }
}
