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
    // signs users in sees a reload (its assets are named by content).
    assert_eq!(
        r.headers[header::CACHE_CONTROL],
        "no-cache",
        "the page is asked again before each use"
    );
    let r = api.get("/endpoints/pd").await;
    assert!(r.text.contains("GCO console"), "SPA fallback");
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
    let r = api.get("/missing.js").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(
        r.headers[header::CACHE_CONTROL],
        "no-cache",
        "a 404 is no asset to keep"
    );
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
    let header =
        |r: &Reply, name: &str| r.headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    // The console's own: a UUIDv7 (version digit 7), new for each request.
    let ours = |r: &Reply| {
        let id = header(r, "x-request-id").unwrap();
        assert_eq!((id.len(), &id[14..15]), (36, "7"), "{id}");
        id
    };
    let r = api
        .send("GET", "/healthz", None, &[("x-request-id", "ci-run-42.7")])
        .await;
    assert_eq!(
        header(&r, "x-client-request-id").as_deref(),
        Some("ci-run-42.7"),
        "a client's token is kept beside the console's"
    );
    let first = ours(&r);
    let again = api
        .send("GET", "/healthz", None, &[("x-request-id", "ci-run-42.7")])
        .await;
    assert_ne!(
        ours(&again),
        first,
        "the client's id repeats; ours does not"
    );
    let long = "x".repeat(65);
    for sent in [
        &[("x-request-id", "a b\" <x>")][..],
        &[("x-request-id", "a"), ("x-request-id", "b")],
        &[("x-request-id", long.as_str())],
        // Nobody sets the client's id but the console.
        &[("x-client-request-id", "forged")],
    ] {
        let r = api.send("GET", "/healthz", None, sent).await;
        ours(&r);
        assert_eq!(header(&r, "x-client-request-id"), None, "{sent:?}");
    }

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

