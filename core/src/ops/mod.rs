//! Every operation on a stored endpoint (GCO_FACTS_NEWEST section 2), as a
//! pure function from (record, change) to the new record or the reason it
//! is refused. The caller reads the record, applies, and writes
//! conditionally; time and tokens come in as arguments.

mod canary;
mod delete;
mod error;
mod image;
mod lifecycle;
mod regions;
pub mod revert;
mod scale;
mod store;
mod topology;

use crate::deploy::TokenSource;
use crate::json::{Object, Value};
use crate::mooncake::validate_mooncake;
use crate::record::{DesiredState, Record};
use crate::spec::{check_spec_fields, mixed_blocks};

pub use error::{OpError, OpErrorKind};
pub use revert::{Reverted, record_of_content, revert};

/// A change to one endpoint, with its arguments as the client sent them.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Scale {
        replicas: Value,
    },
    SetTopology {
        prefill: Value,
        decode: Value,
    },
    /// The new `spec.mooncake.store` block (it replaces the old one).
    ConfigureStore {
        store: Value,
    },
    UpdateImage {
        image: Value,
        /// Whether the PD proxy's image (`mooncake.proxy.image`, which deploy
        /// stores apart) moves to it too: `true`, or absent/null/`false`.
        /// GCO's update-image has no such choice and leaves the proxy.
        with_proxy: Value,
    },
    AddRegion {
        region: Value,
    },
    RemoveRegion {
        region: Value,
    },
    Stop,
    Start,
    /// With both conditions, only the endpoint that carries the label and
    /// the lifecycle id is deleted.
    Delete {
        expected_owner_label: Option<(String, String)>,
        expected_lifecycle_id: Option<String>,
    },
    /// `None`: GCO's default (weight 10, 1 replica).
    CanaryDeploy {
        image: Value,
        weight: Option<Value>,
        replicas: Option<Value>,
    },
    PromoteCanary,
    RollbackCanary,
}

vocabulary! {
    /// What a change does, without its arguments: its name in an endpoint's
    /// history (`HistoryEntry::operation`), GCO's `gco inference` command
    /// where it has one. The API's table of changes (`gco_api::CHANGES`)
    /// gives each its route and the role it needs.
    pub enum ChangeKind {
        SetTopology = "set-topology",
        ConfigureStore = "configure-store",
        UpdateImage = "update-image",
        Scale = "scale",
        Stop = "stop",
        Start = "start",
        Delete = "delete",
        CanaryDeploy = "canary",
        PromoteCanary = "promote",
        RollbackCanary = "rollback",
        AddRegion = "add-region",
        RemoveRegion = "remove-region",
    }
}

impl ChangeKind {
    /// The `<op>` of GCO's messages: "is deleted and cannot be <op>",
    /// "changed while being <op>".
    pub const fn operation(self) -> &'static str {
        match self {
            ChangeKind::Scale => "scaled",
            ChangeKind::SetTopology
            | ChangeKind::UpdateImage
            | ChangeKind::CanaryDeploy
            | ChangeKind::PromoteCanary
            | ChangeKind::RollbackCanary => "updated",
            ChangeKind::ConfigureStore => "configured",
            ChangeKind::AddRegion => "added to a Region",
            ChangeKind::RemoveRegion => "removed from a Region",
            ChangeKind::Stop => "stopped",
            ChangeKind::Start => "started",
            ChangeKind::Delete => "deleted",
        }
    }

    /// Whether the change writes the spec: GCO's `update_spec`, which
    /// checks the whole spec and moves the endpoint to `deploying` (so a
    /// stopped one starts again).
    const fn updates_spec(self) -> bool {
        matches!(
            self,
            ChangeKind::SetTopology
                | ChangeKind::ConfigureStore
                | ChangeKind::UpdateImage
                | ChangeKind::CanaryDeploy
                | ChangeKind::PromoteCanary
                | ChangeKind::RollbackCanary
        )
    }
}

impl Change {
    /// A delete without conditions.
    pub const DELETE: Change = Change::Delete {
        expected_owner_label: None,
        expected_lifecycle_id: None,
    };

    pub const fn kind(&self) -> ChangeKind {
        match self {
            Change::Scale { .. } => ChangeKind::Scale,
            Change::SetTopology { .. } => ChangeKind::SetTopology,
            Change::ConfigureStore { .. } => ChangeKind::ConfigureStore,
            Change::UpdateImage { .. } => ChangeKind::UpdateImage,
            Change::AddRegion { .. } => ChangeKind::AddRegion,
            Change::RemoveRegion { .. } => ChangeKind::RemoveRegion,
            Change::Stop => ChangeKind::Stop,
            Change::Start => ChangeKind::Start,
            Change::Delete { .. } => ChangeKind::Delete,
            Change::CanaryDeploy { .. } => ChangeKind::CanaryDeploy,
            Change::PromoteCanary => ChangeKind::PromoteCanary,
            Change::RollbackCanary => ChangeKind::RollbackCanary,
        }
    }

