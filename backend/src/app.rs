//! The whole HTTP application: API, console files, and the layers around them.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::{ServiceBuilder, ServiceExt};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::api::{self, AppState, MAX_BODY_BYTES};
use crate::auth::{Access, authorize};
use crate::service::Service;

/// Console pages may run their own script and wasm and talk to this origin,
/// and nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

#[derive(Clone, Default)]
struct RequestIds(Arc<AtomicU64>);

impl MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("req-{n:08x}"))
            .ok()
            .map(RequestId::new)
    }
}

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
    if with_metrics {
        routes = routes.merge(metrics_routes(state));
    }
    layered(routes, access)
}

/// `GET /metrics` alone, for its own listener.
pub fn metrics_app(service: Arc<Service>, access: Access) -> Router {
    layered(metrics_routes(service), access)
}

fn metrics_routes(state: AppState) -> Router {
    Router::new()
        .route("/metrics", axum::routing::get(metrics_text))
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

/// The API and the console files, without the layers.
pub fn routes(state: AppState, dist: &Path) -> Router {
    // Installed before the first request is counted.
    crate::metrics::handle();
    let api = api::router()
        .route("/api", axum::routing::any(api::not_found))
        .route("/api/", axum::routing::any(api::not_found))
        .route("/api/{*rest}", axum::routing::any(api::not_found))
        // A route layer: only a matched route knows its template.
        .route_layer(axum::middleware::from_fn(crate::metrics::track))
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));

    let pages =
        axum::routing::any(console_page).with_state(ServeFile::new(dist.join("index.html")));
    let console = ServeDir::new(dist).fallback(pages);
    let console = Router::new()
        .fallback_service(console)
        .layer(axum::middleware::map_request(without_ranges))
        .layer(axum::middleware::map_response(revalidate_pages))
        .layer(SetResponseHeaderLayer::overriding(
            header::ACCEPT_RANGES,
            HeaderValue::from_static("none"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ));
    api.merge(console)
}

/// The console's files are answered whole: a server may ignore `Range`
/// (RFC 9110, section 14.2), and the files are small. `ServeDir` would
/// answer 416 to a range unit it does not know, which the RFC says to
/// ignore.
async fn without_ranges(mut request: Request<Body>) -> Request<Body> {
    request.headers_mut().remove(header::RANGE);
    request
}

/// The console's page is revalidated at every navigation (`no-cache`; its
/// other files may be cached): behind a load balancer that signs users in,
/// a page the browser took from its cache never reaches the load balancer,
/// so the page's "reload the page to sign in again" would load it again
/// without signing in.
async fn revalidate_pages(mut response: Response) -> Response {
    let page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if page {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    response
}

/// What a path that is no console file gets: the console's page, whose
/// script picks what to show from the path (`/endpoints/pd`), unless the
/// request is for a file (a name with an extension, asked for without
/// asking for a page): a missing `app.js` is a 404, not a page served as
/// script.
async fn console_page(State(index): State<ServeFile>, request: Request<Body>) -> Response {
    let asks_for_page = request
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.contains("text/html")));
    let last_segment = request.uri().path().rsplit('/').next().unwrap_or("");
    if asks_for_page || !last_segment.contains('.') {
        index.oneshot(request).await.into_response()
    } else {
        api::ApiError::new(StatusCode::NOT_FOUND, "no such console file").into_response()
    }
}

/// `routes` inside the layers every request passes: request ids, tracing,
/// security headers, the guard and who may ask ([`authorize`]).
fn layered(routes: Router, access: Access) -> Router {
    let request_id = HeaderName::from_static("x-request-id");
    // The layers wrap the router once, outside it. Added with
    // `Router::layer`, each would wrap every route in a boxed service of its
    // own, and every request would clone that stack of boxes: about 90
    // allocations a request, whatever the route.
    let layers = ServiceBuilder::new()
        .map_request(drop_unusable_request_id)
        .layer(SetRequestIdLayer::new(
            request_id.clone(),
            RequestIds::default(),
        ))
        .layer(PropagateRequestIdLayer::new(request_id))
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                let id = req
                    .headers()
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                tracing::info_span!("request", id, method = %req.method(), path = %req.uri().path(), who = tracing::field::Empty)
            }),
        )
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(axum::middleware::from_fn(crate::guard::guard))
        .layer(axum::middleware::from_fn_with_state(access, authorize));
    Router::new().fallback_service(layers.service(routes))
}

/// Longest request id taken from a client.
const MAX_CLIENT_REQUEST_ID: usize = 64;

/// A client's `X-Request-Id` is kept (it ties their logs to ours) when it is
/// a short token; anything else, which would be echoed back and written into
/// every log line of the request, is replaced by one of ours.
fn drop_unusable_request_id<B>(mut request: Request<B>) -> Request<B> {
    let usable = |v: &HeaderValue| {
        (1..=MAX_CLIENT_REQUEST_ID).contains(&v.len())
            && v.as_bytes()
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
    };
    let ids = request.headers().get_all("x-request-id");
    if ids.iter().count() > 1 || ids.iter().any(|v| !usable(v)) {
        request.headers_mut().remove("x-request-id");
    }
    request
}
