//! What every client meets first, through the whole HTTP application on the
//! embedded store: health, the OpenAPI document, the config, the console's
//! files and request ids.

use axum::http::{StatusCode, header};

use crate::common::app::{Api, Reply};

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
    // The page is revalidated at every navigation, so a load balancer that
    // signs users in sees a reload (its other files may be cached).
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
    let r = api.get("/endpoints/pd").await;
    assert!(r.text.contains("GCO console"), "SPA fallback");
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
    let r = api.get("/missing.js").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.headers.get(header::CACHE_CONTROL).is_none());
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
