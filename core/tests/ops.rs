//! Every operation's success and refusal, as pure functions on records.

use gco_spec::diff::diff;
use gco_spec::json::parse;
use gco_spec::{
    Change, DeployContext, DesiredState, OpErrorKind, Record, Value, apply, new_record, plan_deploy,
};

const NOW: &str = "2026-12-02T10:00:00.000000+00:00";

/// Distinct 64-hex tokens: 00..01, 00..02, ...
fn tokens() -> impl FnMut() -> String {
    let mut n = 0u64;
    move || {
        n += 1;
        format!("{n:064x}")
    }
}

fn token(n: u64) -> String {
    format!("{n:064x}")
}

/// A token source for changes that must mint none.
fn no_tokens() -> String {
    panic!("the change minted a token")
}

fn run(r: &Record, change: &Change) -> Record {
    apply(r, change, NOW, &mut tokens()).unwrap()
}

/// Whether applying changed nothing but the time (the backend then writes
/// nothing).
fn unchanged(before: &Record, after: &Record) -> bool {
    let mut after = after.clone();
    after.updated_at = before.updated_at.clone();
    after == *before
}

/// The review's lines: the paths whose values differ.
fn reviewed(before: &Record, after: &Record) -> Vec<String> {
    diff(&before.to_value(), &after.to_value())
        .into_iter()
        .map(|d| d.path)
        .filter(|p| p != "updated_at")
        .collect()
}

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
    let e = apply(r, &change, NOW, &mut no_tokens).unwrap_err();
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
        &mut no_tokens,
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
    let next = apply(&r, &Change::ConfigureStore { store: v(r#"{"enabled": true, "global_segment_size": 8589934592, "cold_tier_enabled": true}"#) }, NOW, &mut no_tokens).unwrap();
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
            with_proxy: Value::Null,
        },
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    assert_eq!(next.spec.get("image"), Some(&Value::str("img:2")));
    assert!(!next.spec.contains_key("region_image_uris"));
    assert_eq!(next.desired_state, DesiredState::Deploying);
    for bad in [r#""  ""#, "null", "3"] {
        assert_eq!(
            refusal(
                &r,
                Change::UpdateImage {
                    image: v(bad),
                    with_proxy: Value::Null
                }
            )
            .2,
            "Image must be a non-empty string"
        );
    }
}

#[test]
fn scale_only_plain_endpoints_without_autoscaling() {
    let mut r = plain();
    r.desired_state = DesiredState::Running;
    let next = apply(&r, &Change::Scale { replicas: v("4") }, NOW, &mut no_tokens).unwrap();
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
    // Only `enabled is True` counts, as in GCO's condition.
    r.spec.insert("autoscaling", v(r#"{"enabled": "true"}"#));
    assert_eq!(
        run(&r, &Change::Scale { replicas: v("4") })
            .spec
            .get("replicas"),
        Some(&Value::int(4))
    );
    r.spec.insert("autoscaling", v(r#"{"enabled": true}"#));
    let (kind, path, message) = refusal(&r, Change::Scale { replicas: v("4") });
    assert_eq!((kind, path.as_str()), (OpErrorKind::Conflict, "replicas"));
    assert_eq!(
        message,
        "Endpoint 'web' is autoscaled; update its min/max autoscaling bounds or disable autoscaling before using 'gco inference scale'."
    );
    // GCO checks no count; the core keeps the spec's rule (a Deployment
    // cannot have fewer than 0 replicas), and 0 scales to nothing.
    assert_eq!(
        run(&plain(), &Change::Scale { replicas: v("0") })
            .spec
            .get("replicas"),
        Some(&Value::int(0))
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
        },
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    let removed = apply(
        &added,
        &Change::RemoveRegion {
            region: v(r#""us-east-1""#),
        },
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    let stopped = apply(&removed, &Change::Stop, NOW, &mut no_tokens).unwrap();
    assert_eq!(stopped.target_regions, ["eu-west-1"]);
    // Their monitors initialize a legacy record's deletion themselves.
    let deleted = apply(&stopped, &Change::DELETE, NOW, &mut no_tokens).unwrap();
    assert_eq!(deleted.desired_state, DesiredState::Deleted);
    let written = deleted.to_value();
    let written = written.as_object().unwrap();
    for absent in [
        "lifecycle_id",
        "cleanup_regions",
        "region_generations",
        "deletion_generation",
        "deletion_regions",
    ] {
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
fn unknown_attributes_survive_operations() {
    let mut value = plain().to_value();
    value
        .as_object_mut()
        .unwrap()
        .insert("future_field", v(r#"{"x": [1, 2.5]}"#));
    let r = Record::from_value(&value).unwrap();
    let next = apply(&r, &Change::Stop, NOW, &mut no_tokens).unwrap();
    assert!(
        next.to_value()
            .to_json()
            .ends_with(r#""future_field": {"x": [1, 2.5]}}"#)
    );
}

fn add(region: &str) -> Change {
    Change::AddRegion {
        region: Value::str(region),
    }
}

fn remove(region: &str) -> Change {
    Change::RemoveRegion {
        region: Value::str(region),
    }
}

fn generation(r: &Record, region: &str) -> Option<String> {
    r.region_generations
        .as_ref()?
        .get(region)?
        .as_str()
        .map(str::to_owned)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn add_region_appends_it_with_a_fresh_token() {
    let next = run(&plain(), &add("eu-west-1"));
    assert_eq!(next.target_regions, ["us-east-1", "eu-west-1"]);
    assert_eq!(
        next.cleanup_regions,
        Some(strings(&["us-east-1", "eu-west-1"]))
    );
    assert_eq!(generation(&next, "eu-west-1"), Some(token(1)));
    assert_eq!(
        generation(&next, "us-east-1"),
        Some("ab".repeat(32)),
        "the other regions keep theirs"
    );
}

#[test]
fn add_region_of_a_target_writes_nothing() {
    let r = plain();
    let next = apply(&r, &add("us-east-1"), NOW, &mut no_tokens).unwrap();
    assert!(unchanged(&r, &next));
}

#[test]
fn add_region_again_mints_a_fresh_token_without_reappending_history() {
    let removed = run(&run(&plain(), &add("eu-west-1")), &remove("eu-west-1"));
    let before = generation(&removed, "eu-west-1");
    let again = apply(&removed, &add("eu-west-1"), NOW, &mut || token(99)).unwrap();
    assert_eq!(again.target_regions, ["us-east-1", "eu-west-1"]);
    assert_eq!(
        again.cleanup_regions,
        Some(strings(&["us-east-1", "eu-west-1"]))
    );
    assert_eq!(generation(&again, "eu-west-1"), Some(token(99)));
    assert_ne!(generation(&again, "eu-west-1"), before);
}

#[test]
fn remove_region_mints_a_fresh_token_and_keeps_the_history() {
    let added = run(&plain(), &add("eu-west-1"));
    let removed = apply(&added, &remove("us-east-1"), NOW, &mut || token(7)).unwrap();
    assert_eq!(removed.target_regions, ["eu-west-1"]);
    assert_eq!(
        removed.cleanup_regions,
        Some(strings(&["us-east-1", "eu-west-1"])),
        "cleanup regions are append-only"
    );
    assert_eq!(generation(&removed, "us-east-1"), Some(token(7)));
}

#[test]
fn remove_region_appends_a_target_missing_from_the_history() {
    let mut r = plain();
    r.target_regions.push("eu-west-1".into());
    let removed = apply(&r, &remove("eu-west-1"), NOW, &mut || token(3)).unwrap();
    assert_eq!(
        removed.cleanup_regions,
        Some(strings(&["us-east-1", "eu-west-1"]))
    );
    assert_eq!(generation(&removed, "eu-west-1"), Some(token(3)));
}

#[test]
fn the_last_region_may_be_removed() {
    let r = plain();
    let next = run(&r, &remove("us-east-1"));
    assert!(next.target_regions.is_empty());
    assert_eq!(next.desired_state, r.desired_state, "the state is kept");
    assert_eq!(next.cleanup_regions, Some(strings(&["us-east-1"])));
}

#[test]
fn remove_region_of_no_target_writes_nothing() {
    let r = plain();
    let next = apply(&r, &remove("eu-west-1"), NOW, &mut no_tokens).unwrap();
    assert!(unchanged(&r, &next));
}

#[test]
fn region_tokens_follow_the_history_and_missing_ones_are_minted() {
    let mut r = plain();
    r.cleanup_regions = Some(strings(&["us-east-1", "us-west-2"]));
    // us-west-2 has no token; ap-south-1 is no region of the history.
    r.region_generations = Some(
        v(r#"{"ap-south-1": "old", "us-east-1": "keep", "us-west-2": ""}"#)
            .as_object()
            .unwrap()
            .clone(),
    );
    let next = run(&r, &add("eu-west-1"));
    assert_eq!(
        next.region_generations.unwrap(),
        *v(&format!(
            r#"{{"us-east-1": "keep", "us-west-2": "{}", "eu-west-1": "{}"}}"#,
            token(2),
            token(1)
        ))
        .as_object()
        .unwrap()
    );
}

#[test]
fn region_refusals() {
    assert_eq!(
        refusal(&plain(), add("moon")),
        (
            OpErrorKind::Invalid,
            "region".into(),
            "region must be an AWS region such as 'us-east-1', got 'moon'".into()
        )
    );
}

#[test]
fn stop_from_any_state_but_deleted() {
    for state in [
        DesiredState::Deploying,
        DesiredState::Running,
        DesiredState::Stopped,
    ] {
        let mut r = plain();
        r.desired_state = state;
        let next = apply(&r, &Change::Stop, NOW, &mut no_tokens).unwrap();
        assert_eq!(next.desired_state, DesiredState::Stopped, "from {state}");
    }
}

#[test]
fn start_writes_running() {
    let stopped = run(&plain(), &Change::Stop);
    let started = apply(&stopped, &Change::Start, NOW, &mut no_tokens).unwrap();
    assert_eq!(started.desired_state, DesiredState::Running);
}

#[test]
fn start_only_a_stopped_endpoint() {
    let r = plain();
    assert_eq!(
        refusal(&r, Change::Start),
        (
            OpErrorKind::Conflict,
            "desired_state".into(),
            "Endpoint 'web' is in 'deploying' state; only stopped endpoints can be started.".into()
        )
    );
    let deleted = run(&r, &Change::DELETE);
    assert_eq!(
        refusal(&deleted, Change::Start).2,
        "Endpoint 'web' is deleted; wait for purge and redeploy it with 'gco inference deploy'."
    );
}

#[test]
fn delete_writes_the_deletion_token_and_regions() {
    let r = run(&plain(), &add("eu-west-1"));
    let r = run(&r, &remove("eu-west-1"));
    let deleted = apply(&r, &Change::DELETE, NOW, &mut || token(42)).unwrap();
    assert_eq!(deleted.desired_state, DesiredState::Deleted);
    assert_eq!(deleted.deletion_generation, Some(token(42)));
    assert_eq!(
        deleted.deletion_regions,
        Some(strings(&["us-east-1", "eu-west-1"])),
        "the cleanup history, not the targets"
    );
    assert_eq!(
        deleted.region_generations, r.region_generations,
        "delete never touches the region tokens"
    );
    let written = deleted.to_value().to_json();
    assert!(written.ends_with(&format!(
        r#""deletion_generation": "{}", "deletion_regions": ["us-east-1", "eu-west-1"]}}"#,
        token(42)
    )));
}

#[test]
fn delete_is_idempotent() {
    let deleted = run(&plain(), &Change::DELETE);
    let again = apply(&deleted, &Change::DELETE, NOW, &mut no_tokens).unwrap();
    assert!(
        unchanged(&deleted, &again),
        "a second delete changes nothing"
    );
}

#[test]
fn delete_keeps_deletion_fields_already_written() {
    // A record an older GCO deleted has neither: they are filled in, as
    // `if_not_exists` does; one it has is kept.
    let mut r = plain();
    r.desired_state = DesiredState::Deleted;
    r.deletion_regions = Some(strings(&["eu-west-1"]));
    let next = apply(&r, &Change::DELETE, NOW, &mut || token(5)).unwrap();
    assert_eq!(next.deletion_generation, Some(token(5)));
    assert_eq!(next.deletion_regions, Some(strings(&["eu-west-1"])));
}

fn owned_delete(label: Option<(&str, &str)>, id: Option<&str>) -> Change {
    Change::Delete {
        expected_owner_label: label.map(|(k, v)| (k.to_owned(), v.to_owned())),
        expected_lifecycle_id: id.map(str::to_owned),
    }
}

fn labelled() -> Record {
    record(r#"{"endpoint_name": "web", "image": "img:1", "labels": {"team": "ml"}}"#)
}

#[test]
fn owner_conditioned_delete_deletes_when_both_match() {
    let r = labelled();
    let id = "ab".repeat(32);
    let deleted = run(&r, &owned_delete(Some(("team", "ml")), Some(&id)));
    assert_eq!(deleted.desired_state, DesiredState::Deleted);
    // Already deleted, the same condition still holds and changes nothing.
    let again = apply(
        &deleted,
        &owned_delete(Some(("team", "ml")), Some(&id)),
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    assert!(unchanged(&deleted, &again));
}

#[test]
fn owner_conditioned_delete_refuses_another_owner() {
    let id = "ab".repeat(32);
    assert_eq!(
        refusal(&labelled(), owned_delete(Some(("team", "web")), Some(&id))),
        (
            OpErrorKind::ConditionFailed,
            "owner_label".into(),
            "Endpoint 'web' was not deleted: owner_label requires labels.team = 'web', but the endpoint has labels.team = 'ml'".into()
        )
    );
    assert_eq!(
        refusal(&labelled(), owned_delete(Some(("owner", "ml")), Some(&id))).2,
        "Endpoint 'web' was not deleted: owner_label requires labels.owner = 'ml', but the endpoint has no label 'owner'"
    );
}

#[test]
fn owner_conditioned_delete_refuses_another_lifecycle() {
    let other = "cd".repeat(32);
    assert_eq!(
        refusal(
            &labelled(),
            owned_delete(Some(("team", "ml")), Some(&other))
        ),
        (
            OpErrorKind::ConditionFailed,
            "lifecycle_id".into(),
            format!(
                "Endpoint 'web' was not deleted: lifecycle_id requires '{other}', but the endpoint has lifecycle_id '{}'",
                "ab".repeat(32)
            )
        )
    );
}

#[test]
fn owner_conditioned_delete_argument_refusals() {
    let r = labelled();
    assert_eq!(
        refusal(&r, owned_delete(Some(("team", "ml")), None)),
        (
            OpErrorKind::Invalid,
            "lifecycle_id".into(),
            "Owner-conditioned deletion also requires an immutable lifecycle id".into()
        )
    );
    assert_eq!(
        refusal(&r, owned_delete(None, Some("x"))),
        (
            OpErrorKind::Invalid,
            "owner_label".into(),
            "owner_label and lifecycle_id must be supplied together".into()
        )
    );
    for label in [("", "ml"), ("team", "")] {
        assert_eq!(
            refusal(&r, owned_delete(Some(label), Some("x"))).2,
            "Expected endpoint label name and value must be non-empty"
        );
    }
    assert_eq!(
        refusal(&r, owned_delete(Some(("team", "ml")), Some(""))).2,
        "Expected lifecycle id must be non-empty"
    );
}

#[test]
fn a_deleted_endpoint_refuses_each_operation_in_gco_words() {
    let deleted = run(&split(), &Change::DELETE);
    for (change, op) in [
        (Change::Scale { replicas: v("1") }, "scaled"),
        (
            Change::SetTopology {
                prefill: v("1"),
                decode: v("1"),
            },
            "updated",
        ),
        (
            Change::ConfigureStore {
                store: v(r#"{"enabled": true}"#),
            },
            "configured",
        ),
        (
            Change::UpdateImage {
                image: v(r#""x""#),
                with_proxy: Value::Null,
            },
            "updated",
        ),
        (
            Change::CanaryDeploy {
                image: v(r#""x""#),
                weight: None,
                replicas: None,
            },
            "updated",
        ),
        (Change::PromoteCanary, "updated"),
        (Change::RollbackCanary, "updated"),
        (Change::Stop, "stopped"),
        (add("eu-west-1"), "added to a Region"),
        (remove("us-east-1"), "removed from a Region"),
    ] {
        assert_eq!(change.kind().operation(), op);
        let (kind, path, message) = refusal(&deleted, change);
        assert_eq!(
            (kind, path.as_str()),
            (OpErrorKind::Conflict, "desired_state")
        );
        assert_eq!(
            message,
            format!(
                "Endpoint 'pd' is deleted and cannot be {op}; redeploy it after deletion completes."
            )
        );
    }
}

#[test]
fn a_spec_change_restarts_a_stopped_endpoint_and_the_review_says_so() {
    let stopped_plain = run(&plain(), &Change::Stop);
    let stopped_split = run(&split(), &Change::Stop);
    let with_canary = run(
        &plain(),
        &Change::CanaryDeploy {
            image: v(r#""img:2""#),
            weight: None,
            replicas: None,
        },
    );
    let stopped_canary = run(&with_canary, &Change::Stop);
    for (r, change) in [
        (
            &stopped_plain,
            Change::UpdateImage {
                image: v(r#""img:2""#),
                with_proxy: Value::Null,
            },
        ),
        (
            &stopped_split,
            Change::SetTopology {
                prefill: v("1"),
                decode: v("3"),
            },
        ),
        (
            &stopped_split,
            Change::ConfigureStore {
                store: v(r#"{"enabled": true}"#),
            },
        ),
        (&stopped_canary, Change::PromoteCanary),
        (&stopped_canary, Change::RollbackCanary),
    ] {
        let next = apply(r, &change, NOW, &mut no_tokens).unwrap();
        assert_eq!(next.desired_state, DesiredState::Deploying, "{change:?}");
        assert!(
            reviewed(r, &next).contains(&"desired_state".to_owned()),
            "{change:?}: {:?}",
            reviewed(r, &next)
        );
    }
    // Scale writes only the count: a stopped endpoint stays stopped.
    let scaled = run(&stopped_plain, &Change::Scale { replicas: v("3") });
    assert_eq!(scaled.desired_state, DesiredState::Stopped);
    assert_eq!(reviewed(&stopped_plain, &scaled), ["spec.replicas"]);
}

fn canary(image: &str, weight: Option<&str>, replicas: Option<&str>) -> Change {
    Change::CanaryDeploy {
        image: v(image),
        weight: weight.map(v),
        replicas: replicas.map(v),
    }
}

#[test]
fn canary_deploy_writes_the_block_with_gco_defaults() {
    let mut r = plain();
    r.desired_state = DesiredState::Running;
    let next = apply(&r, &canary(r#""img:2""#, None, None), NOW, &mut no_tokens).unwrap();
    assert_eq!(
        next.spec.get("canary").unwrap().to_json(),
        r#"{"image": "img:2", "weight": 10, "replicas": 1}"#
    );
    assert_eq!(next.desired_state, DesiredState::Deploying);
    let given = run(&r, &canary(r#""img:2""#, Some("25"), Some("3")));
    assert_eq!(
        given.spec.get("canary").unwrap().to_json(),
        r#"{"image": "img:2", "weight": 25, "replicas": 3}"#
    );
    let typed = given.canary().unwrap();
    assert_eq!(
        (typed.image.as_deref(), typed.weight, typed.replicas),
        (Some("img:2"), Some(25), Some(3))
    );
}

#[test]
fn canary_deploy_argument_refusals_in_gco_order() {
    let r = plain();
    let cases = [
        (
            canary(r#"" ""#, Some("0"), Some("0")),
            "image",
            "Canary image must be a non-empty string",
        ),
        (
            canary("3", None, None),
            "image",
            "Canary image must be a non-empty string",
        ),
        (
            canary(r#""i""#, Some("0"), Some("0")),
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            canary(r#""i""#, Some("100"), None),
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            canary(r#""i""#, Some("10.0"), None),
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            canary(r#""i""#, Some("null"), None),
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            canary(r#""i""#, None, Some("0")),
            "replicas",
            "Canary replicas must be a positive integer",
        ),
        (
            canary(r#""i""#, None, Some("true")),
            "replicas",
            "Canary replicas must be a positive integer",
        ),
    ];
    for (change, path, message) in cases {
        assert_eq!(
            refusal(&r, change),
            (OpErrorKind::Invalid, path.into(), message.into())
        );
    }
}

#[test]
fn canary_deploy_needs_a_running_or_deploying_endpoint() {
    let stopped = run(&plain(), &Change::Stop);
    assert_eq!(
        refusal(&stopped, canary(r#""i""#, None, None)),
        (
            OpErrorKind::Conflict,
            "desired_state".into(),
            "Cannot canary an endpoint in 'stopped' state. Endpoint must be running or deploying."
                .into()
        )
    );
}

#[test]
fn canary_deploy_is_refused_on_mooncake_endpoints() {
    assert_eq!(
        refusal(&split(), canary(r#""i""#, None, None)),
        (
            OpErrorKind::Conflict,
            "mooncake".into(),
            "Canary deployments are not supported for Mooncake endpoints".into()
        )
    );
}

#[test]
fn promote_makes_the_canary_image_the_endpoint_image() {
    let mut r = plain();
    r.spec
        .insert("region_image_uris", v(r#"{"us-east-1": "x"}"#));
    r.spec.insert(
        "canary",
        v(r#"{"image": " img:2 ", "weight": 10, "replicas": 1}"#),
    );
    let next = apply(&r, &Change::PromoteCanary, NOW, &mut no_tokens).unwrap();
    assert_eq!(next.spec.get("image"), Some(&Value::str("img:2")));
    assert!(!next.spec.contains_key("canary"));
    assert!(!next.spec.contains_key("region_image_uris"));
    assert_eq!(next.desired_state, DesiredState::Deploying);
}

#[test]
fn promote_refusals_in_gco_order() {
    let mut moon = split();
    moon.spec.insert("canary", v(r#"{"image": "x"}"#));
    assert_eq!(
        refusal(&moon, Change::PromoteCanary),
        (
            OpErrorKind::Conflict,
            "mooncake".into(),
            "Canary promotion is not supported for Mooncake endpoints".into()
        )
    );
    let with = |block: Option<&str>| {
        let mut r = plain();
        if let Some(block) = block {
            r.spec.insert("canary", v(block));
        }
        refusal(&r, Change::PromoteCanary)
    };
    for block in [None, Some("{}"), Some("null")] {
        assert_eq!(
            with(block),
            (
                OpErrorKind::Conflict,
                "canary".into(),
                "Endpoint 'web' has no active canary deployment".into()
            )
        );
    }
    assert_eq!(
        with(Some(r#"{"weight": 10}"#)),
        (
            OpErrorKind::Conflict,
            "canary.image".into(),
            "Canary deployment for 'web' is missing the 'image' field".into()
        )
    );
    for image in ["3", r#""  ""#] {
        assert_eq!(
            with(Some(&format!(r#"{{"image": {image}}}"#))).2,
            "Canary deployment for 'web' has an invalid 'image' field"
        );
    }
}

#[test]
fn rollback_drops_the_canary() {
    let r = run(&plain(), &canary(r#""img:2""#, None, None));
    let next = apply(&r, &Change::RollbackCanary, NOW, &mut no_tokens).unwrap();
    assert!(!next.spec.contains_key("canary"));
    assert_eq!(next.spec.get("image"), Some(&Value::str("img:1")));
    assert_eq!(
        refusal(&next, Change::RollbackCanary),
        (
            OpErrorKind::Conflict,
            "canary".into(),
            "Endpoint 'web' has no active canary deployment".into()
        )
    );
}

#[test]
fn rollback_repairs_a_mooncake_endpoint_with_a_canary() {
    let mut r = split();
    r.spec.insert("canary", v(r#"{"image": "x"}"#));
    // Any other spec update keeps the blocks together, which GCO's store refuses.
    assert_eq!(
        refusal(
            &r,
            Change::UpdateImage {
                image: v(r#""y""#),
                with_proxy: Value::Null
            }
        ),
        (
            OpErrorKind::Invalid,
            "canary".into(),
            "Endpoint spec cannot combine 'mooncake' and 'canary' blocks".into()
        )
    );
    let next = apply(&r, &Change::RollbackCanary, NOW, &mut no_tokens).unwrap();
    assert!(!next.spec.contains_key("canary"));
    assert!(next.spec.contains_key("mooncake"));
}

/// The console may move the PD proxy's image with the endpoint's (GCO's
/// update-image leaves it, as deployed): only where a proxy runs, and only
/// on a boolean's word.
#[test]
fn update_image_with_the_proxy() {
    let r = split();
    let next = apply(
        &r,
        &Change::UpdateImage {
            image: v(r#""img:2""#),
            with_proxy: Value::Bool(true),
        },
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    assert_eq!(next.spec.get("image"), Some(&Value::str("img:2")));
    assert_eq!(
        next.spec.get("mooncake").and_then(|m| m
            .as_object()?
            .get("proxy")?
            .as_object()?
            .get("image")
            .cloned()),
        Some(Value::str("img:2"))
    );
    assert_eq!(next.desired_state, DesiredState::Deploying);
    // Without it, the proxy keeps the image deploy gave it.
    let kept = apply(
        &r,
        &Change::UpdateImage {
            image: v(r#""img:2""#),
            with_proxy: Value::Bool(false),
        },
        NOW,
        &mut no_tokens,
    )
    .unwrap();
    assert_eq!(mooncake(&kept), mooncake(&r));
    assert_eq!(
        refusal(
            &plain(),
            Change::UpdateImage {
                image: v(r#""img:2""#),
                with_proxy: Value::Bool(true)
            }
        ),
        (
            OpErrorKind::Invalid,
            "with_proxy".to_owned(),
            "Endpoint 'web' runs no PD proxy: only the 'disaggregated' and 'both' modes have one."
                .to_owned()
        )
    );
    assert_eq!(
        refusal(
            &r,
            Change::UpdateImage {
                image: v(r#""img:2""#),
                with_proxy: v(r#""yes""#)
            }
        ),
        (
            OpErrorKind::Invalid,
            "with_proxy".to_owned(),
            "with_proxy must be a boolean, got 'yes'".to_owned()
        )
    );
}
