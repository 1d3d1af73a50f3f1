//! revert: an endpoint put back as a change left it (a history entry's
//! `after`), with GCO's region semantics, so the monitors see an ordinary
//! change: a region that joins or leaves the targets gets a fresh
//! generation token and stays in the append-only cleanup history, a new
//! spec moves the endpoint to `deploying` (GCO's `update_spec`). An endpoint
//! that is gone (purged) is deployed again from the entry, as a new
//! lifecycle; one that is deleted and not yet purged is refused with GCO's
//! words.

use crate::deploy::TokenSource;
use crate::json::{Object, Value};
use crate::mooncake::validate_mooncake;
use crate::record::{DesiredState, Record, ingress_path};
use crate::spec::{check_spec_fields, mixed_blocks};

use super::{OpError, regions};

/// What a revert writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Reverted {
    /// The stored record, changed (a conditional update).
    Updated(Record),
    /// The endpoint was gone: a new record (a create), which the console
    /// lets only an admin make.
    Created(Record),
}

impl Reverted {
    pub fn record(&self) -> &Record {
        match self {
            Reverted::Updated(r) | Reverted::Created(r) => r,
        }
    }
}

/// `<op>` of GCO's "is deleted and cannot be <op>".
pub const OPERATION: &str = "reverted";

/// Puts the endpoint back as `to` (a record's content as a change left it:
/// its `updated_at` and `region_status` do not matter) at time `now`.
/// `current` is the stored record, `None` when the endpoint is gone.
///
/// What comes back: the spec, the targets and the desired state. The
/// namespace and labels never change after a deploy (GCO writes them
/// once), nor do the lifecycle id, the cleanup history (regions only join
/// it) and what other writers keep beside them. A result that equals
/// `current` but for `updated_at` is no change (the caller writes nothing).
pub fn revert(
    current: Option<&Record>,
    to: &Record,
    now: &str,
    tokens: &mut impl TokenSource,
) -> Result<Reverted, OpError> {
    let name = current.map_or(&to.endpoint_name, |c| &c.endpoint_name);
    if to.desired_state == DesiredState::Deleted {
        return Err(OpError::conflict(
            "to",
            format!(
                "That change left endpoint '{name}' deleted; a revert puts an endpoint back and never deletes one: delete it instead."
            ),
        ));
    }
    check_spec(&to.spec)?;
    let Some(current) = current else {
        return Ok(Reverted::Created(redeployed(to, now, tokens)));
    };
    if current.desired_state == DesiredState::Deleted {
        return Err(OpError::conflict(
            "desired_state",
            format!(
                "Endpoint '{name}' is deleted and cannot be {OPERATION}; redeploy it after deletion completes."
            ),
        ));
    }
    let mut next = current.clone();
    next.updated_at = now.to_owned();
    let targets = distinct(&to.target_regions);
    for region in &current.target_regions {
        if !targets.contains(region) {
            regions::remove(&mut next, region, tokens);
        }
    }
    for region in &targets {
        regions::add(&mut next, region, tokens);
    }
    // The same regions, in the entry's order.
    next.target_regions = targets;
    let spec_changed = next.spec != to.spec;
    next.spec = to.spec.clone();
    next.desired_state = match to.desired_state {
        DesiredState::Stopped => DesiredState::Stopped,
        // GCO's update_spec: a new spec is deployed.
        _ if spec_changed => DesiredState::Deploying,
        // The same spec, which the monitors have since promoted: still so.
        DesiredState::Deploying if current.desired_state == DesiredState::Running => {
            DesiredState::Running
        }
        state => state,
    };
    Ok(Reverted::Updated(next))
}

/// The endpoint deployed again from `to`, as `new_record` makes a record:
/// a new lifecycle id, a token per target, the targets as the cleanup
/// history, no status and no deletion. A stopped one stays stopped;
/// otherwise it is `deploying`.
fn redeployed(to: &Record, now: &str, tokens: &mut impl TokenSource) -> Record {
    let targets = distinct(&to.target_regions);
    let mut generations = Object::new();
    for region in &targets {
        generations.insert(region, tokens.token());
    }
    Record {
        endpoint_name: to.endpoint_name.clone(),
        desired_state: match to.desired_state {
            DesiredState::Stopped => DesiredState::Stopped,
            _ => DesiredState::Deploying,
        },
        cleanup_regions: Some(targets.clone()),
        target_regions: targets,
        namespace: to.namespace.clone(),
        spec: to.spec.clone(),
        labels: to.labels.clone(),
        ingress_path: ingress_path(&to.endpoint_name),
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
        region_status: Object::new(),
        lifecycle_id: Some(tokens.token()),
        region_generations: Some(generations),
        deletion_generation: None,
        deletion_regions: None,
        extra: to.extra.clone(),
    }
}

/// The spec's checks as an operation makes them: today's rules, so a spec
/// they refuse is not written back.
fn check_spec(spec: &Object) -> Result<(), OpError> {
    if let Some(mixed) = mixed_blocks(spec) {
        return Err(OpError::invalid(mixed.path, mixed.message));
    }
    if let Some(block) = spec.get("mooncake") {
        validate_mooncake(block).map_err(|d| OpError::invalid(d.path, d.message))?;
    }
    let mut report = crate::diagnostics::Report::default();
    check_spec_fields(spec, &crate::Frameworks::ANY, &mut report);
    match report.first_error() {
        Some(d) => Err(OpError::invalid(d.path.clone(), d.message.clone())),
        None => Ok(()),
    }
}

/// De-duplicated, first-seen order (as GCO keeps targets).
fn distinct(regions: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(regions.len());
    for r in regions {
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    out
}

/// `value` read as the record content a history entry holds.
pub fn record_of_content(content: &Value) -> Result<Record, OpError> {
    Record::from_value(content).map_err(|e| {
        OpError::invalid(
            "to",
            format!(
                "the history entry's record cannot be read: {}: {}",
                e.field, e.message
            ),
        )
    })
}
