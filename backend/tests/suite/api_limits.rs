//! Errors and limits through the whole HTTP application on the embedded
//! store: hostile bodies, long lists of mistakes, and what no store keeps or
//! no path reaches, refused at the field.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use crate::common::app::{Api, Reply};
use gco_spec::json::Value;

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
    // (In env: a label value Kubernetes takes has at most 63 characters.)
    let notes = "l".repeat(200_000);
    let r = api
        .post(
            "/api/endpoints",
            &format!(r#"{{"endpoint_name": "big", "image": "x", "env": {{"notes": "{notes}"}}}}"#),
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
