//! One rule set: for every deploy request, the console's editor (the core's
//! `plan_deploy` in the browser, with the server's `/api/config` defaults)
//! and the server's `/api/validate` give the same errors and the same
//! warnings, path and message alike. Requests are generated from pieces
//! that reach each rule (names the API cannot address, sizes, regions,
//! values the table cannot hold, ...) and sent through the whole
//! application as the editor sends them.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, header};
use gco_console::auth::Access;
use gco_console::service::Service;
use gco_console::store::EmbeddedStore;
use gco_spec::json::{Value, parse};
use gco_spec::{DeployContext, Frameworks, plan_deploy};
use http_body_util::BodyExt;
use proptest::prelude::*;
use tower::ServiceExt;

/// Each field with JSON texts that reach its rules, good and bad.
fn fields() -> Vec<(&'static str, Vec<String>)> {
    let long = format!("\"{}\"", "a".repeat(2049));
    let wide = format!("1{}", "0".repeat(40));
    let s = |v: &[&str]| v.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
    vec![
        (
            "endpoint_name",
            [
                s(&[
                    r#""chat""#,
                    r#""chat pd""#,
                    r#""a/b""#,
                    r#""..""#,
                    r#""Chat""#,
                    r#""3b""#,
                    r#""""#,
                    r#"" ""#,
                    r#""a%20b""#,
                    r#""x\u2028""#,
                    r#""x\ud800""#,
                    r#""llama-3-pd""#,
                    "1",
                    "null",
                ]),
                vec![long, format!("\"{}\"", "b".repeat(60))],
            ]
            .concat(),
        ),
        (
            "image",
            s(&[
                r#""vllm/vllm-openai:v1""#,
                r#""""#,
                r#"" ""#,
                r#""a b""#,
                "null",
                "5",
                r#""123456789012.dkr.ecr.us-east-1.amazonaws.com/x:1""#,
            ]),
        ),
        (
            "target_regions",
            s(&[
                "[]",
                r#"["us-east-1"]"#,
                r#"["us-east-1", "eu-west-1", "us-east-1"]"#,
                r#"["bad"]"#,
                r#""us-east-1""#,
                "null",
            ]),
        ),
        (
            "mooncake_mode",
            s(&[
                r#""both""#,
                r#""disaggregated""#,
                r#""store""#,
                r#""x""#,
                "null",
                "1",
            ]),
        ),
        (
            "prefill_replicas",
            [
                s(&[
                    "0", "1", "2", "1000", "1001", "-1", r#""2""#, "1.0", "null", "true",
                ]),
                vec![wide.clone()],
            ]
            .concat(),
        ),
        ("decode_replicas", s(&["1", "3", "0", "1001", "2.5"])),
        (
            "mooncake_store",
            s(&[
                r#"{"enabled": true, "global_segment_size": "4 GiB"}"#,
                r#"{"global_segment_size": "8GB", "local_buffer_size": 4294967296}"#,
                r#"{"global_segment_size": "x"}"#,
                r#"{"local_buffer_size": -1, "offload": "tape"}"#,
                r#"{"cold_tier_enabled": true}"#,
                "[]",
            ]),
        ),
        (
            "mooncake_transfer",
            s(&[
                r#"{"protocol": "tcp"}"#,
                r#"{"protocol": "x", "device_name": 3}"#,
                r#"{"protocl": "rdma"}"#,
            ]),
        ),
        (
            "env",
            s(&[
                r#"{"A": "1"}"#,
                r#"{"1X": "2", "B": 3}"#,
                "[]",
                r#"{"MODEL": "Qwen/Qwen3-8B"}"#,
            ]),
        ),
        (
            "framework",
            s(&[r#""vllm""#, r#""sglang""#, r#""tgi""#, r#""x""#, "null"]),
        ),
        ("port", s(&["8000", "0", "70000", r#""80""#])),
        ("replicas", [s(&["1", "-1"]), vec![wide]].concat()),
        (
            "extra_args",
            s(&[r#"["--x"]"#, r#"["--x", 2]"#, r#""--x""#]),
        ),
        ("namespace", s(&[r#""team-a""#, r#""Team A""#])),
        ("labels", s(&[r#"{"team": "a"}"#, r#"{"team": 1}"#])),
        ("prefil", s(&["2"])),
    ]
}

/// A request: a subset of the fields (the name nearly always), each mostly with
/// its first, valid text, so both verdicts come up often.
fn request() -> impl Strategy<Value = String> {
    let parts: Vec<_> = fields()
        .into_iter()
        .map(|(key, texts)| {
            let presence = if key == "endpoint_name" { 0.99 } else { 0.5 };
            let text = prop_oneof![
                9 => Just(texts[0].clone()),
                1 => proptest::sample::select(texts),
            ];
            proptest::option::weighted(presence, text)
                .prop_map(move |t| t.map(|t| format!("\"{key}\": {t}")))
        })
        .collect();
    parts.prop_map(|chosen| {
        format!(
            "{{{}}}",
            chosen.into_iter().flatten().collect::<Vec<_>>().join(", ")
        )
    })
}

struct App {
    router: axum::Router,
    runtime: tokio::runtime::Runtime,
    _dir: PathBuf,
}

impl App {
    fn new(frameworks: Frameworks) -> App {
        let dir =
            std::env::temp_dir().join(format!("gco-parity-{}-{frameworks}", std::process::id()));
        let dist = dir.join("dist");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(dist.join("index.html"), "<!doctype html>").unwrap();
        let store = Arc::new(EmbeddedStore::open(&dir.join("data")).unwrap());
        let regions = vec!["us-east-1".to_owned(), "eu-west-1".to_owned()];
        let service = Service::new(store, regions, "vllm/vllm-openai:v0.27.1".to_owned())
            .with_frameworks(frameworks);
        let router = gco_console::app::app(service, Access::loopback(None), &dist);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        App {
            router,
            runtime,
            _dir: dir,
        }
    }

    fn call(&self, method: &str, path: &str, body: String) -> Value {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap();
        self.runtime.block_on(async {
            let response = self.router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), 200, "{method} {path}");
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            parse(std::str::from_utf8(&bytes).unwrap()).unwrap()
        })
    }
}

/// `(path, message)` of each diagnostic in an answer's list.
fn listed(answer: &Value, key: &str) -> Vec<(String, String)> {
    let Some(Value::List(items)) = answer.as_object().and_then(|o| o.get(key)) else {
        panic!("no {key} in {}", answer.to_json());
    };
    items
        .iter()
        .map(|d| {
            let o = d.as_object().unwrap();
            let text = |k| o.get(k).and_then(Value::as_str).unwrap().to_owned();
            (text("path"), text("message"))
        })
        .collect()
}

#[test]
fn the_editor_and_the_server_give_the_same_verdict() {
    // Under GCO's current frameworks and under an older GCO's.
    for frameworks in ["vllm,sglang", "vllm,tgi"] {
        same_verdicts(Frameworks::parse_list(frameworks).unwrap());
    }
}

fn same_verdicts(frameworks: Frameworks) {
    let app = App::new(frameworks);
    // The editor's context comes from /api/config, as the console reads it.
    let config = app.call("GET", "/api/config", String::new());
    let config = config.as_object().unwrap();
    let regions: Vec<String> = match config.get("deployed_regions") {
        Some(Value::List(items)) => items
            .iter()
            .map(|i| i.as_str().unwrap().to_owned())
            .collect(),
        other => panic!("deployed_regions: {other:?}"),
    };
    let image = config
        .get("default_image")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let named: Vec<String> = match config.get("frameworks") {
        Some(Value::List(items)) => items
            .iter()
            .map(|i| i.as_str().unwrap().to_owned())
            .collect(),
        other => panic!("frameworks: {other:?}"),
    };
    let ctx = DeployContext {
        deployed_regions: Some(&regions),
        default_image: &image,
        frameworks: Frameworks::new(&mut named.iter().map(String::as_str)).unwrap(),
    };
    assert_eq!(ctx.frameworks, frameworks);
    // And what each region's monitor is configured with, as it reads it.
    let monitors = gco_spec::MonitorSettings::from_value(&app.call(
        "GET",
        "/api/monitor-settings",
        String::new(),
    ))
    .unwrap();
    let (accepted, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 400,
        ..ProptestConfig::default()
    });
    runner
        .run(&request(), |text| {
            // The editor's state is the parsed request; it sends its JSON.
            let state = parse(&text).unwrap();
            let editor = gco_spec::plan_deploy_with_monitors(state.clone(), &ctx, &monitors).report;
            let server = app.call("POST", "/api/validate", state.to_json());
            let pairs = |severe: bool| -> Vec<(String, String)> {
                editor
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error() == severe)
                    .map(|d| (d.path.clone(), d.message.clone()))
                    .collect()
            };
            prop_assert_eq!(pairs(true), listed(&server, "errors"), "errors of {}", text);
            prop_assert_eq!(
                pairs(false),
                listed(&server, "warnings"),
                "warnings of {}",
                text
            );
            let ok = server.as_object().unwrap().get("ok").cloned();
            prop_assert_eq!(ok, Some(Value::Bool(editor.is_ok())));
            let verdict = if editor.is_ok() { &accepted } else { &refused };
            verdict.set(verdict.get() + 1);
            Ok(())
        })
        .unwrap();
    // The generator reaches both verdicts, the refusals this test is about
    // among them.
    let (accepted, refused) = (accepted.get(), refused.get());
    assert!(
        accepted > 40 && refused > 40,
        "{accepted} accepted, {refused} refused"
    );
    for name in [r#""chat pd""#, r#""a/b""#] {
        let state = parse(&format!(r#"{{"endpoint_name": {name}, "image": "x"}}"#)).unwrap();
        assert!(
            !plan_deploy(&state, &ctx).report.is_ok(),
            "{name} is refused by the editor"
        );
    }
}
