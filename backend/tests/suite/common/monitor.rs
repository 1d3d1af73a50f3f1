//! GCO's regional monitor as the table sees it: a strong read of the record,
//! then `STORE.update_region_status` (GCO_FACTS_NEWEST section 3), written
//! with the SDK straight into dynalite beside the console:
//!
//! `SET region_status.#r = :s, updated_at = :u`, conditioned on
//! `attribute_exists(endpoint_name) AND lifecycle_id = :expected_lifecycle_id
//! AND region_generations.#r = :expected_region_generation AND desired_state
//! <> :deleted` (an ordinary write). A write whose condition fails is GCO's
//! "stale regional status", skipped.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue as A;
use gco_spec::json::{Object, Value};

use super::{Dynalite, canonical};

pub const TABLE: &str = "gco-inference-endpoints";

/// What became of one status write.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Written; the region's entry is now this value.
    Written(Value),
    /// GCO's conditions failed (the region is no target, its generation or
    /// the lifecycle changed, or the endpoint is deleted): nothing written.
    Stale,
    /// The call failed (the table is down): it may or may not have landed.
    Unknown(Value),
}

/// A monitor of one endpoint on `client`'s table.
pub struct Monitor {
    client: Client,
    name: String,
}

fn now_timestamp() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    gco_spec::time::format_timestamp(micros)
}

impl Monitor {
    pub async fn new(dynalite: &Dynalite, name: &str) -> Monitor {
        Monitor::on(dynalite.client().await, name)
    }

    /// A monitor of `name` writing through `client` (any server's).
    pub fn on(client: Client, name: &str) -> Monitor {
        Monitor {
            client,
            name: name.to_owned(),
        }
    }

    /// The item as the monitor reads it (strongly consistent), or `None`
    /// when it is gone or the read failed.
    pub async fn read(&self) -> Option<HashMap<String, A>> {
        self.client
            .get_item()
            .table_name(TABLE)
            .key("endpoint_name", A::S(self.name.clone()))
            .consistent_read(true)
            .send()
            .await
            .ok()?
            .item
    }

    /// The target regions of a read item.
    pub fn targets(item: &HashMap<String, A>) -> Vec<String> {
        match item.get("target_regions") {
            Some(A::L(regions)) => regions
                .iter()
                .filter_map(|r| r.as_s().ok().cloned())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Writes `region`'s status as GCO's monitor does after reading `item`:
    /// the entry in GCO's key order, fenced by the lifecycle and region
    /// generation read.
    pub async fn write_status(
        &self,
        item: &HashMap<String, A>,
        region: &str,
        state: &str,
        replicas: i64,
    ) -> Outcome {
        let text = |key: &str| item.get(key).and_then(|v| v.as_s().ok()).cloned();
        let lifecycle = text("lifecycle_id").unwrap_or_default();
        let generation = match item.get("region_generations") {
            Some(A::M(g)) => g.get(region).and_then(|v| v.as_s().ok()).cloned(),
            _ => None,
        }
        .unwrap_or_default();
        let now = now_timestamp();
        let mut status = Object::new();
        status.insert("state", state);
        status.insert("replicas_ready", Value::int(replicas));
        status.insert("replicas_desired", Value::int(replicas));
        status.insert("last_sync", now.as_str());
        status.insert("lifecycle_id", lifecycle.as_str());
        status.insert("region_generation", generation.as_str());
        let status = Value::Object(status);
        let result = self
            .client
            .update_item()
            .table_name(TABLE)
            .key("endpoint_name", A::S(self.name.clone()))
            .update_expression("SET region_status.#r = :s, updated_at = :u")
            .condition_expression(
                "attribute_exists(endpoint_name) AND lifecycle_id = :expected_lifecycle_id \
                 AND region_generations.#r = :expected_region_generation \
                 AND desired_state <> :deleted",
            )
            .expression_attribute_names("#r", region)
            .expression_attribute_values(":s", attribute(&status))
            .expression_attribute_values(":u", A::S(now))
            .expression_attribute_values(":expected_lifecycle_id", A::S(lifecycle))
            .expression_attribute_values(":expected_region_generation", A::S(generation))
            .expression_attribute_values(":deleted", A::S("deleted".into()))
            .send()
            .await;
        match result {
            Ok(_) => Outcome::Written(status),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
            {
                Outcome::Stale
            }
            Err(_) => Outcome::Unknown(status),
        }
    }

    /// One pass: read, then write the status of one of the targets (the
    /// `pass`-th, round robin). `None` when there was nothing to write.
    pub async fn pass(&self, pass: usize) -> Option<(String, Outcome)> {
        let item = self.read().await?;
        let targets = Monitor::targets(&item);
        let region = targets.get(pass % targets.len().max(1))?.clone();
        let outcome = self
            .write_status(&item, &region, "running", pass as i64)
            .await;
        Some((region, outcome))
    }
}

/// A client that tries each call once and gives up within a second: while
/// the table is down the monitor keeps passing every few ms (as GCO's keep
/// their schedule), rather than sleeping through the SDK's backoff.
fn impatient_client(port: u16) -> Client {
    use aws_sdk_dynamodb::config::retry::RetryConfig;
    use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "local", "local", None, None, "monitor",
        ))
        .retry_config(RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .operation_timeout(Duration::from_secs(1))
                .build(),
        )
        .build();
    Client::from_conf(config)
}

