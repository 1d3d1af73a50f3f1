//! revert: an endpoint put back as a change left it, with GCO's region
//! semantics; a purged one deployed again; a deleted one refused.

use gco_spec::json::parse;
use gco_spec::ops::{Reverted, record_of_content, revert};
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

/// Tokens unlike [`tokens`]'s: ff..01, ff..02, ...
fn other_tokens() -> impl FnMut() -> String {
    let mut n = 0u64;
    move || {
        n += 1;
        format!("ff{n:062x}")
    }
}

fn no_tokens() -> String {
    panic!("the revert minted a token")
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

fn changed(r: &Record, change: Change) -> Record {
    apply(r, &change, NOW, &mut tokens()).unwrap()
}

fn updated(result: Reverted) -> Record {
    match result {
        Reverted::Updated(r) => r,
        other => panic!("not an update: {other:?}"),
    }
}

#[test]
fn a_spec_comes_back_and_is_deployed() {
    let mut before = split();
    before.desired_state = DesiredState::Running;
    let after = changed(
        &before,
        Change::SetTopology {
            prefill: Value::int(4),
            decode: Value::int(8),
        },
    );
    let back = updated(revert(Some(&after), &before, NOW, &mut no_tokens).unwrap());
    assert_eq!(back.spec, before.spec);
    assert_eq!(back.desired_state, DesiredState::Deploying, "a new spec");
    assert_eq!(back.updated_at, NOW);
    assert_eq!(back.lifecycle_id, after.lifecycle_id);
    assert_eq!(back.region_generations, after.region_generations);
}

#[test]
fn a_state_comes_back_as_start_and_stop_leave_it() {
    let mut running = split();
    running.desired_state = DesiredState::Running;
    let stopped = changed(&running, Change::Stop);
    let back = updated(revert(Some(&stopped), &running, NOW, &mut no_tokens).unwrap());
    assert_eq!(back.desired_state, DesiredState::Running);
    let again = updated(revert(Some(&back), &stopped, NOW, &mut no_tokens).unwrap());
    assert_eq!(again.desired_state, DesiredState::Stopped);
}

#[test]
fn a_promotion_by_the_monitors_is_kept_when_the_spec_comes_back_the_same() {
    let deploying = split();
    let mut promoted = deploying.clone();
    promoted.desired_state = DesiredState::Running;
    let back = updated(revert(Some(&promoted), &deploying, NOW, &mut no_tokens).unwrap());
    assert_eq!(back.desired_state, DesiredState::Running);
}

#[test]
fn regions_come_back_with_fresh_tokens_and_the_history_kept() {
    let before = split();
    let added = changed(
        &before,
        Change::AddRegion {
            region: Value::str("eu-west-1"),
        },
    );
    let back = updated(revert(Some(&added), &before, NOW, &mut other_tokens()).unwrap());
    assert_eq!(back.target_regions, ["us-east-1"]);
    // The region left: it stays in the cleanup history with a fresh token,
    // so its monitor's writes from before are fenced off.
    assert_eq!(
        back.cleanup_regions.as_deref(),
        Some(&["us-east-1".to_owned(), "eu-west-1".to_owned()][..])
    );
    let generations = back.region_generations.as_ref().unwrap();
    let added_generations = added.region_generations.as_ref().unwrap();
    assert_ne!(
        generations.get("eu-west-1"),
        added_generations.get("eu-west-1")
    );
    assert_eq!(
        generations.get("us-east-1"),
        added_generations.get("us-east-1")
    );
    // And back again: the region rejoins with a fresh token still.
    let forward = updated(revert(Some(&back), &added, NOW, &mut tokens()).unwrap());
    assert_eq!(forward.target_regions, ["us-east-1", "eu-west-1"]);
    assert_ne!(
        forward
            .region_generations
            .as_ref()
            .unwrap()
            .get("eu-west-1"),
        generations.get("eu-west-1")
    );
}

#[test]
fn reverting_to_the_current_content_changes_nothing() {
    let r = split();
    let back = updated(revert(Some(&r), &r, NOW, &mut no_tokens).unwrap());
    let mut same = back.clone();
    same.updated_at = r.updated_at.clone();
    assert_eq!(same, r);
}

#[test]
fn a_deleted_endpoint_is_refused_with_gcos_words() {
    let r = split();
    let deleted = changed(&r, Change::DELETE);
    let e = revert(Some(&deleted), &r, NOW, &mut no_tokens).unwrap_err();
    assert_eq!(e.kind, OpErrorKind::Conflict);
    assert_eq!(
        e.message,
        "Endpoint 'pd' is deleted and cannot be reverted; redeploy it after deletion completes."
    );
    // Nor does a revert delete.
    let e = revert(Some(&r), &deleted, NOW, &mut no_tokens).unwrap_err();
    assert_eq!((e.kind, e.path.as_str()), (OpErrorKind::Conflict, "to"));
}

#[test]
fn a_purged_endpoint_is_deployed_again_as_a_new_lifecycle() {
    let mut r = split();
    r.labels.insert("team", "ml");
    r.extra.insert("created_by", "ada");
    let stopped = changed(&r, Change::Stop);
    let created = match revert(None, &stopped, NOW, &mut tokens()).unwrap() {
        Reverted::Created(c) => c,
        other => panic!("not a create: {other:?}"),
    };
    assert_eq!(created.desired_state, DesiredState::Stopped);
    assert_eq!(created.spec, r.spec);
    assert_eq!(created.labels, r.labels);
    assert_eq!(
        (created.created_at.as_str(), created.updated_at.as_str()),
        (NOW, NOW)
    );
    assert_ne!(created.lifecycle_id, r.lifecycle_id);
    assert_eq!(
        created.cleanup_regions.as_deref(),
        Some(&r.target_regions[..])
    );
    assert!(created.region_status.is_empty());
    assert_eq!(created.deletion_generation, None);
    let running = revert(None, &r, NOW, &mut tokens()).unwrap();
    assert_eq!(running.record().desired_state, DesiredState::Deploying);
}

#[test]
fn a_spec_todays_rules_refuse_is_not_written_back() {
    let r = split();
    let mut broken = r.clone();
    let mut block = broken
        .spec
        .get("mooncake")
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    block.insert("mode", "sideways");
    broken.spec.insert("mooncake", block);
    let e = revert(Some(&r), &broken, NOW, &mut no_tokens).unwrap_err();
    assert_eq!(
        (e.kind, e.path.as_str()),
        (OpErrorKind::Invalid, "mooncake.mode")
    );
}

#[test]
fn content_without_the_monitors_attributes_reads_as_a_record() {
    let mut content = split().to_value();
    let o = content.as_object_mut().unwrap();
    o.remove("updated_at");
    o.remove("region_status");
    let r = record_of_content(&content).unwrap();
    assert_eq!(r.endpoint_name, "pd");
    let e = record_of_content(&parse("[1]").unwrap()).unwrap_err();
    assert_eq!(e.path, "to");
}
