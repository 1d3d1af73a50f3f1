//! `POST /api/manifests` through the real `gco-console` binary, and the
//! regional scope check on the server's own checks.

use crate::common;

use crate::common::{Server, TempDir};
use gco_spec::json::{Value, parse};
use gco_spec::manifests::manifests;
use gco_spec::plan::preview_record;
use gco_spec::{DeployContext, RegionContext, plan_deploy};

const BOTH: &str = r#"{"endpoint_name": "chat", "gpu_count": 8, "mooncake_mode": "both", "mooncake_store": {"enabled": true, "cold_tier_enabled": true}, "mooncake_autoscaling": {"enabled": true, "decode": {"min_replicas": 2, "metrics": [{"type": "gpu", "target": 70}]}}}"#;

fn server() -> (Server, TempDir) {
    let data = TempDir::new("manifests");
    (Server::embedded(data.path()), data)
}

#[test]
fn renders_the_yaml_the_core_renders_with_the_region_settings() {
    let (server, _data) = server();
    let body = format!(
        r#"{{"document": {BOTH}, "region": "us-east-1", "cluster_name": "gco-use1", "regional_bucket": "shared-use1", "master_image": "mooncake/master:0.3.6", "metadata_server": null}}"#
    );
    let r = server.send("POST", "/api/manifests", &body);
    assert_eq!(r.status, 200, "{}", r.body);

    // The same as the core renders for the record deploy would create in
    // the server's one deployed region.
    let deployed = vec!["us-east-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        ..DeployContext::default()
    };
    let record = preview_record(plan_deploy(&parse(BOTH).unwrap(), &ctx).deployment.unwrap());
    let region = RegionContext {
        cluster_name: Some("gco-use1".into()),
        regional_bucket: Some("shared-use1".into()),
        master_image: Some("mooncake/master:0.3.6".into()),
        ..RegionContext::defaults("us-east-1")
    };
    let want = manifests(&record, &region).unwrap();
    assert_eq!(r.str("region"), "us-east-1");
    assert_eq!(r.str("yaml"), want.to_yaml());
    let notes: Vec<Value> = want.notes.iter().map(|n| Value::str(n)).collect();
    assert_eq!(r.get("notes"), Value::List(notes));
    let yaml = r.str("yaml");
    for part in [
        "kind: List",
        "cold_tier_s3_uri\": \"s3://shared-use1/mooncake-kv/chat/",
        "dimensionValue: gco-use1;gco-inference;chat-decode",
        "image: mooncake/master:0.3.6",
        "# MOONCAKE_METADATA_SERVER not given: GCO's default http://mooncake-master:8080/metadata",
    ] {
        assert!(yaml.contains(part), "{part} missing in\n{yaml}");
    }
}

