//! Validate and deploy through the whole HTTP application on the embedded
//! store: diagnostics, the stored spec, duplicates and refusals that store
//! nothing.

use axum::http::{StatusCode, header};

use crate::common::app::Api;
use gco_spec::json::Value;

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
async fn deploy_then_read_and_refuse_duplicates() {
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