/// A string, integer or map value as an attribute.
fn attribute(v: &Value) -> A {
    match v {
        Value::Str(s) => A::S(s.to_string_lossy()),
        Value::Int(i) => A::N(i.to_string()),
        Value::Object(o) => A::M(
            o.str_entries()
                .map(|(k, v)| (k.to_string_lossy(), attribute(v)))
                .collect(),
        ),
        other => panic!("the monitor writes no {other:?}"),
    }
}

/// The status writes a monitor made, per region.
#[derive(Debug, Default)]
pub struct StatusLog {
    /// The last confirmed write of each region, and the writes of unknown
    /// outcome after it (any of which may be what the table holds).
    pub regions: BTreeMap<String, (Option<Value>, Vec<Value>)>,
    pub written: usize,
    pub stale: usize,
    pub unknown: usize,
}

impl StatusLog {
    fn record(&mut self, region: String, outcome: Outcome) {
        let entry = self.regions.entry(region).or_default();
        match outcome {
            Outcome::Written(v) => {
                self.written += 1;
                *entry = (Some(v), Vec::new());
            }
            Outcome::Unknown(v) => {
                self.unknown += 1;
                entry.1.push(v);
            }
            Outcome::Stale => self.stale += 1,
        }
    }

    /// "N written, N stale, N unknown".
    pub fn summary(&self) -> String {
        format!(
            "{} status writes, {} stale, {} unknown",
            self.written, self.stale, self.unknown
        )
    }

    /// Panics unless `region_status` (a record's, as the API answers it)
    /// holds each region's last confirmed write, or a write of unknown
    /// outcome made after it: no status write was overwritten or lost.
    pub fn assert_intact(&self, region_status: &Value) {
        assert!(self.written > 0, "the monitor wrote nothing: {self:?}");
        for (region, (confirmed, unknown)) in &self.regions {
            let Some(confirmed) = confirmed else { continue };
            let held = region_status
                .as_object()
                .and_then(|o| o.get(region))
                .unwrap_or_else(|| panic!("the status of {region} is gone: {region_status:?}"));
            let held = canonical(held);
            assert!(
                held == canonical(confirmed) || unknown.iter().any(|u| canonical(u) == held),
                "the monitor's last status of {region} was overwritten:\nheld {held}\nwrote {}",
                canonical(confirmed)
            );
        }
    }
}

/// A monitor writing `name`'s status every `every` on its own thread (and
/// runtime) until stopped, as GCO's monitors keep doing whatever else
/// writes the record.
pub struct Running {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicUsize>,
    handle: JoinHandle<StatusLog>,
}

impl Running {
    pub fn start(dynalite: &Dynalite, name: &str, every: Duration) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let (endpoint_port, name) = (dynalite.port, name.to_owned());
        let flag = Arc::clone(&stop);
        let written = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&written);
        let handle = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let monitor = Monitor {
                    client: impatient_client(endpoint_port),
                    name,
                };
                let mut log = StatusLog::default();
                let mut pass = 0;
                while !flag.load(Ordering::Relaxed) {
                    if let Some((region, outcome)) = monitor.pass(pass).await {
                        if matches!(outcome, Outcome::Written(_)) {
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        log.record(region, outcome);
                    }
                    pass += 1;
                    tokio::time::sleep(every).await;
                }
                log
            })
        });
        Running {
            stop,
            written,
            handle,
        }
    }

    /// Status writes confirmed so far.
    pub fn written(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    /// Stops after the pass under way, and answers what was written.
    pub fn stop(self) -> StatusLog {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("the monitor thread")
    }
}
