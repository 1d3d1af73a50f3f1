//! Sends one route many requests through the whole application (guard,
//! limits, tracing, the handler, the embedded store) without sockets, with
//! the server's allocator, for instruction counts per request:
//!
//! ```sh
//! cargo build --release -p gco-console --example profile_route
//! valgrind --tool=callgrind target/release/examples/profile_route validate core/benches/inputs/requests/full.json 1000
//! valgrind --tool=callgrind target/release/examples/profile_route validate core/benches/inputs/requests/full.json 11000
//! valgrind --tool=callgrind target/release/examples/profile_route trivial - 1000
//! ```
//!
//! Routes: `trivial` (GET /healthz), `validate` (POST /api/validate with
//! FILE), `get` (GET /api/endpoints/{name} of FILE's endpoint, deployed
//! first). Hyper's parsing and the sockets are left out: they cost every
//! route the same, so the difference between two routes is what the
//! handler adds. Subtract callgrind's total for 1,000 requests from its
//! total for 11,000 and divide by 10,000: both runs carry the start-up,
//! whose clock calibration varies by millions of instructions from run to
//! run (a run of none, subtracted from 1,000, moves the figure by about
//! 2,000 a request).

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, header};
use gco_console::auth::Access;
use gco_console::service::Service;
use gco_console::store::EmbeddedStore;
use http_body_util::BodyExt;
use tower::ServiceExt;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: profile_route trivial|validate|get FILE [COUNT]";
    let route = args.next().expect(usage);
    let file = args.next().expect(usage);
    let count: usize = args.next().map_or(1000, |n| n.parse().expect("a count"));
    let body = if file == "-" {
        String::new()
    } else {
        std::fs::read_to_string(&file).expect("a readable file")
    };

    let root = std::env::temp_dir().join(format!("gco-profile-{}", std::process::id()));
    let (data, dist) = (root.join("data"), root.join("dist"));
    std::fs::create_dir_all(&dist).expect("a temporary directory");
    std::fs::write(dist.join("index.html"), "<!doctype html>").expect("a writable file");
    let store = Arc::new(EmbeddedStore::open(&data).expect("the embedded store opens"));
    let regions = vec!["us-east-1".to_owned(), "eu-west-1".to_owned()];
    let service = Service::new(store, regions, "vllm/vllm-openai:v0.27.1".to_owned());
    let app = gco_console::app::app(service, Access::loopback(None), &PathBuf::from(&dist));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let send = |method: &str, path: &str, body: &str| {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_owned()))
            .expect("a request");
        runtime.block_on(async {
            let response = app.clone().oneshot(request).await.expect("a response");
            let status = response.status().as_u16();
            let bytes = response
                .into_body()
                .collect()
                .await
                .expect("a body")
                .to_bytes();
            (status, bytes.len())
        })
    };

    let (method, path) = match route.as_str() {
        "trivial" => ("GET", "/healthz".to_owned()),
        "validate" => ("POST", "/api/validate".to_owned()),
        "get" => {
            let (status, _) = send("POST", "/api/endpoints", &body);
            assert_eq!(status, 201, "FILE deploys");
            let request = gco_spec::json::parse(&body).expect("FILE is JSON");
            let name = request.as_object().and_then(|o| o.get("endpoint_name"));
            let name = name
                .and_then(|n| n.as_str())
                .expect("FILE names its endpoint");
            ("GET", format!("/api/endpoints/{name}"))
        }
        other => panic!("unknown route {other:?}; {usage}"),
    };
    let body = if method == "GET" { "" } else { &body };
    let mut bytes = 0;
    for _ in 0..count {
        let (status, len) = send(method, &path, body);
        assert_eq!(status, 200, "{method} {path} answers 200");
        bytes += len;
    }
    println!("{count} requests, {bytes} bytes answered");
    let _ = std::fs::remove_dir_all(root);
}
