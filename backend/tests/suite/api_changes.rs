//! Every change route through the whole HTTP application on the embedded
//! store, and If-Match: stale, weak and listed tags, records other writers
//! stored, and changes that change nothing.

use crate::common;

use axum::http::{StatusCode, header};

use crate::common::app::{Api, Reply};

#[tokio::test]
async fn topology_changes_are_checked() {
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
}

#[tokio::test]
async fn store_changes_are_checked_and_refusals_write_nothing() {
    let api = Api::new();
    api.deploy_split("pd").await;
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
}

#[tokio::test]
async fn image_changes_and_split_endpoints_refuse_scale() {
    let api = Api::new();
    api.deploy_split("pd").await;
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
}

#[tokio::test]
async fn regions_are_added_and_removed() {
    let api = Api::new();
    api.deploy_split("pd").await;
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
}

#[tokio::test]
async fn stop_start_delete_and_deleted_endpoints_refuse_changes() {
    let api = Api::new();
    api.deploy_split("pd").await;
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
}

#[tokio::test]
async fn changes_to_missing_endpoints_are_not_found() {
    let api = Api::new();
    api.deploy_split("pd").await;
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
        api.store
            .create(
                &gco_console::store::Storable::of(record.clone()),
                &common::author(),
            )
            .await
            .unwrap();
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
