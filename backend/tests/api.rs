//! Every route with good and bad input, through the whole HTTP application
//! on the embedded store.

mod common;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use std::sync::Arc;

use common::TempDir;
use gco_console::auth::Access;
use gco_console::store::Store;
use gco_spec::json::{Value, parse};
use http_body_util::BodyExt;
use tower::ServiceExt;

struct Api {
    app: Router,
    /// The store under the app, for records other writers of the table put there.
    store: Arc<dyn Store>,
    _dir: TempDir,
    _dist: TempDir,
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
    text: String,
}

impl Reply {
    fn get(&self, path: &str) -> Value {
        let mut v = self.body.clone();
        for key in path.split('.') {
            v = match &v {
                Value::Object(o) => o.get(key).cloned().unwrap_or(Value::Null),
                Value::List(l) => l
                    .get(key.parse::<usize>().unwrap())
                    .cloned()
                    .unwrap_or(Value::Null),
                _ => Value::Null,
            };
        }
        v
    }

    fn str(&self, path: &str) -> String {
        self.get(path).as_str().unwrap_or_default().to_owned()
    }

    fn first_error(&self) -> (String, String) {
        (self.str("errors.0.path"), self.str("errors.0.message"))
    }

    /// The status with the first error's path and message.
    fn refusal(&self) -> (StatusCode, String, String) {
        let (path, message) = self.first_error();
        (self.status, path, message)
    }
}

const TOKEN: &str = "0123456789abcdef-test-token";

impl Api {
    fn new() -> Api {
        Api::with_token(None)
    }

    fn with_token(token: Option<&str>) -> Api {
        Api::with_access(Access::loopback(token))
    }

    fn with_access(access: Access) -> Api {
        Api::over(TempDir::new("api"), access)
    }

    /// The app over the embedded store in `dir`, with what is stored there.
    fn over(dir: TempDir, access: Access) -> Api {
        let dist = TempDir::new("dist");
        std::fs::write(
            dist.path().join("index.html"),
            "<!doctype html><title>GCO console</title>",
        )
        .unwrap();
        let store = common::embedded(&dir);
        let service = common::service(Arc::clone(&store));
        let app = gco_console::app::app(service, access, dist.path());
        Api {
            app,
            store,
            _dir: dir,
            _dist: dist,
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        let named = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        if !named("host") {
            req = req.header(header::HOST, "127.0.0.1");
        }
        if body.is_some() && !named("content-type") {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .unwrap();
        let response = self.app.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = parse(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            text,
        }
    }

    async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[]).await
    }

    async fn post(&self, path: &str, body: &str) -> Reply {
        self.send("POST", path, Some(body), &[]).await
    }

    async fn put(&self, path: &str, body: &str) -> Reply {
        self.send("PUT", path, Some(body), &[]).await
    }