#[test]
fn refuses_what_it_cannot_render_at_the_field() {
    let (server, _data) = server();
    let both = |extra: &str| format!(r#"{{"document": {BOTH}, "region": "us-east-1"{extra}}}"#);
    let cases = [
        (
            r#"{"region": "us-east-1"}"#.to_owned(),
            "document",
            "document is required: a deploy request or an endpoint record".to_owned(),
        ),
        (
            format!(r#"{{"document": {BOTH}}}"#),
            "region",
            "region is required: an AWS region such as 'us-east-1'".to_owned(),
        ),
        (
            both(r#", "colour": "blue""#),
            "colour",
            "unknown field \"colour\"; the body takes document, region, cluster_name, regional_bucket, metadata_server, master_address, master_image, project_name".to_owned(),
        ),
        (
            both(r#", "master_image": 7"#),
            "master_image",
            "master_image must be a string, got 7".to_owned(),
        ),
        (
            format!(r#"{{"document": {BOTH}, "region": "eu-west-1"}}"#),
            "region",
            "endpoint 'chat' does not target region 'eu-west-1' (its regions: us-east-1): its monitor there applies nothing".to_owned(),
        ),
        (
            both(r#", "master_image": "m:1", "cluster_name": "c""#),
            "spec.mooncake.store.cold_tier_enabled",
            "the cold tier needs us-east-1's regional bucket (SSM /gco/regional-shared-bucket/name): pass it as the regional bucket. Without it GCO's monitor cannot render mooncake.json and reports the region as error 'cold_tier_s3_uri' (as read)".to_owned(),
        ),
        (
            r#"{"document": {"endpoint_name": "pd", "mooncake_mode": "both", "prefill_replicas": 0}, "region": "us-east-1"}"#.to_owned(),
            "mooncake.topology.prefill",
            "mooncake.topology.prefill out of range [1, 1000]: 0".to_owned(),
        ),
        (
            r#"{"document": {"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {"peer_addresses": ["kv-peer.example.com:50051"]}}, "region": "us-east-1"}"#.to_owned(),
            "mooncake.transfer.peer_addresses[0]",
            "cross-region boundary violation: 'kv-peer.example.com:50051' resolves to region unknown; expected region us-east-1".to_owned(),
        ),
    ];
    for (body, path, message) in cases {
        let r = server.send("POST", "/api/manifests", &body);
        assert_eq!(r.status, 422, "{body}: {}", r.body);
        r.assert_error_shape();
        assert_eq!(
            (r.str("errors.0.path"), r.str("errors.0.message")),
            (path.to_owned(), message),
            "{body}"
        );
    }
    let r = server.send("POST", "/api/manifests", "[]");
    assert_eq!(r.status, 422);
    assert_eq!(
        r.str("errors.0.message"),
        "the body must be an object with a document and a region"
    );
}

#[test]
fn validate_reports_addresses_outside_the_target_regions() {
    let (server, _data) = server();
    let r = server.send(
        "POST",
        "/api/validate",
        r#"{"endpoint_name": "kv", "mooncake_mode": "store", "mooncake_store": {"metadata_server": "http://meta.us-west-2.example.com/metadata"}}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.get("ok"), Value::Bool(false));
    assert_eq!(
        (r.str("errors.0.path"), r.str("errors.0.message")),
        (
            "mooncake.store.metadata_server".to_owned(),
            "cross-region boundary violation: 'http://meta.us-west-2.example.com/metadata' resolves to region us-west-2; expected region us-east-1".to_owned()
        )
    );
    // The keys the newest monitor reads are not warned about as ignored;
    // the one warning is the region's missing master image (no
    // --monitor-settings: no region has one).
    assert_eq!(r.str("warnings.0.path"), "mooncake.store.master_image");
    assert!(
        r.str("warnings.0.message")
            .starts_with("us-east-1 has no master image:"),
        "{}",
        r.body
    );
    assert_eq!(r.get("warnings.1"), Value::Null, "{}", r.body);
}

/// `--monitor-settings`: each region's monitor settings, which the
/// manifests use (a body's own over them) and deploy checks read.
#[test]
fn monitor_settings_feed_the_manifests_and_the_master_image_warning() {
    let data = TempDir::new("monitor-settings");
    let file = data.path().join("monitors.toml");
    std::fs::write(
        &file,
        "[default]\ncluster_name = \"gco-default\"\n\n[regions.us-east-1]\nmaster_image = \"mooncake/master:0.3.6\"\nregional_bucket = \"shared-use1\"\n",
    )
    .unwrap();
    let server = Server::embedded_with(
        &data.path().join("store"),
        &["--monitor-settings".as_ref(), file.as_os_str()],
    );
    let r = server.send("GET", "/api/monitor-settings", "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.str("default.cluster_name"), "gco-default");
    assert_eq!(
        r.str("regions.us-east-1.master_image"),
        "mooncake/master:0.3.6"
    );

    let r = server.send(
        "POST",
        "/api/manifests",
        &format!(r#"{{"document": {BOTH}, "region": "us-east-1"}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let yaml = r.str("yaml");
    for part in [
        "image: mooncake/master:0.3.6",
        "dimensionValue: gco-default;gco-inference;chat-decode",
        "s3://shared-use1/mooncake-kv/chat/",
    ] {
        assert!(yaml.contains(part), "{part} missing in\n{yaml}");
    }
    // The body's own setting wins.
    let r = server.send(
        "POST",
        "/api/manifests",
        &format!(r#"{{"document": {BOTH}, "region": "us-east-1", "master_image": "m:9"}}"#),
    );
    assert!(r.str("yaml").contains("image: m:9"), "{}", r.body);

    // us-east-1 has a master image now: no warning.
    let r = server.send("POST", "/api/validate", BOTH);
    assert_eq!(r.get("warnings"), Value::List(vec![]), "{}", r.body);
}

/// It stores nothing: like `/api/validate`, it needs no token and may be
/// asked from another page.
#[tokio::test]
async fn rendering_is_no_change() {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use std::sync::Arc;
    use tower::ServiceExt;

    let dir = TempDir::new("manifests-token");
    let store = common::embedded(&dir);
    let service = common::service(Arc::clone(&store));
    let access = gco_console::auth::Access::loopback(Some("0123456789abcdef-test-token"));
    let app = gco_console::app::app(service, access, std::path::Path::new("/nonexistent"));
    let body =
        r#"{"document": {"endpoint_name": "web", "image": "nginx:1"}, "region": "us-east-1"}"#;
    for origin in [None, Some("https://elsewhere.example")] {
        // It needs an identity (records' env values are in what it reads),
        // but it changes nothing: another origin may ask.
        let mut request = Request::post("/api/manifests")
            .header("host", "localhost")
            .header("authorization", "Bearer 0123456789abcdef-test-token")
            .header("content-type", "application/json");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            status,
            200,
            "{origin:?}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    // A deploy, by contrast, is refused without the token.
    let response = app
        .oneshot(
            Request::post("/api/endpoints")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .body(Body::from(
                    r#"{"endpoint_name": "web", "image": "nginx:1"}"#,
                ))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}
