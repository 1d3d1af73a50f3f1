//! `--emf-interval`: the view's age as a CloudWatch embedded-metric-format
//! (EMF) line on stdout. A task's log driver sends stdout to CloudWatch
//! Logs, which reads any line of this shape as a metric: the alarm on
//! `gco_view_age_seconds` (deploy/cdk) needs no scraper.
//!
//! The figure is written only while someone looks ([`Freshness::watched`]):
//! an idle view is not read again and only grows older, which no user sees.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::metrics::VIEW_AGE;
use crate::service::Service;
use crate::store::Freshness;

/// The metric's namespace and its one dimension (the endpoints table's
/// name, so two consoles of two tables never mix).
pub const NAMESPACE: &str = "GcoConsole";
pub const DIMENSION: &str = "Table";

/// The EMF line for `freshness` at `timestamp_ms` (ms since the epoch), or
/// `None` when there is no figure to give (no view, or nobody looking).
pub fn line(table: &str, freshness: Option<&Freshness>, timestamp_ms: u64) -> Option<String> {
    let freshness = freshness.filter(|f| f.watched)?;
    let record = json!({
        "_aws": {
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [[DIMENSION]],
                "Metrics": [{"Name": VIEW_AGE, "Unit": "Seconds"}],
            }],
        },
        DIMENSION: table,
        VIEW_AGE: freshness.age.as_secs_f64(),
    });
    Some(record.to_string())
}

/// Writes [`line`] to stdout every `every`, for as long as the process runs.
pub fn spawn(service: Arc<Service>, table: String, every: Duration) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let now = crate::clock::unix_millis();
            if let Some(text) = line(&table, service.freshness().as_ref(), now) {
                // One write of the whole line: the log driver splits on
                // newlines, and a line cut in two is no metric.
                println!("{text}");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn freshness(age_ms: u64, watched: bool) -> Freshness {
        Freshness {
            age: Duration::from_millis(age_ms),
            read: std::time::SystemTime::UNIX_EPOCH,
            failing: None,
            watched,
        }
    }

    #[test]
    fn a_watched_view_gives_its_age_as_an_emf_record() {
        let text = line(
            "gco-inference-endpoints",
            Some(&freshness(2500, true)),
            1_765_000_000_000,
        )
        .unwrap();
        assert!(!text.contains('\n'));
        let record: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            record,
            json!({
                "_aws": {
                    "Timestamp": 1_765_000_000_000u64,
                    "CloudWatchMetrics": [{
                        "Namespace": "GcoConsole",
                        "Dimensions": [["Table"]],
                        "Metrics": [{"Name": "gco_view_age_seconds", "Unit": "Seconds"}],
                    }],
                },
                "Table": "gco-inference-endpoints",
                "gco_view_age_seconds": 2.5,
            })
        );
    }

    #[test]
    fn an_idle_view_or_none_gives_no_figure() {
        assert_eq!(line("t", Some(&freshness(900_000, false)), 1), None);
        assert_eq!(line("t", None, 1), None);
    }
}