    /// Arguments checked before anything is read.
    pub fn check_arguments(&self) -> Result<(), OpError> {
        match self {
            Change::Scale { replicas } => scale::check_arguments(replicas),
            Change::SetTopology { prefill, decode } => topology::check_arguments(prefill, decode),
            Change::ConfigureStore { store } => store::check_arguments(store),
            Change::UpdateImage { image, with_proxy } => image::check_arguments(image, with_proxy),
            Change::AddRegion { region } | Change::RemoveRegion { region } => {
                regions::region_name(region).map(|_| ())
            }
            Change::Delete {
                expected_owner_label,
                expected_lifecycle_id,
            } => delete::check_arguments(
                expected_owner_label.as_ref(),
                expected_lifecycle_id.as_deref(),
            ),
            Change::CanaryDeploy {
                image,
                weight,
                replicas,
            } => canary::check_arguments(image, weight.as_ref(), replicas.as_ref()),
            Change::Stop | Change::Start | Change::PromoteCanary | Change::RollbackCanary => Ok(()),
        }
    }
}

/// Applies `change` to `record` at time `now`; `tokens` mints the tokens it
/// writes (a region's generation, the deletion's). The result is the record
/// to write; `record` itself is never touched. A change that changes
/// nothing returns the record with only `updated_at` moved: the caller
/// writes nothing then, as GCO does.
pub fn apply(
    record: &Record,
    change: &Change,
    now: &str,
    tokens: &mut impl TokenSource,
) -> Result<Record, OpError> {
    change.check_arguments()?;
    let kind = change.kind();
    if record.desired_state == DesiredState::Deleted {
        let name = &record.endpoint_name;
        match kind {
            ChangeKind::Delete => {}
            ChangeKind::Start => {
                return Err(OpError::conflict(
                    "desired_state",
                    format!(
                        "Endpoint '{name}' is deleted; wait for purge and redeploy it with 'gco inference deploy'."
                    ),
                ));
            }
            other => {
                return Err(OpError::conflict(
                    "desired_state",
                    format!(
                        "Endpoint '{name}' is deleted and cannot be {}; redeploy it after deletion completes.",
                        other.operation()
                    ),
                ));
            }
        }
    }
    let mut next = record.clone();
    next.updated_at = now.to_owned();
    match change {
        Change::Scale { replicas } => scale::scale(&mut next, replicas)?,
        Change::SetTopology { prefill, decode } => {
            topology::set_topology(&mut next, prefill, decode)?
        }
        Change::ConfigureStore { store } => store::configure_store(&mut next, store)?,
        Change::UpdateImage { image, with_proxy } => {
            image::update_image(&mut next, image, with_proxy)?
        }
        Change::AddRegion { region } => {
            regions::add(&mut next, &regions::region_name(region)?, tokens)
        }
        Change::RemoveRegion { region } => {
            regions::remove(&mut next, &regions::region_name(region)?, tokens)
        }
        Change::Stop => lifecycle::stop(&mut next),
        Change::Start => lifecycle::start(&mut next)?,
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            delete::check_owner(
                record,
                expected_owner_label.as_ref(),
                expected_lifecycle_id.as_deref(),
            )?;
            delete::delete(&mut next, tokens);
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => canary::deploy(&mut next, image, weight.as_ref(), replicas.as_ref())?,
        Change::PromoteCanary => canary::promote(&mut next)?,
        Change::RollbackCanary => canary::rollback(&mut next)?,
    }
    if kind.updates_spec() {
        if let Some(mixed) = mixed_blocks(&next.spec) {
            return Err(OpError::invalid(mixed.path, mixed.message));
        }
        next.desired_state = DesiredState::Deploying;
    }
    Ok(next)
}

/// `dict(spec.get("mooncake") or {})`.
fn mooncake_of(spec: &Object) -> Object {
    spec.get("mooncake")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Puts a changed block in place after validating it and the whole spec, so
/// a refused change writes nothing.
fn set_block(next: &mut Record, block: Object) -> Result<(), OpError> {
    let block = Value::Object(block);
    validate_mooncake(&block).map_err(|d| OpError::invalid(d.path, d.message))?;
    next.spec.insert("mooncake", block);
    let mut report = crate::diagnostics::Report::default();
    // An operation never changes the framework: whether the team's GCO
    // accepts it is the deploy's question, not this change's.
    check_spec_fields(&next.spec, &crate::Frameworks::ANY, &mut report);
    if let Some(d) = report.first_error() {
        return Err(OpError::invalid(d.path.clone(), d.message.clone()));
    }
    Ok(())
}
