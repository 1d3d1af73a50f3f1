//! Arbitrary bytes as the body of every route that reads one, through the
//! whole application (guard, limits, auth, JSON reading, the service, the
//! embedded store): never a 5xx, and every refusal has the JSON error shape.
//!
//! The first byte picks the route, the second the content type; the rest is
//! the body. An endpoint `fuzz` exists from the start, so the change routes
//! reach the core's operations.
#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, header};
use gco_console::auth::Access;
use gco_console::service::Service;
use gco_console::store::EmbeddedStore;
use gco_spec::json::{self, Value};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

const ROUTES: [(&str, &str); 9] = [
    ("POST", "/api/validate"),
    ("POST", "/api/endpoints"),
    ("PUT", "/api/endpoints/fuzz/topology"),
    ("PUT", "/api/endpoints/fuzz/store"),
    ("PUT", "/api/endpoints/fuzz/image"),
    ("PUT", "/api/endpoints/fuzz/replicas"),
    ("POST", "/api/endpoints/fuzz/regions"),
    ("POST", "/api/endpoints/fuzz/stop"),
    ("POST", "/api/endpoints/fuzz/start"),
];

const CONTENT_TYPES: [Option<&str>; 4] = [
    Some("application/json"),
    Some("application/json; charset=utf-8"),
    Some("text/plain"),
    None,
];

struct Harness {
    runtime: tokio::runtime::Runtime,
    app: Router,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("gco-fuzz-http-{}", std::process::id()));
        let (data, dist) = (root.join("data"), root.join("dist"));
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(dist.join("index.html"), "<!doctype html><title>GCO console</title>").unwrap();
        let store = Arc::new(EmbeddedStore::open(&data).expect("the embedded store opens"));
        let regions = vec!["us-east-1".to_owned(), "eu-west-1".to_owned()];
        let service = Service::new(store, regions, "vllm/vllm-openai:v0.27.1".to_owned());
        let harness = Harness {
            runtime: tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
            app: gco_console::app::app(service, Access::loopback(None), &PathBuf::from(&dist)),
        };
        let seed = br#"{"endpoint_name": "fuzz", "mooncake_mode": "both", "prefill_replicas": 1}"#;
        let (status, _) = harness.send("POST", "/api/endpoints", Some("application/json"), seed);
        assert_eq!(status, 201, "the fuzz endpoint is deployed");
        harness
    })
}

impl Harness {
    fn send(&self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> (u16, Vec<u8>) {
        // A loopback server answers requests naming a loopback host only.
        let mut request = Request::builder().method(method).uri(path).header(header::HOST, "127.0.0.1");
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let request = request.body(Body::from(body.to_vec())).unwrap();
        self.runtime.block_on(async {
            let response = self.app.clone().oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            (status, response.into_body().collect().await.unwrap().to_bytes().to_vec())
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let [route, content_type, body @ ..] = data else { return };
    let (method, path) = ROUTES[usize::from(*route) % ROUTES.len()];
    let content_type = CONTENT_TYPES[usize::from(*content_type) % CONTENT_TYPES.len()];
    let (status, reply) = harness().send(method, path, content_type, body);
    assert!(status < 500, "{method} {path}: {status} {}", String::from_utf8_lossy(&reply));
    let reply = std::str::from_utf8(&reply).expect("replies are UTF-8");
    let reply = json::parse(reply).expect("replies are JSON");
    if status >= 400 {
        let error = reply.as_object().and_then(|o| o.get("error")).and_then(Value::as_str);
        let errors = reply.as_object().and_then(|o| o.get("errors"));
        assert!(error.is_some_and(|e| !e.is_empty()), "{status}: no error summary in {reply:?}");
        assert!(matches!(errors, Some(Value::List(_))), "{status}: no errors list in {reply:?}");
    }
});
