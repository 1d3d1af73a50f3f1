//! Every operation's success and refusal, as pure functions on records.

use gco_spec::json::parse;
use gco_spec::{
    Change, DeployContext, DesiredState, OpErrorKind, Record, Value, apply, new_record, plan_deploy,
};

const NOW: &str = "2026-12-02T10:00:00.000000+00:00";

fn record(request: &str) -> Record {
    let deployed = vec!["us-east-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        ..DeployContext::default()
    };
    let d = plan_deploy(&parse(request).unwrap(), &ctx)
        .deployment
        .expect("a valid request");
    new_record(d, "2026-12-01T00:00:00.000000+00:00", &mut || {
        "ab".repeat(32)
    })
}

fn split() -> Record {
    record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "both", "prefill_replicas": 2, "decode_replicas": 2}"#,
    )
}

fn plain() -> Record {
    record(r#"{"endpoint_name": "web", "image": "img:1"}"#)
}

fn v(text: &str) -> Value {
    parse(text).unwrap()
}

fn refusal(r: &Record, change: Change) -> (OpErrorKind, String, String) {
    let e = apply(r, &change, NOW).unwrap_err();
    (e.kind, e.path, e.message)
}

fn mooncake(r: &Record) -> String {
    r.spec.get("mooncake").unwrap().to_json()
}

#[test]
fn set_topology_replaces_counts_and_redeploys() {
    let mut r = split();
    r.desired_state = DesiredState::Running;
    let next = apply(
        &r,
        &Change::SetTopology {
            prefill: v("3"),
            decode: v("5"),
        },
        NOW,
    )
    .unwrap();
    assert_eq!(next.desired_state, DesiredState::Deploying);
    assert_eq!(next.updated_at, NOW);
    assert!(mooncake(&next).contains(r#""topology": {"prefill": 3, "decode": 5}"#));
    assert_eq!(next.topology_label().as_deref(), Some("3p5d"));
    assert_eq!(
        r.topology_label().as_deref(),
        Some("2p2d"),
        "the input record is untouched"
    );
}

#[test]
fn set_topology_refusals() {
    let r = split();
    assert_eq!(
        refusal(
            &r,
            Change::SetTopology {
                prefill: v("2.0"),
                decode: v("1")
            }
        )
        .2,
        "topology prefill count must be an integer in [1, 1000], got 2.0"
    );
    assert_eq!(
        refusal(
            &r,
            Change::SetTopology {
                prefill: v("1"),
                decode: v("100000000000000000000")
            }
        )
        .2,
        "topology decode count out of range [1, 1000]: 100000000000000000000"
    );
    assert_eq!(
        refusal(
            &r,
            Change::SetTopology {
                prefill: v("true"),
                decode: v("1")
            }
        )
        .2,
        "topology prefill count must be an integer in [1, 1000], got True"
    );
    let (kind, path, message) = refusal(
        &plain(),
        Change::SetTopology {
            prefill: v("1"),
            decode: v("1"),
        },
    );
    assert_eq!(
        (kind, path.as_str()),
        (OpErrorKind::Conflict, "mooncake.mode")
    );
    assert_eq!(
        message,
        "Endpoint 'web' is not a split-mode endpoint; set-topology applies to 'disaggregated' and 'both' modes."
    );
}

#[test]
fn configure_store_authors_sizes_and_validates_the_block() {
    let r = split();
    let next = apply(&r, &Change::ConfigureStore { store: v(r#"{"enabled": true, "global_segment_size": 8589934592, "cold_tier_enabled": true}"#) }, NOW).unwrap();
    assert!(mooncake(&next).contains(r#""store": {"enabled": true, "global_segment_size": "8589934592", "cold_tier_enabled": true}"#));
    assert_eq!(
        refusal(
            &r,
            Change::ConfigureStore {
                store: v(r#"{"cold_tier_enabled": true}"#)
            }
        )
        .2,
        "mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true"
    );
    assert_eq!(
        refusal(
            &r,
            Change::ConfigureStore {
                store: v(r#"{"local_buffer_size": "-1"}"#)
            }
        )
        .2,
        "mooncake.store.local_buffer_size: byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '-1'"
    );
    assert_eq!(
        refusal(
            &plain(),
            Change::ConfigureStore {
                store: v(r#"{"enabled": true}"#)
            }
        )
        .2,
        "mooncake.mode must be one of {both, disaggregated, store}, got None"
    );
    assert_eq!(
        refusal(&r, Change::ConfigureStore { store: v("[]") }).2,
        "store settings must be a mapping, got []"
    );
}

#[test]
fn update_image_strips_and_drops_region_uris() {
    let mut r = plain();
    r.spec
        .insert("region_image_uris", v(r#"{"us-east-1": "x"}"#));
    let next = apply(
        &r,
        &Change::UpdateImage {
            image: v(r#"" img:2 ""#),
        },
        NOW,
    )
    .unwrap();
    assert_eq!(next.spec.get("image"), Some(&Value::str("img:2")));
    assert!(!next.spec.contains_key("region_image_uris"));
    assert_eq!(next.desired_state, DesiredState::Deploying);
    for bad in [r#""  ""#, "null", "3"] {
        assert_eq!(
            refusal(&r, Change::UpdateImage { image: v(bad) }).2,
            "Image must be a non-empty string"
        );
    }
}

#[test]
fn scale_only_plain_endpoints_without_autoscaling() {
    let mut r = plain();
    r.desired_state = DesiredState::Running;
    let next = apply(&r, &Change::Scale { replicas: v("4") }, NOW).unwrap();
    assert_eq!(next.spec.get("replicas"), Some(&Value::int(4)));
    assert_eq!(
        next.desired_state,
        DesiredState::Running,
        "scale keeps the state"
    );
    assert_eq!(
        refusal(&split(), Change::Scale { replicas: v("4") }).2,
        "Endpoint 'pd' uses Mooncake topology; use 'gco inference set-topology' instead of 'gco inference scale'."
    );
    r.spec.insert("autoscaling", v(r#"{"enabled": true}"#));
    assert_eq!(
        refusal(&r, Change::Scale { replicas: v("4") }).0,
        OpErrorKind::Conflict
    );
    assert_eq!(
        refusal(&plain(), Change::Scale { replicas: v("-1") }).2,
        "replicas must be an integer >= 0, got -1"
    );
    assert_eq!(
        refusal(
            &plain(),
            Change::Scale {
                replicas: v("9223372036854775808")
            }
        )
        .2,
        "replicas must be an integer in [0, 9223372036854775807], got 9223372036854775808"
    );
}

#[test]
fn regions_are_added_once_and_tracked() {
    let r = plain();
    let add = |r: &Record, region: &str, token: &str| {
        apply(
            r,
            &Change::AddRegion {
                region: Value::str(region),
                generation: token.into(),
            },
            NOW,
        )
        .unwrap()
    };
    let next = add(&r, "eu-west-1", &"cd".repeat(32));
    let again = add(&next, "eu-west-1", &"ef".repeat(32));
    assert_eq!(again.target_regions, ["us-east-1", "eu-west-1"]);
    assert_eq!(
        again.cleanup_regions.as_deref(),
        Some(&["us-east-1".to_owned(), "eu-west-1".to_owned()][..])
    );
    assert_eq!(
        again.region_generations.as_ref().unwrap().get("eu-west-1"),
        Some(&Value::str(&"cd".repeat(32)))
    );
    let removed = apply(
        &again,
        &Change::RemoveRegion {
            region: v(r#""us-east-1""#),
        },
        NOW,
    )
    .unwrap();
    assert_eq!(removed.target_regions, ["eu-west-1"]);
    assert_eq!(
        removed.cleanup_regions.as_deref(),
        Some(&["us-east-1".to_owned(), "eu-west-1".to_owned()][..]),
        "cleanup regions are append-only"
    );
    assert_eq!(
        refusal(
            &removed,
            Change::RemoveRegion {
                region: v(r#""eu-west-1""#)
            }
        )
        .2,
        "'eu-west-1' is the only target region of Endpoint 'web'; delete the endpoint instead."
    );
    assert_eq!(
        refusal(
            &r,
            Change::AddRegion {
                region: v(r#""moon""#),
                generation: String::new()
            }
        )
        .2,
        "region must be an AWS region such as 'us-east-1', got 'moon'"
    );
}

#[test]
fn records_of_older_gco_are_left_for_the_monitors_to_migrate() {
    // Older GCO wrote no lifecycle_id, cleanup_regions or region_generations;
    // the monitors add them to a record that lacks them, which they would not
    // do once this wrote empty ones.
    let legacy = Record::from_value(&v(r#"{"endpoint_name": "old", "desired_state": "running",
        "target_regions": ["us-east-1"], "namespace": "gco-inference", "spec": {"image": "nginx"},
        "created_at": "2026-01-01T00:00:00.000000+00:00", "updated_at": "2026-01-01T00:00:00.000000+00:00"}"#))
    .unwrap();
    let added = apply(
        &legacy,
        &Change::AddRegion {
            region: Value::str("eu-west-1"),
            generation: "cd".repeat(32),
        },
        NOW,
    )
    .unwrap();
    let removed = apply(
        &added,
        &Change::RemoveRegion {
            region: v(r#""us-east-1""#),
        },
        NOW,
    )
    .unwrap();
    let stopped = apply(&removed, &Change::Stop, NOW).unwrap();
    assert_eq!(stopped.target_regions, ["eu-west-1"]);
    let written = stopped.to_value();
    let written = written.as_object().unwrap();
    for absent in ["lifecycle_id", "cleanup_regions", "region_generations"] {
        assert!(
            !written.contains_key(absent),
            "{absent} written: {written:?}"
        );
    }
    // Present, even empty, is kept as it is.
    let mut migrated = legacy.clone();
    migrated.cleanup_regions = Some(Vec::new());
    let back = Record::from_value(&migrated.to_value()).unwrap();
    assert_eq!(back.cleanup_regions, Some(Vec::new()));
    assert_eq!(back.region_generations, None);
}

#[test]
fn lifecycle_transitions() {
    let r = plain();
    assert_eq!(
        refusal(&r, Change::Start).2,
        "Endpoint 'web' is in 'deploying' state; only stopped endpoints can be started."
    );
    let stopped = apply(&r, &Change::Stop, NOW).unwrap();
    assert_eq!(stopped.desired_state, DesiredState::Stopped);
    let started = apply(&stopped, &Change::Start, NOW).unwrap();
    assert_eq!(started.desired_state, DesiredState::Running);
    let deleted = apply(&started, &Change::Delete, NOW).unwrap();
    assert_eq!(deleted.desired_state, DesiredState::Deleted);
    assert_eq!(
        apply(&deleted, &Change::Delete, NOW).unwrap().desired_state,
        DesiredState::Deleted
    );
    for (change, verb) in [
        (Change::Stop, "stopped"),
        (Change::Start, "started"),
        (Change::Scale { replicas: v("1") }, "scaled"),
        (Change::UpdateImage { image: v(r#""x""#) }, "updated"),
        (
            Change::AddRegion {
                region: v(r#""eu-west-1""#),
                generation: String::new(),
            },
            "moved between regions",
        ),
    ] {
        let (kind, _, message) = refusal(&deleted, change);
        assert_eq!(kind, OpErrorKind::Conflict);
        assert_eq!(
            message,
            format!(
                "Endpoint 'web' is deleted and cannot be {verb}; redeploy it after deletion completes."
            )
        );
    }
}

#[test]
fn unknown_attributes_survive_operations() {
    let mut value = plain().to_value();
    value
        .as_object_mut()
        .unwrap()
        .insert("future_field", v(r#"{"x": [1, 2.5]}"#));
    let r = Record::from_value(&value).unwrap();
    let next = apply(&r, &Change::Stop, NOW).unwrap();
    assert!(
        next.to_value()
            .to_json()
            .ends_with(r#""future_field": {"x": [1, 2.5]}}"#)
    );
}