/// What a browser gets for an asset: the form its `Accept-Encoding` allows
/// best, whole, cached for good; for an asset of an old release, a 404.
#[tokio::test]
async fn assets_named_by_content_are_sent_compressed_and_kept() {
    let api = Api::new();
    let name = "gco-web-0123456789abcdef.js";
    std::fs::write(api.dist().join(name), "export const plain = 1;").unwrap();
    std::fs::write(api.dist().join(format!("{name}.br")), "brotli form").unwrap();
    std::fs::write(api.dist().join(format!("{name}.gz")), "gzip form").unwrap();
    let path = format!("/{name}");
    for (accept, coding, body) in [
        ("br, gzip", Some("br"), "brotli form"),
        ("gzip, deflate, br;q=0.5", Some("gzip"), "gzip form"),
        ("gzip", Some("gzip"), "gzip form"),
        ("identity", None, "export const plain = 1;"),
        ("br;q=0, gzip;q=0", None, "export const plain = 1;"),
        // Malformed: never a corrupted body, the plain file at worst.
        ("br;q=x, ;;, gzip;q=", None, "export const plain = 1;"),
        ("gzip;q=2, br;;q=0.1.2", None, "export const plain = 1;"),
    ] {
        let r = api
            .send(
                "GET",
                &path,
                None,
                &[("accept-encoding", accept), ("range", "bytes=0-3")],
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{accept:?}");
        assert_eq!(
            r.headers
                .get(header::CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap()),
            coding,
            "{accept:?}"
        );
        assert_eq!(r.text, body, "{accept:?}: the whole form, never a range");
        assert!(r.headers.get(header::CONTENT_RANGE).is_none());
        assert_eq!(
            r.headers[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert_eq!(r.headers[header::VARY], "accept-encoding");
        assert_eq!(r.headers[header::CONTENT_TYPE], "text/javascript");
    }
    // An old release's asset is gone: a 404, never the page served as script.
    let r = api.get("/gco-web-fedcba9876543210.js").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (StatusCode::NOT_FOUND, "no such console file")
    );
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
}

/// The page names the release's assets, so it is asked again before each
/// use: a 304 while it is the same, the new page once a release replaced it.
#[tokio::test]
async fn the_page_is_revalidated_and_a_new_release_is_picked_up() {
    let api = Api::new();
    let first = api.get("/endpoints/pd").await;
    let tag = first.headers[header::ETAG].to_str().unwrap().to_owned();
    assert_eq!(first.headers[header::CACHE_CONTROL], "no-cache");
    for path in ["/", "/new", "/endpoints/pd?tab=history"] {
        let r = api
            .send("GET", path, None, &[("if-none-match", &tag)])
            .await;
        assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(r.bytes.is_empty(), "{path}");
        assert_eq!(r.headers[header::ETAG], tag.as_str());
        assert_eq!(r.headers[header::CACHE_CONTROL], "no-cache");
    }
    std::fs::write(
        api.dist().join("index.html"),
        "<!doctype html><title>GCO console</title><script src=/boot-fedcba9876543210.js>",
    )
    .unwrap();
    let r = api.send("GET", "/", None, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::OK, "the new release's page");
    assert!(r.text.contains("boot-fedcba9876543210.js"));
    assert_ne!(r.headers[header::ETAG], tag.as_str());
}

/// An API answer over a kilobyte travels compressed, with the same tag
/// as the plain answer; a 304 stays bodiless and small answers plain.
#[tokio::test]
async fn api_answers_travel_compressed() {
    use std::io::Read;
    let api = Api::new();
    for n in 0..8 {
        api.deploy_split(&format!("compressed-{n}")).await;
    }
    let plain = api.get("/api/endpoints").await;
    assert!(plain.bytes.len() > 1024, "{}", plain.bytes.len());
    assert!(plain.headers.get(header::CONTENT_ENCODING).is_none());
    let tag = plain.headers[header::ETAG].to_str().unwrap().to_owned();
    for coding in ["br", "gzip"] {
        let r = api
            .send(
                "GET",
                "/api/endpoints",
                None,
                &[("accept-encoding", coding)],
            )
            .await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.headers[header::CONTENT_ENCODING], coding);
        assert_eq!(r.headers[header::VARY], "accept-encoding");
        assert_eq!(
            r.headers[header::ETAG],
            tag.as_str(),
            "{coding}: the same tag"
        );
        assert_eq!(r.headers[header::CACHE_CONTROL], "no-store");
        let mut decoded = Vec::new();
        if coding == "br" {
            brotli::Decompressor::new(&r.bytes[..], 4096)
                .read_to_end(&mut decoded)
                .unwrap();
        } else {
            flate2::read::GzDecoder::new(&r.bytes[..])
                .read_to_end(&mut decoded)
                .unwrap();
        }
        assert_eq!(decoded, plain.bytes, "{coding}");
        assert!(
            r.bytes.len() * 3 < plain.bytes.len(),
            "{coding}: {}",
            r.bytes.len()
        );
        let r = api
            .send(
                "GET",
                "/api/endpoints",
                None,
                &[("accept-encoding", coding), ("if-none-match", &tag)],
            )
            .await;
        assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{coding}");
        assert!(r.bytes.is_empty());
        assert!(r.headers.get(header::CONTENT_ENCODING).is_none());
    }
    let r = api
        .send("GET", "/healthz", None, &[("accept-encoding", "br")])
        .await;
    assert!(
        r.headers.get(header::CONTENT_ENCODING).is_none(),
        "small answers stay plain"
    );
}

/// Every answer carries the security headers the guard sets: the API's,
/// its refusals, the guard's own and the console's files.
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let api = Api::new();
    for (path, status) in [
        ("/healthz", StatusCode::OK),
        ("/api/endpoints/ghost", StatusCode::NOT_FOUND),
        ("/a/%2e%2e/b", StatusCode::BAD_REQUEST),
        ("/new", StatusCode::OK),
    ] {
        let r = api.get(path).await;
        assert_eq!(r.status, status, "{path}");
        assert_eq!(
            r.headers[header::X_CONTENT_TYPE_OPTIONS],
            "nosniff",
            "{path}"
        );
        assert_eq!(r.headers[header::X_FRAME_OPTIONS], "DENY", "{path}");
        assert_eq!(r.headers[header::REFERRER_POLICY], "no-referrer", "{path}");
    }
}

/// `If-None-Match` sent on two lines is one list (RFC 9110, section 5.3).
#[tokio::test]
async fn if_none_match_on_two_lines_is_one_list() {
    let api = Api::new();
    api.deploy_split("lines").await;
    let path = "/api/endpoints/lines";
    let tag = api.get(path).await.headers[header::ETAG]
        .to_str()
        .unwrap()
        .to_owned();
    let elsewhere = r#""elsewhere""#;
    let r = api
        .send(
            "GET",
            path,
            None,
            &[("if-none-match", elsewhere), ("if-none-match", &tag)],
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    let r = api
        .send(
            "GET",
            path,
            None,
            &[
                ("if-none-match", elsewhere),
                ("if-none-match", r#""nowhere""#),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
}

/// A method a path does not serve is counted under the path's template.
#[tokio::test]
async fn a_405_is_counted_under_its_route() {
    let api = Api::new();
    let r = api.get("/api/validate").await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    let metrics = api.get("/metrics").await.text;
    assert!(
        metrics
            .lines()
            .any(|line| line.starts_with("gco_http_requests_total{")
                && line.contains(r#"route="/api/validate""#)
                && line.contains(r#"method="GET""#)
                && line.contains(r#"status="405""#)),
        "{metrics}"
    );
}
