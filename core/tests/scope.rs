//! The regional scope check (GCO_FACTS_NEWEST 4.9): the classification of
//! addresses, and its errors in the deploy and record checks.

use gco_spec::document::check_document;
use gco_spec::json::parse;
use gco_spec::scope::{AddressRegion, address_region, region_token};
use gco_spec::{DeployContext, Severity, plan_deploy};

#[test]
fn addresses_are_placed_as_the_monitor_places_them() {
    let named = |r: &str| AddressRegion::Named(r.to_owned());
    for (address, want) in [
        ("mooncake-master:50051", AddressRegion::Local),
        ("http://mooncake-master:8080/metadata", AddressRegion::Local),
        ("master.gco-inference.svc:50051", AddressRegion::Local),
        (
            "pd-decode.gco-inference.svc.cluster.local",
            AddressRegion::Local,
        ),
        ("[fe80::1]:50051", AddressRegion::Local),
        ("", AddressRegion::Local),
        ("kv-peer.example.com:50051", AddressRegion::Unknown),
        ("10.0.3.7:50051", AddressRegion::Unknown),
        ("pd.svc.example.com", AddressRegion::Unknown),
        ("peer.us-west-2.example.com:50051", named("us-west-2")),
        (
            "HTTP://Meta.EU-West-1.example.com/metadata",
            named("eu-west-1"),
        ),
        ("user@peer.ap-south-1.internal:9", named("ap-south-1")),
        ("peer.us-gov-west-1.example", named("us-gov-west-1")),
        ("us-east-1", named("us-east-1")),
        // A token must stand alone between word boundaries.
        ("xus-east-1.example.com", AddressRegion::Unknown),
        ("peer_us-east-1.example.com", AddressRegion::Unknown),
        ("us-east-1a.example.com", AddressRegion::Unknown),
        // Only the host counts, not a path.
        ("peer.example.com/us-east-1", AddressRegion::Unknown),
        ("mooncake-master/eu-west-1", AddressRegion::Local),
    ] {
        assert_eq!(address_region(address), want, "{address:?}");
    }
    assert_eq!(region_token("a.eu-central-2.b"), Some("eu-central-2"));
    assert_eq!(region_token("gov-x.us-gov-1"), Some("us-gov-1"));
    assert_eq!(region_token("no-region-here"), None);
}

const REQUEST: &str = r#"{"endpoint_name": "pd", "mooncake_mode": "both", "target_regions": ["us-east-1", "eu-west-1"], "mooncake_transfer": {"peer_addresses": ["peer.us-east-1.example.com:50051", "", "kv-peer.example.com:50051", "decode.gco-inference.svc"]}, "mooncake_store": {"master_server_address": "mooncake-master:50051", "metadata_server": "http://meta.eu-west-1.example.com/metadata"}}"#;

fn errors(report: &gco_spec::Report) -> Vec<(String, String)> {
    report
        .errors()
        .map(|d| (d.path.clone(), d.message.clone()))
        .collect()
}

#[test]
fn a_deploy_reports_each_address_outside_each_target_region() {
    let check = plan_deploy(&parse(REQUEST).unwrap(), &DeployContext::default());
    assert!(check.deployment.is_none());
    let e = |path: &str, message: &str| (path.to_owned(), message.to_owned());
    assert_eq!(
        errors(&check.report),
        [
            e(
                "mooncake.store.metadata_server",
                "cross-region boundary violation: 'http://meta.eu-west-1.example.com/metadata' resolves to region eu-west-1; expected region us-east-1"
            ),
            e(
                "mooncake.transfer.peer_addresses[0]",
                "cross-region boundary violation: 'peer.us-east-1.example.com:50051' resolves to region us-east-1; expected region eu-west-1"
            ),
            e(
                "mooncake.transfer.peer_addresses[2]",
                "cross-region boundary violation: 'kv-peer.example.com:50051' resolves to region unknown; expected region us-east-1"
            ),
            e(
                "mooncake.transfer.peer_addresses[2]",
                "cross-region boundary violation: 'kv-peer.example.com:50051' resolves to region unknown; expected region eu-west-1"
            ),
        ]
    );
    // The keys the newest monitor reads are not called ignored.
    assert!(
        !check
            .report
            .diagnostics
            .iter()
            .any(|d| d.message.contains("ignores")),
        "{:?}",
        check.report
    );
}

#[test]
fn without_known_target_regions_nothing_is_scope_checked() {
    let mut request = parse(REQUEST).unwrap();
    request.as_object_mut().unwrap().remove("target_regions");
    let check = plan_deploy(&request, &DeployContext::default());
    assert_eq!(errors(&check.report), []);
    // With the deployed regions as the default targets, it is.
    let deployed = vec!["us-east-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        ..DeployContext::default()
    };
    let check = plan_deploy(&request, &ctx);
    assert_eq!(errors(&check.report).len(), 2);
}

#[test]
fn a_record_check_reports_them_under_spec() {
    let record = r#"{"endpoint_name": "kv", "target_regions": ["us-east-1"], "namespace": "gco-inference", "desired_state": "deploying", "ingress_path": "/inference/kv", "created_at": "", "updated_at": "", "region_status": {}, "spec": {"image": "vllm/vllm-openai:v0.27.1", "mooncake": {"mode": "store", "store": {"enabled": true, "master_server_address": "master.us-west-2.example.com:50051"}}}}"#;
    let report = check_document(&parse(record).unwrap(), &gco_spec::Frameworks::CURRENT);
    assert_eq!(
        errors(&report),
        [(
            "spec.mooncake.store.master_server_address".to_owned(),
            "cross-region boundary violation: 'master.us-west-2.example.com:50051' resolves to region us-west-2; expected region us-east-1".to_owned()
        )]
    );
}

#[test]
fn store_transfer_settings_are_flagged_as_unread() {
    let check = plan_deploy(
        &parse(r#"{"endpoint_name": "kv", "mooncake_mode": "store", "mooncake_store": {"protocol": "tcp", "master_image": "m:1"}, "mooncake_transfer": {"bootstrap_base_port": 9000}}"#).unwrap(),
        &DeployContext::default(),
    );
    let warnings: Vec<_> = check
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| (d.path.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [(
            "mooncake.store.protocol",
            "mooncake.store.protocol is not read by GCO's newest monitor: mooncake.json takes protocol from mooncake.transfer.protocol"
        )]
    );
}
