//! Prometheus metrics, `GET /metrics` (or `--metrics-addr`): HTTP requests
//! by route and status with their latency, DynamoDB calls by operation with
//! the capacity units the table says they consumed, and the view of the
//! table (refreshes, age, items). Labels are route templates, operations
//! and statuses only: never an endpoint's name, an identity or a record,
//! and never a value a client chose (see [`track`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Histogram, SharedString};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Where the metrics are served (`GET`).
pub const PATH: &str = "/metrics";

pub const HTTP_REQUESTS: &str = "gco_http_requests_total";
pub const HTTP_SECONDS: &str = "gco_http_request_duration_seconds";
pub const DYNAMODB_CALLS: &str = "gco_dynamodb_calls_total";
/// Capacity units are fractions (an eventually consistent read of a small
/// item is half a unit) and `metrics`' counters count whole numbers, so
/// these counters count thousandths of a unit.
pub const DYNAMODB_READ_UNITS: &str = "gco_dynamodb_consumed_read_milliunits_total";
pub const DYNAMODB_WRITE_UNITS: &str = "gco_dynamodb_consumed_write_milliunits_total";
pub const VIEW_REFRESHES: &str = "gco_view_refreshes_total";
pub const VIEW_ITEMS: &str = "gco_view_items";
pub const VIEW_AGE: &str = "gco_view_age_seconds";

/// Latency buckets, in seconds: a list from memory takes milliseconds, a
/// read of the table tens of them, a timeout four seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The process's recorder, installed on first use (every app in a process,
/// the tests' many among them, shares it).
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(HTTP_SECONDS.into()), &BUCKETS)
            .expect("the buckets are not empty");
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder (a test's) may be installed already: this one
        // still renders what it is given.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// The route label of a path no route serves (the API's 404s).
pub const UNMATCHED: &str = "unmatched";

/// Routes that only answer 404: counted as [`UNMATCHED`].
const NOT_FOUND_ROUTES: [&str; 3] = ["/api", "/api/", "/api/{*rest}"];

/// Counts and times an API request, by its route template. Every label
/// takes one of a fixed set of values, whatever clients send: a route
/// template or [`UNMATCHED`], a standard method or `other`, a status (a
/// three-digit number). A label of anything a client chose would be a
/// series per value, kept for the process's life.
pub async fn track(request: Request, next: Next) -> Response {
    let route = match request.extensions().get::<MatchedPath>() {
        Some(path) if !NOT_FOUND_ROUTES.contains(&path.as_str()) => path.as_str(),
        _ => UNMATCHED,
    };
    // The API's own constant when it is one of its routes (as every route
    // it serves is): labels that are constants are neither copied nor kept
    // twice, and their series are kept at hand.
    let route = gco_api::route::ROUTES
        .iter()
        .map(|r| r.path)
        .chain([UNMATCHED])
        .find(|r| *r == route)
        .ok_or_else(|| route.to_owned());
    let method = method_label(request.method());
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    let (count, time) = match route {
        Ok(route) => series(route, method, response.status()),
        Err(route) => register(SharedString::from_owned(route), method, response.status()),
    };
    count.increment(1);
    time.record(started.elapsed().as_secs_f64());
    response
}

/// The count and the latency of a route, method and status, registered
/// once per thread: the recorder finds a series by hashing all its labels,
/// on every request.
fn series(route: &'static str, method: &'static str, status: StatusCode) -> (Counter, Histogram) {
    type Series = HashMap<(&'static str, &'static str, u16), (Counter, Histogram)>;
    thread_local! {
        static SERIES: RefCell<Series> = RefCell::default();
    }
    SERIES.with_borrow_mut(|series| {
        series
            .entry((route, method, status.as_u16()))
            .or_insert_with(|| register(SharedString::const_str(route), method, status))
            .clone()
    })
}

fn register(route: SharedString, method: &'static str, status: StatusCode) -> (Counter, Histogram) {
    let method = SharedString::const_str(method);
    let status = SharedString::from_owned(status.as_str().to_owned());
    let count = metrics::counter!(
        HTTP_REQUESTS,
        &[
            ("route", route.clone()),
            ("method", method.clone()),
            ("status", status),
        ]
    );
    let time = metrics::histogram!(HTTP_SECONDS, &[("route", route), ("method", method)]);
    (count, time)
}

/// A method as a label: one of RFC 9110's (and PATCH), else `other`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// One DynamoDB call and the capacity it consumed (when the table said).
pub fn dynamodb_call(operation: &'static str, ok: bool, read_units: f64, write_units: f64) {
    let outcome = if ok { "ok" } else { "error" };
    metrics::counter!(DYNAMODB_CALLS, "operation" => operation, "outcome" => outcome).increment(1);
    if read_units > 0.0 {
        metrics::counter!(DYNAMODB_READ_UNITS, "operation" => operation)
            .increment(thousandths(read_units));
    }
    if write_units > 0.0 {
        metrics::counter!(DYNAMODB_WRITE_UNITS, "operation" => operation)
            .increment(thousandths(write_units));
    }
}

/// `units` in thousandths of a unit, rounded.
fn thousandths(units: f64) -> u64 {
    (units * 1_000.0).round() as u64
}

/// A read of the whole table into the view.
pub fn view_refreshed(ok: bool, items: usize) {
    let outcome = if ok { "ok" } else { "error" };
    metrics::counter!(VIEW_REFRESHES, "outcome" => outcome).increment(1);
    metrics::gauge!(VIEW_ITEMS).set(items as f64);
}

/// The view's age, set when the metrics are read.
pub fn view_age(age: Duration) {
    metrics::gauge!(VIEW_AGE).set(age.as_secs_f64());
}

/// The text of `GET /metrics`.
pub fn render() -> String {
    handle().render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumed_capacity_is_counted_in_thousandths() {
        assert_eq!(thousandths(0.5), 500);
        assert_eq!(thousandths(12.5), 12_500);
        assert_eq!(thousandths(2.0), 2_000);
        handle();
        dynamodb_call("Query", true, 1.5, 0.0);
        let text = handle().render();
        assert!(
            text.contains(&format!("# TYPE {DYNAMODB_READ_UNITS} counter")),
            "{text}"
        );
    }
}
