//! The record as stored: typed where GCO's layout is known, and written back
//! exactly as read, whatever a newer monitor or CLI put there.

use gco_spec::json::parse;
use gco_spec::status::{CanaryStatus, RoleReplicas, Roles, StoreStatus};
use gco_spec::{Record, RegionState, RegionStatus, Value};

fn v(text: &str) -> Value {
    parse(text).unwrap()
}

/// An item in the record's attribute order, with `region_status` and the
/// attributes after it as given.
fn item(region_status: &str, tail: &str) -> Value {
    v(&format!(
        r#"{{"endpoint_name": "pd", "desired_state": "deleted", "target_regions": ["us-east-1"],
            "namespace": "gco-inference", "spec": {{"image": "img:1"}}, "labels": {{"team": "ml"}},
            "ingress_path": "/inference/pd", "created_at": "2026-09-01T13:22:56.123456+00:00",
            "updated_at": "2026-09-01T13:22:57+00:00", "region_status": {region_status},
            "lifecycle_id": "{id}", "cleanup_regions": ["us-east-1", "eu-west-1"],
            "region_generations": {{"us-east-1": "{a}", "eu-west-1": "{b}"}}{tail}}}"#,
        id = "11".repeat(32),
        a = "22".repeat(32),
        b = "33".repeat(32),
    ))
}

const ODD_STATUS: &str = r#"{
    "us-east-1": {"state": "running", "replicas_ready": 2, "replicas_desired": 2,
        "last_sync": "2026-09-01T13:22:56+00:00", "lifecycle_id": "x", "region_generation": "y",
        "roles": {"prefill": {"ready": 1, "desired": 1}, "decode": {"ready": 1, "desired": 1}, "router": {"ready": 1}},
        "store": {"ready": true, "master": "10.0.0.1:50051", "shards": 4},
        "canary": {"state": "updating", "image": "img:2", "weight": 10, "replicas_ready": 0, "replicas_desired": 1},
        "absence_observations": 0, "future": {"a": [1, 2.5, null]}},
    "eu-west-1": {"state": "draining", "replicas_ready": "2", "error": null, "roles": [], "store": "on",
        "deletion_generation": "z", "absence_observations": 2.0},
    "ap-south-1": "stale",
    "us-west-2": [1, {"state": "running"}],
    "ca-central-1": {},
    "sa-east-1": {"replicas_desired": 123456789012345678901234567890}
}"#;

#[test]
fn a_stored_item_is_written_back_as_read() {
    let tails = [
        String::new(),
        format!(
            r#", "deletion_generation": "{}", "deletion_regions": ["us-east-1", "eu-west-1"]"#,
            "44".repeat(32)
        ),
        r#", "deletion_regions": [], "created_by": "ci", "future_attribute": {"x": [1.5]}"#.into(),
    ];
    for status in [ODD_STATUS, "{}", r#"{"us-east-1": null}"#] {
        for tail in &tails {
            let stored = item(status, tail);
            let record = Record::from_value(&stored).unwrap();
            assert_eq!(record.to_value(), stored, "{status} {tail}");
            assert_eq!(record.to_value().to_json(), stored.to_json());
        }
    }
}

#[test]
fn deletion_fields_are_typed() {
    let stored = item(
        "{}",
        &format!(
            r#", "deletion_generation": "{}", "deletion_regions": ["eu-west-1"]"#,
            "44".repeat(32)
        ),
    );
    let record = Record::from_value(&stored).unwrap();
    assert_eq!(record.deletion_generation, Some("44".repeat(32)));
    assert_eq!(record.deletion_regions, Some(vec!["eu-west-1".to_owned()]));
    assert!(record.extra.is_empty());
    let bare = Record::from_value(&item("{}", "")).unwrap();
    assert_eq!(
        (bare.deletion_generation, bare.deletion_regions),
        (None, None)
    );
}

