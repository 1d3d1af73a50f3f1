//! The whole HTTP application: API, console files, and the layers around them.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::{HeaderValue, Request, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::CompressionLevel;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::SizeAbove;
use tower_http::request_id::PropagateRequestIdLayer;
use tower_http::trace::{DefaultOnResponse, OnResponse, TraceLayer};

use crate::api::{self, AppState, MAX_BODY_BYTES};
use crate::auth::{Access, authorize};
use crate::service::Service;

pub use crate::console_files::CONTENT_SECURITY_POLICY;

pub use crate::api::{CLIENT_REQUEST_ID, REQUEST_ID};

/// The whole application: [`routes`] inside [`layered`], with `GET
/// /metrics`.
pub fn app(service: Service, access: Access, dist: &Path) -> Router {
    app_with(service, access, dist, true)
}

/// [`app`], with `GET /metrics` or without it (when `--metrics-addr` serves
/// it on its own listener: [`metrics_app`]).
pub fn app_with(service: Service, access: Access, dist: &Path, with_metrics: bool) -> Router {
    let service = service.with_auth(access.mode());
    app_shared(Arc::new(service), access, dist, with_metrics)
}

/// [`app_with`] over a service shared with another listener.
pub fn app_shared(state: AppState, access: Access, dist: &Path, with_metrics: bool) -> Router {
    let mut routes = routes(Arc::clone(&state), dist);
    if let Some(oidc) = access.oidc() {
        routes = routes.merge(oidc.router());
    }
    if let Some(sign_out) = access.alb_sign_out() {
        routes = routes.merge(sign_out.router());
    }
    if with_metrics {
        routes = routes.merge(metrics_routes(state));
    }
    layered(routes, access)
}

/// `GET /metrics` alone, for its own listener (`--metrics-addr`): served
/// without an identity, to the hosts `access` admits.
pub fn metrics_app(service: Arc<Service>, access: Access) -> Router {
    layered(metrics_routes(service), access.for_metrics())
}

/// Where the metrics are served.
pub use crate::metrics::PATH as METRICS;

fn metrics_routes(state: AppState) -> Router {
    Router::new()
        .route(METRICS, axum::routing::get(metrics_text))
        .with_state(state)
}

/// The metrics in Prometheus' text format.
async fn metrics_text(State(service): State<AppState>) -> Response {
    if let Some(freshness) = service.freshness() {
        crate::metrics::view_age(freshness.age);
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        crate::metrics::render(),
    )
        .into_response()
}

/// The liveness answer of `GET /healthz` (documented with the API): also
/// the trivial route the load figures compare the API's routes with.
pub use crate::api::healthz;

/// API answers over a kilobyte travel compressed (brotli or gzip, as the
/// request allows) at a fast level: a list of a hundred endpoints is about
/// 200 KB of JSON. An answer keeps its `ETag`: the tag names the record's
/// version (`version.rs`), whatever the coding, and `Vary: Accept-Encoding`
/// keeps a cache from mixing the forms.
fn api_compression() -> CompressionLayer<SizeAbove> {
    CompressionLayer::new()
        .quality(CompressionLevel::Precise(4))
        .compress_when(SizeAbove::new(1024))
}

/// The API and the console files, without the layers.
pub fn routes(state: AppState, dist: &Path) -> Router {
    // Installed before the first request is counted.
    crate::metrics::handle();
    let api = api::router()
        .route("/api", axum::routing::any(api::not_found))
        .route("/api/", axum::routing::any(api::not_found))
        .route("/api/{*rest}", axum::routing::any(api::not_found))
        .with_state(state)
        // One stack per route, outermost first: the count (a layer of the
        // routes, which knows the one axum matched), the compression, the
        // body limit. Each `Router::layer` would box a service of its own
        // per route, cloned with every request.
        .layer(
            ServiceBuilder::new()
                .layer(axum::middleware::from_fn(crate::metrics::track))
                .layer(api_compression())
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        );

    api.merge(crate::console_files::router(dist))
}

/// `routes` inside the layers every request passes: request ids, tracing,
/// the error log, the guard (with the security headers) and who may ask
/// ([`authorize`], a layer of the routes: it reads the route axum matched).
fn layered(routes: Router, access: Access) -> Router {
    let routes = routes.layer(axum::middleware::from_fn_with_state(access, authorize));
    // The layers wrap the router once, outside it. Added with
    // `Router::layer`, each would wrap every route in a boxed service of its
    // own, and every request would clone that stack of boxes: about 90
    // allocations a request, whatever the route.
    let layers = ServiceBuilder::new()
        .map_request(assign_request_ids)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(PropagateRequestIdLayer::new(CLIENT_REQUEST_ID))
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
                let id = header(REQUEST_ID).unwrap_or("-");
                match header(CLIENT_REQUEST_ID) {
                    Some(client_id) => tracing::info_span!("request", id, client_id, method = %req.method(), path = %req.uri().path(), who = tracing::field::Empty),
                    None => tracing::info_span!("request", id, method = %req.method(), path = %req.uri().path(), who = tracing::field::Empty),
                }
            })
            // Errors are logged here, once, in the request's span.
            .on_response(|response: &Response, latency, span: &tracing::Span| {
                DefaultOnResponse::default().on_response(response, latency, span);
                crate::error::log_answer(response);
            }),
        )
        .layer(axum::middleware::from_fn(crate::guard::guard));
    Router::new().fallback_service(layers.service(routes))
}

/// Longest request id taken from a client.
const MAX_CLIENT_REQUEST_ID: usize = 64;

/// Every request gets an id of the console's own, a UUIDv7 (unique across
/// processes and restarts, ordered by time), as [`REQUEST_ID`]. A client's
/// `X-Request-Id` is kept beside it as [`CLIENT_REQUEST_ID`] (it ties their
/// logs to ours) when it is one short token; anything else, which would be
/// echoed back and written into every log line of the request, is dropped.
/// A client cannot set either: what it sends as [`CLIENT_REQUEST_ID`] is
/// dropped too.
fn assign_request_ids<B>(mut request: Request<B>) -> Request<B> {
    let usable = |v: &HeaderValue| {
        (1..=MAX_CLIENT_REQUEST_ID).contains(&v.len())
            && v.as_bytes()
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
    };
    let headers = request.headers_mut();
    headers.remove(CLIENT_REQUEST_ID);
    let sent: Vec<HeaderValue> = headers.get_all(REQUEST_ID).iter().cloned().collect();
    if let [id] = sent.as_slice()
        && usable(id)
    {
        headers.insert(CLIENT_REQUEST_ID, id.clone());
    }
    let mut ours = uuid::Uuid::encode_buffer();
    let ours = uuid::Uuid::now_v7().hyphenated().encode_lower(&mut ours);
    headers.insert(
        REQUEST_ID,
        HeaderValue::from_str(ours).expect("a UUID is a header value"),
    );
    request
}
