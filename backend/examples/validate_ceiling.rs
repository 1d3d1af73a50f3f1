//! How fast `POST /api/validate` could be, stage by stage: the real server
//! (same layers, allocator and connection handling) with probe routes that
//! each do part of validate's work on the same body and answer with the
//! same bytes. `scripts/benchmarks.sh ceiling` runs wrk against each and
//! reports its req/s over the trivial route's, as the http part does for
//! the real routes.
//!
//! ```sh
//! cargo run --release -p gco-console --example validate_ceiling -- \
//!     127.0.0.1:8090 core/benches/inputs/requests/full.json /tmp/ceiling-store
//! ```
//!
//! Probes (POST, under `/api/` so the guard treats them as API answers):
//! - `ceiling/read`: read the body, check it is UTF-8, answer validate's
//!   answer for FILE (made at start-up by the real route);
//! - `ceiling/write`: as `read`, writing the answer from its tree on each
//!   request, as every real answer is written;
//! - `ceiling/scan`: as `read`, after checking the body's JSON syntax
//!   without building anything (`json::lazy`, the validator's fast path);
//! - `ceiling/scan-write`: `scan`, then the answer written as in `write`;
//! - `ceiling/tree`: as `read`, after parsing the body into a tree;
//! - `ceiling/tree-write`: `tree`, then the answer written as in `write`.
//!
//! The real validate is `tree-write` plus the deploy checks and the spec's
//! assembly. A probe that answers fixed bytes for any body is no validator;
//! these exist only to measure.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use gco_console::app::{layered, routes};
use gco_console::auth::Access;
use gco_console::server::{ServeLimits, serve};
use gco_console::service::Service;
use gco_console::store::EmbeddedStore;
use gco_spec::json::{self, Value};
use http_body_util::BodyExt;
use tower::ServiceExt;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Validate's answer for the file, as bytes and as the tree they print.
struct Answer {
    bytes: Bytes,
    tree: Value,
}

impl Answer {
    fn fixed(&self) -> Response {
        json_answer(self.bytes.clone())
    }

    fn written(&self) -> Response {
        json_answer(Bytes::from(self.tree.to_json()))
    }
}

fn json_answer(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A probe's refusal of a body it cannot read (400 with this text).
type Refusal = String;

fn utf8(body: &Bytes) -> Result<&str, Refusal> {
    std::str::from_utf8(body).map_err(|_| "not UTF-8".to_owned())
}

fn scanned(body: &Bytes) -> Result<(), Refusal> {
    json::lazy::parse(utf8(body)?)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn parsed(body: &Bytes) -> Result<(), Refusal> {
    json::parse_limited(utf8(body)?, 32)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The probe routes; `answer` is filled once the app is built.
fn probes(answer: Arc<OnceLock<Answer>>) -> Router {
    let route = |stage: fn(&Answer, &Bytes) -> Result<Response, Refusal>| {
        let answer = Arc::clone(&answer);
        post(move |body: Bytes| async move {
            let answer = answer.get().expect("the answer is made before serving");
            stage(answer, &body).unwrap_or_else(|e| (StatusCode::BAD_REQUEST, e).into_response())
        })
    };
    Router::new()
        .route(
            "/api/ceiling/read",
            route(|a, b| utf8(b).map(|_| a.fixed())),
        )
        .route(
            "/api/ceiling/write",
            route(|a, b| utf8(b).map(|_| a.written())),
        )
        .route(
            "/api/ceiling/scan",
            route(|a, b| scanned(b).map(|()| a.fixed())),
        )
        .route(
            "/api/ceiling/scan-write",
            route(|a, b| scanned(b).map(|()| a.written())),
        )
        .route(
            "/api/ceiling/tree",
            route(|a, b| parsed(b).map(|()| a.fixed())),
        )
        .route(
            "/api/ceiling/tree-write",
            route(|a, b| parsed(b).map(|()| a.written())),
        )
}

/// Validate's answer for `body`, from the real route of `app`.
async fn validate_answer(app: &Router, body: String) -> Answer {
    let request = Request::post("/api/validate")
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .expect("a request");
    let response = app.clone().oneshot(request).await.expect("an answer");
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "validate refused the file"
    );
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    let tree = json::parse(std::str::from_utf8(&bytes).expect("UTF-8")).expect("JSON");
    assert_eq!(
        tree.to_json().as_bytes(),
        &bytes[..],
        "the answer prints back as sent"
    );
    Answer { bytes, tree }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: validate_ceiling ADDR FILE DATA_DIR";
    let addr: SocketAddr = args.next().expect(usage).parse().expect("an address");
    let body = std::fs::read_to_string(args.next().expect(usage)).expect("a readable file");
    let data = PathBuf::from(args.next().expect(usage));

    let store = Arc::new(EmbeddedStore::open(&data).expect("the embedded store opens"));
    let regions = vec!["us-east-1".to_owned(), "eu-west-1".to_owned()];
    let service = Service::new(store, regions, "vllm/vllm-openai:v0.27.1".to_owned());
    let answer = Arc::new(OnceLock::new());
    // The probes sit beside the real routes, inside the same layers.
    let app = layered(
        routes(service, &PathBuf::from("/nonexistent")).merge(probes(Arc::clone(&answer))),
        Access::loopback(None),
    );
    let _ = answer.set(validate_answer(&app, body).await);

    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .expect("the address is free");
    eprintln!("validate_ceiling: listening on http://{addr}");
    serve(
        listener,
        app,
        ServeLimits::default(),
        std::future::pending(),
    )
    .await;
}