#[test]
fn deletion_fields_of_another_shape_name_the_field() {
    let e = Record::from_value(&item("{}", r#", "deletion_generation": 7"#)).unwrap_err();
    assert_eq!(
        (e.field, e.message.as_str()),
        ("deletion_generation", "must be a string, got 7")
    );
    let e = Record::from_value(&item("{}", r#", "deletion_regions": "us-east-1""#)).unwrap_err();
    assert_eq!(
        (e.field, e.message.as_str()),
        ("deletion_regions", "must be a list of strings")
    );
}

#[test]
fn region_status_entries_are_typed_and_nothing_is_lost() {
    let record = Record::from_value(&item(ODD_STATUS, "")).unwrap();
    let statuses = record.region_statuses();
    let regions: Vec<&str> = statuses.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        regions,
        [
            "us-east-1",
            "eu-west-1",
            "ap-south-1",
            "us-west-2",
            "ca-central-1",
            "sa-east-1"
        ]
    );
    let running = statuses[0].1.clone().unwrap();
    assert_eq!(
        running,
        RegionStatus {
            state: Some(RegionState::Running),
            replicas_ready: Some(2),
            replicas_desired: Some(2),
            last_sync: Some("2026-09-01T13:22:56+00:00".into()),
            lifecycle_id: Some("x".into()),
            region_generation: Some("y".into()),
            deletion_generation: None,
            error: None,
            roles: Some(Roles {
                prefill: Some(RoleReplicas {
                    ready: Some(1),
                    desired: Some(1)
                }),
                decode: Some(RoleReplicas {
                    ready: Some(1),
                    desired: Some(1)
                }),
            }),
            store: Some(StoreStatus {
                ready: Some(true),
                master: Some("10.0.0.1:50051".into()),
            }),
            canary: Some(CanaryStatus {
                state: Some(RegionState::Updating),
                image: Some("img:2".into()),
                weight: Some(10),
                replicas_ready: Some(0),
                replicas_desired: Some(1),
            }),
            absence_observations: Some(0),
            extra: v(r#"{"future": {"a": [1, 2.5, null]}}"#)
                .as_object()
                .unwrap()
                .clone(),
        }
    );
    // An unknown state is kept as written; values of other shapes are in
    // `extra` with their keys.
    let odd = statuses[1].1.clone().unwrap();
    assert_eq!(odd.state, Some(RegionState::Other("draining".into())));
    assert_eq!(odd.state.as_ref().unwrap().to_string(), "draining");
    assert_eq!(odd.deletion_generation.as_deref(), Some("z"));
    assert_eq!(
        (odd.replicas_ready, odd.roles, odd.store, odd.error),
        (None, None, None, None)
    );
    assert_eq!(
        Value::Object(odd.extra).to_json(),
        r#"{"replicas_ready": "2", "error": null, "roles": [], "store": "on", "absence_observations": 2.0}"#
    );
    // Entries that are no mapping have no view (GCO's status skips them).
    assert_eq!(statuses[2].1, None);
    assert_eq!(statuses[3].1, None);
    assert_eq!(statuses[4].1, Some(RegionStatus::default()));
    // A count wider than 64 bits is no count here, and kept.
    let wide = statuses[5].1.clone().unwrap();
    assert_eq!(wide.replicas_desired, None);
    assert_eq!(
        Value::Object(wide.extra).to_json(),
        r#"{"replicas_desired": 123456789012345678901234567890}"#
    );
}

#[test]
fn every_state_of_the_monitor_is_known() {
    // GCO's RegionSyncState (inference_models.py@7a0b3c6fd4), and failed.
    for text in [
        "pending", "creating", "running", "updating", "stopping", "stopped", "deleting", "deleted",
        "error", "failed",
    ] {
        let state = RegionState::parse(text);
        assert!(!matches!(state, RegionState::Other(_)), "{text}");
        assert_eq!(state.as_str(), text);
    }
    assert_eq!(
        RegionState::parse("Running"),
        RegionState::Other("Running".into())
    );
}

#[test]
fn the_spec_canary_is_typed() {
    let mut record = Record::from_value(&item("{}", "")).unwrap();
    assert_eq!(record.canary(), None);
    record.spec.insert(
        "canary",
        v(r#"{"image": "img:2", "weight": "10", "replicas": 1}"#),
    );
    let canary = record.canary().unwrap();
    assert_eq!(
        (canary.image.as_deref(), canary.weight, canary.replicas),
        (Some("img:2"), None, Some(1))
    );
    record.spec.insert("canary", "on");
    assert_eq!(record.canary(), None);
}