    async fn deploy_split(&self, name: &str) -> Reply {
        let r = self
            .post("/api/endpoints", &format!(r#"{{"endpoint_name": "{name}", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4}}"#))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r
    }
}

#[tokio::test]
async fn health_and_openapi() {
    let api = Api::new();
    let r = api.get("/healthz").await;
    assert_eq!((r.status, r.str("status").as_str()), (StatusCode::OK, "ok"));
    let r = api.get("/api/openapi.json").await;
    assert_eq!(r.status, StatusCode::OK);
    let paths = r.get("paths");
    for route in [
        "/api/config",
        "/api/validate",
        "/api/endpoints",
        "/api/endpoints/{name}",
        "/api/endpoints/{name}/topology",
        "/api/endpoints/{name}/store",
        "/api/endpoints/{name}/image",
        "/api/endpoints/{name}/replicas",
        "/api/endpoints/{name}/stop",
        "/api/endpoints/{name}/start",
        "/api/endpoints/{name}/regions",
        "/api/endpoints/{name}/regions/{region}",
    ] {
        assert!(
            paths.as_object().unwrap().contains_key(route),
            "{route} is not documented"
        );
    }
    // The refusals any route may give are documented where they apply:
    // a host not answered to anywhere, another site's page on mutations.
    for (route, operations) in paths.as_object().unwrap().str_entries() {
        for (method, operation) in operations.as_object().unwrap().str_entries() {
            let responses = operation.as_object().unwrap().get("responses").unwrap();
            let documents = |status: &str| responses.as_object().unwrap().contains_key(status);
            assert!(documents("421"), "{method:?} {route:?}: 421");
            assert_eq!(
                documents("401"),
                documents("403"),
                "{method:?} {route:?}: 403"
            );
        }
    }
    assert_eq!(
        r.headers["cache-control"], "no-store",
        "API answers are not cached"
    );
    for path in ["/api", "/api/", "/api/nothing/here"] {
        let r = api.get(path).await;
        assert_eq!(
            (r.status, r.str("error").as_str()),
            (StatusCode::NOT_FOUND, "no such API route"),
            "{path}"
        );
        assert_eq!(r.headers["cache-control"], "no-store", "{path}");
    }
}

#[tokio::test]
async fn config_tells_the_deploy_defaults() {
    let api = Api::new();
    let r = api.get("/api/config").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.get("deployed_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#
    );
    assert_eq!(
        r.str("default_image"),
        gco_spec::limits::DEFAULT_MOONCAKE_IMAGE
    );
}

#[tokio::test]
async fn validate_returns_diagnostics_and_the_spec() {
    let api = Api::new();
    let r = api
        .post(
            "/api/validate",
            r#"{"endpoint_name": "pd", "mooncake_mode": "both", "prefill_replicas": 2}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.get("ok"), Value::Bool(true));
    assert_eq!(
        r.get("spec.mooncake.topology").to_json(),
        r#"{"prefill": 2, "decode": 1}"#
    );
    let r = api.post("/api/validate", r#"{"endpoint_name": "pd", "mooncake_mode": "both", "prefill_replicas": 1001, "prefil": 1}"#).await;
    assert_eq!(r.get("ok"), Value::Bool(false));
    assert_eq!(
        r.first_error(),
        (
            "mooncake.topology.prefill".into(),
            "mooncake.topology.prefill out of range [1, 1000]: 1001".into()
        )
    );
    assert_eq!(r.str("warnings.0.path"), "prefil");
    assert_eq!(r.get("spec"), Value::Null);
    // Every body is a deploy request, as the console's editor holds one:
    // a spec's fields alone lack the name.
    let r = api
        .post("/api/validate", r#"{"image": "x", "port": "80"}"#)
        .await;
    assert_eq!(
        r.first_error(),
        ("endpoint_name".into(), "endpoint_name is required".into())
    );
    assert_eq!(r.str("errors.1.path"), "port");
    assert_eq!(
        r.str("errors.1.message"),
        "port must be an integer in [1, 65535], got '80'"
    );
    // Not an object: refused as deploy refuses it, not read as a bare block.
    for body in ["[]", "null", "\"pd\""] {
        let r = api.post("/api/validate", body).await;
        assert_eq!(r.get("ok"), Value::Bool(false), "{body}");
        assert_eq!(
            r.first_error(),
            ("".into(), "a deploy request must be a mapping".into()),
            "{body}"
        );
    }
    assert_eq!(
        api.get("/api/endpoints").await.get("endpoints").to_json(),
        "[]",
        "validate stores nothing"
    );
}

#[tokio::test]
async fn hostile_bodies_get_4xx_with_the_error_shape() {
    let api = Api::new();
    let r = api
        .post("/api/endpoints", r#"{"endpoint_name": "x", "#)
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.str("error")
            .starts_with("invalid JSON: Expecting property name"),
        "{}",
        r.text
    );
    assert_eq!(r.str("errors.0.path"), "");
    let text_plain = Request::post("/api/endpoints")
        .header(header::HOST, "127.0.0.1")
        .header("content-type", "text/plain")
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(
        api.app.clone().oneshot(text_plain).await.unwrap().status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    let req_without_type = api
        .app
        .clone()
        .oneshot(
            Request::post("/api/endpoints")
                .header(header::HOST, "127.0.0.1")
                .body(Body::from("{}"))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        req_without_type.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    let r = api
        .send(
            "POST",
            "/api/validate",
            None,
            &[("content-type", "application/json; charset=latin-1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{}", r.text);
    assert_eq!(
        r.str("error"),
        "send the body as Content-Type: application/json (UTF-8)"
    );
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(r#"{"endpoint_name": "gz", "image": "x"}"#),
            &[("content-encoding", "gzip")],
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Encoding".into(),
            "request bodies are not decoded: send them without a Content-Encoding".into()
        )
    );
    assert_eq!(
        api.get("/api/endpoints/gz").await.status,
        StatusCode::NOT_FOUND
    );
    let big = format!(
        r#"{{"endpoint_name": "x", "image": "{}"}}"#,
        "a".repeat(300 * 1024)
    );
    let r = api.post("/api/endpoints", &big).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(r.str("error"), "the body is larger than 256 KiB");
    // Refused by the guard on the declared length, before any route.
    let r = api
        .send(
            "PUT",
            "/api/endpoints/n1/replicas",
            None,
            &[("content-length", "300000")],
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        r.headers["cache-control"], "no-store",
        "a refusal before any route is an API answer too"
    );
    let deep = "[".repeat(100) + &"]".repeat(100);
    let r = api.post("/api/validate", &deep).await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (
            StatusCode::BAD_REQUEST,
            "invalid JSON: Nesting too deep: line 1 column 33 (char 32)"
        )
    );
    let r = api
        .send(
            "POST",
            "/api/validate",
            None,
            &[("content-type", "application/json")],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let invalid_utf8 = Request::post("/api/validate")
        .header(header::HOST, "127.0.0.1")
        .header("content-type", "application/json")
        .body(Body::from(vec![b'"', 0xff, b'"']))
        .unwrap();
    let response = api.app.clone().oneshot(invalid_utf8).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let r = api.get("/api/nope").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (StatusCode::NOT_FOUND, "no such API route")
    );
}

#[tokio::test]
async fn deploy_then_read_list_and_refuse_duplicates() {
    let api = Api::new();
    let r = api.deploy_split("pd").await;
    assert!(r.headers.get(header::ETAG).is_some());
    assert_eq!(r.str("desired_state"), "deploying");
    assert_eq!(
        r.get("target_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#
    );
    let r = api
        .post("/api/endpoints", r#"{"endpoint_name": "pd", "image": "x"}"#)
        .await;
    assert_eq!(
        (r.status, r.first_error().1.as_str()),
        (StatusCode::CONFLICT, "Endpoint 'pd' already exists")
    );
    let r = api.get("/api/endpoints/pd").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.str("spec.image"),
        "vllm/vllm-openai:v0.27.1",
        "the duplicate changed nothing"
    );
    let r = api.get("/api/endpoints/ghost").await;
    assert_eq!(
        (r.status, r.first_error()),
        (
            StatusCode::NOT_FOUND,
            ("endpoint_name".into(), "Endpoint 'ghost' not found".into())
        )
    );

    api.post(
        "/api/endpoints",
        r#"{"endpoint_name": "web", "image": "x", "target_regions": ["ap-south-1"]}"#,
    )
    .await;
    let names = |r: &Reply| r.get("endpoints").as_list_names();
    assert_eq!(
        names(&api.get("/api/endpoints").await),
        ["web", "pd"],
        "newest first"
    );
    assert_eq!(
        names(&api.get("/api/endpoints?region=ap-south-1").await),
        ["web"]
    );
    assert_eq!(
        names(&api.get("/api/endpoints?desired_state=running").await),
        Vec::<String>::new()
    );
    let r = api.get("/api/endpoints?desired_state=bogus").await;
    assert_eq!(
        (r.status, r.str("errors.0.path").as_str()),
        (StatusCode::BAD_REQUEST, "desired_state")
    );
    let r = api
        .get("/api/endpoints?desired_state=bogus&desired_state=running")
        .await;
    assert_eq!(
        (r.status, r.str("errors.0.message").as_str()),
        (
            StatusCode::BAD_REQUEST,
            "desired_state is given more than once"
        )
    );

    // Other parameters are ignored, repeated or not.
    let r = api.get("/api/endpoints?foo=1&foo=2&=&&=").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    // Pages: `next` leads on until it is null; without a limit there is none.
    assert_eq!(api.get("/api/endpoints").await.get("next"), Value::Null);
    let first = api.get("/api/endpoints?limit=1").await;
    assert_eq!(names(&first), ["web"]);
    let next = first.str("next");
    let query = format!("/api/endpoints?limit=1&after={}", next.replace('+', "%2B"));
    let second = api.get(&query).await;
    assert_eq!(
        (second.status, names(&second)),
        (StatusCode::OK, vec!["pd".to_owned()])
    );
    // Pasted unencoded, its `+` reads as a space: the same page.
    let pasted = api
        .get(&format!("/api/endpoints?limit=1&after={next}"))
        .await;
    assert_eq!(pasted.body, second.body);
    assert_eq!(second.get("next"), Value::Null, "pd is the last record");
    assert_eq!(
        names(&api.get("/api/endpoints?limit=1000").await),
        ["web", "pd"]
    );
    for (query, path, message) in [
        (
            "limit=0",
            "limit",
            r#"limit must be an integer in [1, 1000], got "0""#,
        ),
        (
            "limit=1001",
            "limit",
            r#"limit must be an integer in [1, 1000], got "1001""#,
        ),
        (
            "limit=ten",
            "limit",
            r#"limit must be an integer in [1, 1000], got "ten""#,
        ),
        (
            "after=web",
            "after",
            "after must be the next of an earlier page (created_at~endpoint_name)",
        ),
    ] {
        let r = api.get(&format!("/api/endpoints?{query}")).await;
        assert_eq!(
            (r.status, r.first_error()),
            (
                StatusCode::BAD_REQUEST,
                (path.to_owned(), message.to_owned())
            ),
            "{query}"
        );
    }
}

trait Names {
    fn as_list_names(&self) -> Vec<String>;
}

impl Names for Value {
    fn as_list_names(&self) -> Vec<String> {
        match self {
            Value::List(items) => items
                .iter()
                .map(|i| {
                    i.as_object()
                        .unwrap()
                        .get("endpoint_name")
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[tokio::test]
async fn invalid_deploys_store_nothing() {
    let api = Api::new();
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "bad", "mooncake_mode": "both", "decode_replicas": 0, "port": 0}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.str("error"), "the request has 2 errors");
    assert_eq!(
        r.first_error(),
        (
            "mooncake.topology.decode".into(),
            "mooncake.topology.decode out of range [1, 1000]: 0".into()
        )
    );
    assert_eq!(r.str("errors.1.path"), "port");
    assert_eq!(
        api.get("/api/endpoints/bad").await.status,
        StatusCode::NOT_FOUND
    );
    let r = api
        .post("/api/endpoints", r#"["not", "a", "request"]"#)
        .await;
    assert_eq!(
        (r.status, r.str("errors.0.message").as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "a deploy request must be a mapping"
        )
    );
}

#[tokio::test]
async fn every_change_route() {
    let api = Api::new();
    api.deploy_split("pd").await;
    let r = api
        .put(
            "/api/endpoints/pd/topology",
            r#"{"prefill": 3, "decode": 5}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.get("spec.mooncake.topology").to_json(),
        r#"{"prefill": 3, "decode": 5}"#
    );
    let r = api
        .put(
            "/api/endpoints/pd/topology",
            r#"{"prefill": "3", "decode": 5}"#,
        )
        .await;
    assert_eq!(
        (r.status, r.first_error().1.as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "topology prefill count must be an integer in [1, 1000], got '3'"
        )
    );
    let r = api
        .put("/api/endpoints/pd/topology", r#"{"decode": 5}"#)
        .await;
    assert_eq!(
        r.first_error().1,
        "topology prefill count must be an integer in [1, 1000], got None"
    );
    let r = api
        .put(
            "/api/endpoints/pd/store",
            r#"{"enabled": true, "global_segment_size": " 1024 "}"#,
        )
        .await;
    assert_eq!(
        r.get("spec.mooncake.store").to_json(),
        r#"{"enabled": true, "global_segment_size": "1024"}"#
    );
    // An integer too wide for a DynamoDB number is refused at its field
    // (GCO could not write it, and kept as its digits it would be a string
    // where the rules want an integer); nothing is written.
    let before = api.get("/api/endpoints/pd").await.body;
    let wide = format!("1{}", "0".repeat(40));
    let r = api
        .put(
            "/api/endpoints/pd/store",
            &format!(r#"{{"enabled": true, "global_segment_size": "1024", "wide": {wide}}}"#),
        )
        .await;
    assert_eq!(
        (r.status, r.first_error()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            (
                "wide".to_owned(),
                format!(
                    "wide is {wide}, 41 digits; a DynamoDB number holds at most 38, so it cannot be stored"
                )
            )
        )
    );
    assert_eq!(api.get("/api/endpoints/pd").await.body, before);
    let r = api
        .put("/api/endpoints/pd/store", r#"{"cold_tier_enabled": true}"#)
        .await;
    assert_eq!(
        (r.status, r.first_error()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            (
                "mooncake.store.cold_tier_enabled".into(),
                "mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true"
                    .into()
            )
        )
    );
    let r = api
        .put("/api/endpoints/pd/image", r#"{"image": "  img:2 "}"#)
        .await;
    assert_eq!(r.str("spec.image"), "img:2");
    let r = api.put("/api/endpoints/pd/image", r#"{"image": ""}"#).await;
    assert_eq!(
        r.first_error(),
        ("image".into(), "Image must be a non-empty string".into())
    );
    let r = api
        .put("/api/endpoints/pd/replicas", r#"{"replicas": 2}"#)
        .await;
    assert_eq!(
        (r.status, r.first_error().1.as_str()),
        (
            StatusCode::CONFLICT,
            "Endpoint 'pd' uses Mooncake topology; use 'gco inference set-topology' instead of 'gco inference scale'."
        )
    );
    let r = api
        .post("/api/endpoints/pd/regions", r#"{"region": "ap-south-1"}"#)
        .await;
    assert_eq!(
        r.get("target_regions").to_json(),
        r#"["us-east-1", "eu-west-1", "ap-south-1"]"#
    );
    let r = api
        .send("DELETE", "/api/endpoints/pd/regions/us-east-1", None, &[])
        .await;
    assert_eq!(
        r.get("target_regions").to_json(),
        r#"["eu-west-1", "ap-south-1"]"#
    );
    let r = api
        .post("/api/endpoints/pd/regions", r#"{"region": "../etc"}"#)
        .await;
    assert_eq!(
        r.first_error().1,
        "region must be an AWS region such as 'us-east-1', got '../etc'"
    );
    let r = api.send("POST", "/api/endpoints/pd/start", None, &[]).await;
    assert_eq!(
        (r.status, r.first_error().1.as_str()),
        (
            StatusCode::CONFLICT,
            "Endpoint 'pd' is in 'deploying' state; only stopped endpoints can be started."
        )
    );
    assert_eq!(
        api.send("POST", "/api/endpoints/pd/stop", None, &[])
            .await
            .str("desired_state"),
        "stopped"
    );
    assert_eq!(
        api.send("POST", "/api/endpoints/pd/start", None, &[])
            .await
            .str("desired_state"),
        "running"
    );
    assert_eq!(
        api.send("DELETE", "/api/endpoints/pd", None, &[])
            .await
            .str("desired_state"),
        "deleted"
    );
    assert_eq!(
        api.send("DELETE", "/api/endpoints/pd", None, &[])
            .await
            .status,
        StatusCode::OK,
        "delete is idempotent"
    );
    let r = api
        .put(
            "/api/endpoints/pd/topology",
            r#"{"prefill": 1, "decode": 1}"#,
        )
        .await;
    assert_eq!(
        (r.status, r.first_error().1.as_str()),
        (
            StatusCode::CONFLICT,
            "Endpoint 'pd' is deleted and cannot be updated; redeploy it after deletion completes."
        )
    );
    let r = api
        .send("POST", "/api/endpoints/ghost/stop", None, &[])
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = api
        .put("/api/endpoints/plain/replicas", r#"{"replicas": 2}"#)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn stale_etags_change_nothing() {
    let api = Api::new();
    let first = api.deploy_split("pd").await;
    let tag = first.headers[header::ETAG].to_str().unwrap().to_owned();
    let r = api
        .send(
            "PUT",
            "/api/endpoints/pd/topology",
            Some(r#"{"prefill": 5, "decode": 5}"#),
            &[("if-match", &tag)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let newer = r.headers[header::ETAG].to_str().unwrap().to_owned();
    assert_ne!(newer, tag);
    let r = api
        .send(
            "PUT",
            "/api/endpoints/pd/topology",
            Some(r#"{"prefill": 9, "decode": 9}"#),
            &[("if-match", &tag)],
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    assert!(r.str("error").contains("changed since it was read"));
    assert_eq!(
        api.get("/api/endpoints/pd")
            .await
            .get("spec.mooncake.topology")
            .to_json(),
        r#"{"prefill": 5, "decode": 5}"#
    );
    // A weak tag never matches (strong comparison); tags on two lines are
    // one list.
    let weak = format!("W/{newer}");
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[("if-match", &weak)],
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[("if-match", &tag), ("if-match", &newer)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/start",
            None,
            &[("if-match", "*")],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn tokens_guard_every_mutation() {
    let api = Api::with_token(Some(TOKEN));
    let body = r#"{"endpoint_name": "web", "image": "x"}"#;
    let r = api.post("/api/endpoints", body).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.str("error"), "this change needs a valid bearer token");
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(body),
            &[("authorization", "Bearer wrong-token-0000000")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let bearer = format!("Bearer {TOKEN}");
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(body),
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        api.send("DELETE", "/api/endpoints/web", None, &[])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        api.get("/api/endpoints/web").await.status,
        StatusCode::OK,
        "reads need no token"
    );
    assert_eq!(
        api.post("/api/validate", body).await.status,
        StatusCode::OK,
        "validation stores nothing"
    );
    let lowercase = format!("bearer {TOKEN}");
    let r = api
        .send(
            "POST",
            "/api/endpoints/web/stop",
            None,
            &[("authorization", &lowercase)],
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "the scheme is case-insensitive: {}",
        r.text
    );
}

#[tokio::test]
async fn other_sites_pages_cannot_make_changes() {
    let api = Api::new();
    api.deploy_split("pd").await;
    // A plain HTML form on another site: no preflight, no JSON.
    let form = [
        ("origin", "http://evil.example"),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    for (method, path) in [
        ("POST", "/api/endpoints/pd/stop"),
        ("DELETE", "/api/endpoints/pd"),
        ("POST", "/api/endpoints"),
    ] {
        let r = api.send(method, path, Some("x=1"), &form).await;
        assert_eq!(
            r.status,
            StatusCode::FORBIDDEN,
            "{method} {path}: {}",
            r.text
        );
        assert_eq!(
            r.str("error"),
            "changes are refused from other sites' pages"
        );
    }
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[("sec-fetch-site", "cross-site")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        api.get("/api/endpoints/pd").await.str("desired_state"),
        "deploying"
    );
    // The console itself: same origin.
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[
                ("origin", "http://127.0.0.1"),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn on_loopback_only_loopback_names_are_answered() {
    // DNS rebinding: another site's name made to resolve to 127.0.0.1. A
    // token does not stop it reading records, env values and all.
    for api in [Api::new(), Api::with_token(Some(TOKEN))] {
        for host in ["evil.example:8080", "10.1.2.3"] {
            let r = api
                .send("GET", "/api/endpoints", None, &[("host", host)])
                .await;
            assert_eq!(r.status, StatusCode::MISDIRECTED_REQUEST, "{host}");
            assert_eq!(
                r.str("error"),
                "this console answers to localhost, 127.0.0.1, [::1] only; list the name it is reached by in --allowed-hosts"
            );
        }
        for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080"] {
            let r = api
                .send("GET", "/api/endpoints", None, &[("host", host)])
                .await;
            assert_eq!(r.status, StatusCode::OK, "{host}");
        }
    }
    // Listening elsewhere: IP addresses and the listed names are answered,
    // other names (a rebinding page's) are not, and the token guards
    // changes.
    let api = Api::with_access(Access::for_listener(
        "0.0.0.0:8080".parse().unwrap(),
        Some(TOKEN.into()),
        vec!["console.example.com".into()],
    ));
    for host in ["console.example.com", "10.1.2.3:8080"] {
        let host = [("host", host)];
        let r = api.send("GET", "/api/endpoints", None, &host).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = api
            .send("POST", "/api/endpoints/pd/stop", None, &host)
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    }
    let r = api
        .send(
            "GET",
            "/api/endpoints",
            None,
            &[("host", "evil.example:8080")],
        )
        .await;
    assert_eq!(
        (r.status, r.str("error")),
        (
            StatusCode::MISDIRECTED_REQUEST,
            "this console answers to localhost, 127.0.0.1, [::1], this machine's IP addresses, console.example.com only; list the name it is reached by in --allowed-hosts".to_owned()
        )
    );
    let api = Api::new();
    for (name, field, value) in [
        ("content-type", "Content-Type", "application/json"),
        ("authorization", "Authorization", "Bearer x"),
    ] {
        let r = api
            .send(
                "POST",
                "/api/validate",
                Some("{}"),
                &[(name, "text/plain"), (name, value)],
            )
            .await;
        assert_eq!(
            (r.status, r.first_error()),
            (
                StatusCode::BAD_REQUEST,
                (
                    field.to_owned(),
                    format!("a request has at most one {field} header")
                )
            )
        );
    }
    let two_hosts = [("host", "127.0.0.1"), ("host", "127.0.0.1")];
    let r = api.send("GET", "/healthz", None, &two_hosts).await;
    assert_eq!(
        (r.status, r.str("errors.0.path").as_str()),
        (StatusCode::BAD_REQUEST, "Host")
    );
    assert_eq!(
        r.str("errors.0.message"),
        "an HTTP/1.1 request needs exactly one Host header"
    );
    // HTTP/1.0 may leave Host out, but not give it twice.
    let old_two_hosts = Request::post("/api/endpoints/pd/stop")
        .version(axum::http::Version::HTTP_10)
        .header(header::HOST, "127.0.0.1")
        .header(header::HOST, "evil.example")
        .body(Body::empty())
        .unwrap();
    let response = api.app.clone().oneshot(old_two_hosts).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = parse(&String::from_utf8_lossy(&bytes)).unwrap();
    assert_eq!(
        (
            status,
            body.as_object().and_then(|o| o.get("error")).cloned()
        ),
        (
            StatusCode::BAD_REQUEST,
            Some(Value::str("a request has at most one Host header"))
        )
    );
    let r = api.get("//snippets").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (StatusCode::BAD_REQUEST, "the path is not valid")
    );
    // An authority-form target (CONNECT's), on the API and the console.
    for method in ["GET", "POST"] {
        let r = api.send(method, "localhost:80", None, &[]).await;
        assert_eq!(
            (r.status, r.str("error").as_str()),
            (
                StatusCode::BAD_REQUEST,
                "the request target must be a path (or an absolute URL)"
            ),
            "{method}"
        );
    }
    let r = api
        .send(
            "POST",
            "/api/validate",
            Some("{}"),
            &[("transfer-encoding", "gzip, chunked")],
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::BAD_REQUEST,
            "Transfer-Encoding".into(),
            "only the chunked transfer coding is supported".into()
        )
    );
}

#[tokio::test]
async fn console_files_with_security_headers_and_no_traversal() {
    let api = Api::new();
    let r = api.get("/").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains("GCO console"));
    let csp = r.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self' 'wasm-unsafe-eval'"),
        "{csp}"
    );
    assert_eq!(r.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(r.headers.get("x-request-id").is_some());
    assert!(
        r.headers.get(header::CACHE_CONTROL).is_none(),
        "console files may be cached"
    );
    let r = api.get("/endpoints/pd").await;
    assert!(r.text.contains("GCO console"), "SPA fallback");
    // Ranges are ignored (RFC 9110 lets a server; an unknown unit it must):
    // every file is answered whole.
    for range in ["items=0-1", "bytes=5-1", "bytes=0-3", "bytes=999999-"] {
        let r = api
            .send("GET", "/index.html", None, &[("range", range)])
            .await;
        assert_eq!(r.status, StatusCode::OK, "{range}");
        assert!(r.text.contains("GCO console"), "{range}");
        assert_eq!(r.headers[header::ACCEPT_RANGES], "none", "{range}");
    }
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
    ] {
        let r = api.get(path).await;
        assert!(
            !r.text.contains("root:") && !r.text.contains("[package]"),
            "{path} escaped the console directory"
        );
    }
}

#[test]
fn non_loopback_needs_a_token() {
    use clap::Parser;
    let config = gco_console::config::Config::parse_from(["gco-console", "--addr", "0.0.0.0:8080"]);
    assert!(
        config
            .check()
            .unwrap_err()
            .starts_with("refusing to listen on 0.0.0.0:8080 without --auth-token-file")
    );
    let dir = TempDir::new("token");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let token_file = token_file.to_str().unwrap();
    for (addr, any_address) in [("0.0.0.0:8080", true), ("127.0.0.1:8080", false)] {
        let access = gco_console::config::Config::parse_from([
            "gco-console",
            "--addr",
            addr,
            "--auth-token-file",
            token_file,
            "--allowed-hosts",
            "Console.example.com,.corp.example",
        ])
        .check()
        .unwrap();
        assert_eq!(access.token.as_deref(), Some(TOKEN));
        assert_eq!(access.hosts.any_address, any_address, "{addr}");
        assert_eq!(
            &access.hosts.names[..],
            ["console.example.com", ".corp.example"]
        );
    }
    let config = gco_console::config::Config::parse_from([
        "gco-console",
        "--allowed-hosts",
        "console.example.com:8080",
    ]);
    assert!(
        config
            .check()
            .unwrap_err()
            .starts_with("--allowed-hosts: \"console.example.com:8080\" is not a host name")
    );
    let config =
        gco_console::config::Config::parse_from(["gco-console", "--regions", "us-east-1,mars"]);
    assert_eq!(
        config.check().unwrap_err(),
        "--regions: \"mars\" is not an AWS region such as us-east-1"
    );
}

#[tokio::test]
async fn long_lists_of_mistakes_are_cut() {
    let api = Api::new();
    let args = vec!["1"; 300].join(", ");
    let body = format!(r#"{{"endpoint_name": "pd", "image": "x", "extra_args": [{args}]}}"#);
    let listed = |r: &Reply| match r.get("errors") {
        Value::List(l) => l.len(),
        _ => 0,
    };
    let r = api.post("/api/validate", &body).await;
    assert_eq!(
        (listed(&r), r.get("errors_omitted")),
        (100, Value::int(200)),
        "{}",
        r.text
    );
    assert!(r.text.len() < 20_000, "{} bytes", r.text.len());
    let r = api.post("/api/endpoints", &body).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.str("error"), "the request has 300 errors");
    assert_eq!(
        (listed(&r), r.get("errors_omitted")),
        (100, Value::int(200))
    );
    let r = api
        .post("/api/validate", r#"{"endpoint_name": "pd", "image": "x"}"#)
        .await;
    assert_eq!(
        r.get("errors_omitted"),
        Value::Null,
        "only when some were cut"
    );
}

#[tokio::test]
async fn what_no_store_keeps_or_no_path_reaches_is_refused_at_the_field() {
    let api = Api::new();
    for name in [
        "..",
        ".",
        r"a\\b",
        r"a\u0000b",
        "x/../y",
        "chat/v1",
        "a?b",
        "a#b",
        "a%2fb",
        "a b",
        r"a\nb",
    ] {
        let body = format!(r#"{{"endpoint_name": "{name}", "image": "x"}}"#);
        let r = api.post("/api/endpoints", &body).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{name}: {}",
            r.text
        );
        assert_eq!(r.str("errors.0.path"), "endpoint_name", "{name}");
        assert!(
            r.str("errors.0.message")
                .contains("cannot be one segment of a URL path"),
            "{}",
            r.text
        );
        let v = api.post("/api/validate", &body).await;
        assert_eq!(
            v.get("ok"),
            Value::Bool(false),
            "validate says what deploy would"
        );
    }
    let r = api
        .post("/api/endpoints", r#"{"endpoint_name": "..", "image": "x"}"#)
        .await;
    assert_eq!(
        r.str("errors.0.message"),
        r#"endpoint_name '..' cannot be one segment of a URL path: clients read it as a directory"#
    );
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "chat/v1", "image": "x"}"#,
        )
        .await;
    assert_eq!(
        r.str("errors.0.message"),
        r#"endpoint_name 'chat/v1' cannot be one segment of a URL path, as the API and GCO's ingress path (/inference/<name>) need: it holds '/'"#
    );
    // Python's repr, as every message quotes values.
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "x\u2028", "image": "x"}"#,
        )
        .await;
    assert_eq!(
        r.str("errors.0.message"),
        r"endpoint_name 'x\u2028' cannot be one segment of a URL path, as the API and GCO's ingress path (/inference/<name>) need: it holds '\u2028'"
    );
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "\ud800", "image": "x"}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(
        r.first_error(),
        (
            "endpoint_name".to_owned(),
            r"endpoint_name holds a lone surrogate ('\ud800'), which cannot be stored: text is kept as UTF-8".to_owned()
        )
    );
    // Two keys that would both become U+FFFD: one would be lost.
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "web", "image": "x", "node_selector": {"\ud800": "x", "\udc00": "y"}}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.str("errors.0.path"), "node_selector.\u{FFFD}");
    // An integer the rules allow but no DynamoDB number holds: refused at
    // deploy, and validate says so too, rather than stored as a string that
    // the next change would find is no integer.
    let wide = format!("9{}", "9".repeat(40));
    let request = format!(
        r#"{{"endpoint_name": "y9", "image": "x", "mooncake_mode": "disaggregated",
            "mooncake_autoscaling": {{"prefill": {{"min_replicas": 1, "max_replicas": {wide}}}}}}}"#
    );
    let expected = (
        "mooncake_autoscaling.prefill.max_replicas".to_owned(),
        format!(
            "mooncake_autoscaling.prefill.max_replicas is {wide}, 41 digits; a DynamoDB number holds at most 38, so it cannot be stored"
        ),
    );
    let r = api.post("/api/endpoints", &request).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.first_error(), expected);
    let r = api.post("/api/validate", &request).await;
    assert_eq!(
        (r.get("ok"), r.first_error()),
        (Value::Bool(false), expected)
    );
    assert_eq!(
        api.get("/api/endpoints").await.get("endpoints"),
        Value::List(vec![])
    );

    api.deploy_split("pd").await;
    let r = api
        .put(
            "/api/endpoints/pd/store",
            r#"{"enabled": true, "\ud800": 1}"#,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.str("errors.0.path"), "\u{FFFD}");
    assert_eq!(
        api.get("/api/endpoints/pd")
            .await
            .get("spec.mooncake.store"),
        Value::Null
    );

    // A record no DynamoDB item could hold is refused at its largest part,
    // on either store, and the record stays as it was.
    let labels = "l".repeat(200_000);
    let r = api
        .post(
            "/api/endpoints",
            &format!(
                r#"{{"endpoint_name": "big", "image": "x", "labels": {{"notes": "{labels}"}}}}"#
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:.300}", r.text);
    let image = "i".repeat(250_000);
    let r = api
        .put(
            "/api/endpoints/big/image",
            &format!(r#"{{"image": "{image}"}}"#),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{:.300}",
        r.text
    );
    let (path, message) = r.first_error();
    assert_eq!(path, "image");
    assert!(
        message.starts_with("image takes 250005 bytes and makes the record 45")
            && message.ends_with(" bytes; a DynamoDB item holds at most 409600"),
        "{message}"
    );
    assert_eq!(api.get("/api/endpoints/big").await.str("spec.image"), "x");
}

#[tokio::test]
async fn request_ids_and_undecodable_names() {
    let api = Api::new();
    let id = |r: &Reply| r.headers["x-request-id"].to_str().unwrap().to_owned();
    let r = api
        .send("GET", "/healthz", None, &[("x-request-id", "ci-run-42.7")])
        .await;
    assert_eq!(id(&r), "ci-run-42.7", "a client's token is kept");
    for sent in [
        &[("x-request-id", "a b\" <x>")][..],
        &[("x-request-id", "a"), ("x-request-id", "b")],
    ] {
        let r = api.send("GET", "/healthz", None, sent).await;
        assert!(id(&r).starts_with("req-"), "{sent:?} -> {}", id(&r));
    }
    let long = "x".repeat(65);
    let r = api
        .send("GET", "/healthz", None, &[("x-request-id", &long)])
        .await;
    assert!(id(&r).starts_with("req-"));

    let r = api.get("/api/endpoints/%c0%af").await;
    assert_eq!(
        (r.status, r.str("errors.0.path").as_str()),
        (StatusCode::BAD_REQUEST, "endpoint_name"),
        "{}",
        r.text
    );
    assert_eq!(
        r.str("errors.0.message"),
        "the endpoint name in the URL is not UTF-8 once percent-decoded"
    );
    let r = api
        .send("DELETE", "/api/endpoints/pd/regions/%ff", None, &[])
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::BAD_REQUEST,
            "region".into(),
            "the region in the URL is not UTF-8 once percent-decoded".into()
        )
    );
}

/// The table is shared: whatever text another writer put in a record's
/// lifecycle or timestamp, the record has an ETag that works.
#[tokio::test]
async fn records_of_other_writers_have_working_etags() {
    let api = Api::new();
    api.deploy_split("pd").await;
    let mut record = api.store.get("pd").await.unwrap().unwrap();
    for (lifecycle, updated_at) in [
        (
            format!("a{}", "é".repeat(20)),
            "2026-12-01T00:00:00.000001+00:00",
        ),
        ("\"quoted\" id".to_owned(), "yesterday, \"about\" noon"),
    ] {
        record.endpoint_name = format!("other-{}", lifecycle.len());
        record.lifecycle_id = Some(lifecycle);
        record.updated_at = updated_at.to_owned();
        api.store.create(&record).await.unwrap();
        let path = format!("/api/endpoints/{}", record.endpoint_name);
        let r = api.get(&path).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let tag = r.headers[header::ETAG].to_str().unwrap().to_owned();
        assert!(tag.starts_with('"') && tag.ends_with('"') && !tag[1..tag.len() - 1].contains('"'));
        let stop = format!("{path}/stop");
        let r = api.send("POST", &stop, None, &[("if-match", &tag)]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_ne!(r.headers[header::ETAG].to_str().unwrap(), tag);
    }
}

#[tokio::test]
async fn missing_console_files_are_not_pages() {
    let api = Api::new();
    for path in ["/nope.js", "/assets/app.wasm", "/BOOT.JS"] {
        let r = api.get(path).await;
        assert_eq!(
            (r.status, r.str("error").as_str()),
            (StatusCode::NOT_FOUND, "no such console file"),
            "{path}"
        );
    }
    // Pages, whatever their name holds; and a browser asking for a page.
    for (path, accept) in [
        ("/endpoints/pd", "*/*"),
        ("/new", "*/*"),
        (
            "/endpoints/chat.v1",
            "text/html,application/xhtml+xml,*/*;q=0.8",
        ),
    ] {
        let r = api.send("GET", path, None, &[("accept", accept)]).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(r.text.contains("GCO console"), "{path}");
    }
}

/// An item another program stored that is no record (a state this service
/// does not know): lists name it rather than fail or pass it over, and a
/// read of it is refused.
#[tokio::test]
async fn lists_name_stored_items_that_are_no_record() {
    let dir = TempDir::new("api-unreadable");
    {
        let table = redb::TableDefinition::<&str, &str>::new("endpoints");
        let db = redb::Database::create(dir.path().join("endpoints.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(table)
            .unwrap()
            .insert(
                "odd",
                r#"{"endpoint_name": "odd", "desired_state": "paused"}"#,
            )
            .unwrap();
        txn.commit().unwrap();
    }
    let api = Api::over(dir, Access::loopback(None));
    api.deploy_split("pd").await;
    let odd = r#"[{"endpoint_name": "odd", "path": "desired_state", "message": "unknown state \"paused\""}]"#;
    let r = api.get("/api/endpoints").await;
    assert_eq!(
        (
            r.get("endpoints").as_list_names(),
            r.get("unreadable").to_json()
        ),
        (vec!["pd".to_owned()], odd.to_owned())
    );
    let r = api
        .get("/api/endpoints?limit=1&desired_state=running")
        .await;
    assert_eq!(
        (
            r.get("endpoints").as_list_names(),
            r.get("unreadable").to_json()
        ),
        (vec![], odd.to_owned())
    );
    let r = api.get("/api/endpoints/odd").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the stored endpoint 'odd' could not be read"
        )
    );
    assert_eq!(
        r.first_error(),
        ("desired_state".into(), r#"unknown state "paused""#.into())
    );
    let r = api.send("POST", "/api/endpoints/odd/stop", None, &[]).await;
    assert_eq!(
        (r.status, r.first_error().0.as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, "desired_state")
    );
    let r = api.get("/api/endpoints/pd").await;
    assert_eq!(r.status, StatusCode::OK);
}

/// A change that changes nothing is not written: the ETag others hold stays
/// current, and no monitor sees a new version.
#[tokio::test]
async fn changes_that_change_nothing_keep_the_version() {
    let api = Api::new();
    api.deploy_split("pd").await;
    let tag = |r: &Reply| r.headers[header::ETAG].to_str().unwrap().to_owned();
    let stopped = api.send("POST", "/api/endpoints/pd/stop", None, &[]).await;
    assert_eq!(stopped.status, StatusCode::OK);
    let version = tag(&stopped);
    for (method, path, body) in [
        ("POST", "/api/endpoints/pd/stop", None),
        ("DELETE", "/api/endpoints/pd/regions/ap-south-1", None),
        (
            "POST",
            "/api/endpoints/pd/regions",
            Some(r#"{"region": "us-east-1"}"#),
        ),
    ] {
        let r = api
            .send(method, path, body, &[("if-match", version.as_str())])
            .await;
        assert_eq!(
            (r.status, tag(&r)),
            (StatusCode::OK, version.clone()),
            "{method} {path}"
        );
        assert_eq!(r.body, stopped.body, "{method} {path}");
    }
    let r = api
        .post("/api/endpoints/pd/regions", r#"{"region": "ap-south-1"}"#)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_ne!(tag(&r), version, "a real change is a new version");
}
