//! Every operation on a stored endpoint (GCO_FACTS_NEWEST section 2), as a
//! pure function from (record, change) to the new record or the reason it
//! is refused. The caller reads the record, applies, and writes
//! conditionally; time and tokens come in as arguments.

mod canary;
mod delete;
mod error;
mod regions;
pub mod revert;

use crate::bytesize::{ByteSizeArg, author_byte_size};
use crate::deploy::TokenSource;
use crate::json::{Object, Value};
use crate::limits::{
    MOONCAKE_STORE_BYTE_SIZE_FIELDS, MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN,
};
use crate::mooncake::{Mode, Role, validate_mooncake};
use crate::names::is_region;
use crate::record::{DesiredState, Record};
use crate::spec::{check_spec_fields, mixed_blocks, spec_mode};

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

impl Change {
    /// A delete without conditions.
    pub const DELETE: Change = Change::Delete {
        expected_owner_label: None,
        expected_lifecycle_id: None,
    };

    /// The `<op>` of GCO's messages: "is deleted and cannot be <op>",
    /// "changed while being <op>".
    pub fn operation(&self) -> &'static str {
        match self {
            Change::Scale { .. } => "scaled",
            Change::SetTopology { .. }
            | Change::UpdateImage { .. }
            | Change::CanaryDeploy { .. }
            | Change::PromoteCanary
            | Change::RollbackCanary => "updated",
            Change::ConfigureStore { .. } => "configured",
            Change::AddRegion { .. } => "added to a Region",
            Change::RemoveRegion { .. } => "removed from a Region",
            Change::Stop => "stopped",
            Change::Start => "started",
            Change::Delete { .. } => "deleted",
        }
    }

    /// The change's name in an endpoint's history
    /// (`HistoryEntry::operation`): GCO's `gco inference` command where it
    /// has one.
    pub fn name(&self) -> &'static str {
        match self {
            Change::Scale { .. } => "scale",
            Change::SetTopology { .. } => "set-topology",
            Change::ConfigureStore { .. } => "configure-store",
            Change::UpdateImage { .. } => "update-image",
            Change::AddRegion { .. } => "add-region",
            Change::RemoveRegion { .. } => "remove-region",
            Change::Stop => "stop",
            Change::Start => "start",
            Change::Delete { .. } => "delete",
            Change::CanaryDeploy { .. } => "canary",
            Change::PromoteCanary => "promote",
            Change::RollbackCanary => "rollback",
        }
    }

    /// Whether the change writes the spec: GCO's `update_spec`, which
    /// checks the whole spec and moves the endpoint to `deploying` (so a
    /// stopped one starts again).
    fn updates_spec(&self) -> bool {
        matches!(
            self,
            Change::SetTopology { .. }
                | Change::ConfigureStore { .. }
                | Change::UpdateImage { .. }
                | Change::CanaryDeploy { .. }
                | Change::PromoteCanary
                | Change::RollbackCanary
        )
    }

    /// Arguments checked before anything is read (the reference checks
    /// topology counts first, so a bad count never needs the record).
    pub fn check_arguments(&self) -> Result<(), OpError> {
        match self {
            Change::SetTopology { prefill, decode } => {
                for (role, count) in [(Role::Prefill, prefill), (Role::Decode, decode)] {
                    check_topology_count(role, count)?;
                }
                Ok(())
            }
            Change::UpdateImage { image, with_proxy } => {
                image_text(image)?;
                match with_proxy {
                    Value::Null | Value::Bool(_) => Ok(()),
                    other => Err(OpError::invalid(
                        "with_proxy",
                        format!("with_proxy must be a boolean, got {}", other.repr()),
                    )),
                }
            }
            Change::Scale { replicas } => replica_count(replicas).map(|_| ()),
            Change::AddRegion { region } | Change::RemoveRegion { region } => {
                region_name(region).map(|_| ())
            }
            Change::ConfigureStore { store } => match store {
                Value::Object(_) => Ok(()),
                other => Err(OpError::invalid(
                    "store",
                    format!("store settings must be a mapping, got {}", other.repr()),
                )),
            },
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
    let name = &record.endpoint_name;
    if record.desired_state == DesiredState::Deleted {
        match change {
            Change::Delete { .. } => {}
            Change::Start => {
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
        Change::Scale { replicas } => {
            if record.spec.contains_key("mooncake") {
                return Err(OpError::conflict(
                    "replicas",
                    format!(
                        "Endpoint '{name}' uses Mooncake topology; use 'gco inference set-topology' instead of 'gco inference scale'."
                    ),
                ));
            }
            let autoscaled = record
                .spec
                .get("autoscaling")
                .and_then(Value::as_object)
                .and_then(|a| a.get("enabled"));
            if autoscaled.is_some_and(Value::is_true) {
                return Err(OpError::conflict(
                    "replicas",
                    format!(
                        "Endpoint '{name}' is autoscaled; update its min/max autoscaling bounds or disable autoscaling before using 'gco inference scale'."
                    ),
                ));
            }
            next.spec.insert("replicas", replicas.clone());
        }
        Change::SetTopology { prefill, decode } => {
            // GCO writes a topology into any spec; a plain or store-mode
            // endpoint would get a block its monitor refuses, so only split
            // modes take one here.
            if !spec_mode(&record.spec).is_some_and(Mode::is_split) {
                return Err(OpError::conflict(
                    "mooncake.mode",
                    format!(
                        "Endpoint '{name}' is not a split-mode endpoint; set-topology applies to 'disaggregated' and 'both' modes."
                    ),
                ));
            }
            let mut block = mooncake_of(&record.spec);
            let mut topology = Object::new();
            topology.insert("prefill", prefill.clone());
            topology.insert("decode", decode.clone());
            block.insert("topology", topology);
            set_block(&mut next, block)?;
        }
        Change::ConfigureStore { store } => {
            let mut settings = store.as_object().cloned().unwrap_or_default();
            for field in MOONCAKE_STORE_BYTE_SIZE_FIELDS {
                if let Some(v) = settings.get(field) {
                    let authored = author_byte_size(ByteSizeArg::from(v)).map_err(|e| {
                        OpError::invalid(
                            format!("mooncake.store.{field}"),
                            format!("mooncake.store.{field}: {e}"),
                        )
                    })?;
                    settings.insert(field, authored);
                }
            }
            let mut block = mooncake_of(&record.spec);
            block.insert("store", settings);
            set_block(&mut next, block)?;
        }
        Change::UpdateImage { image, with_proxy } => {
            let image = image_text(image)?;
            if with_proxy.is_true() {
                if !spec_mode(&record.spec).is_some_and(Mode::is_split) {
                    return Err(OpError::invalid(
                        "with_proxy",
                        format!(
                            "Endpoint '{name}' runs no PD proxy: only the 'disaggregated' and 'both' modes have one."
                        ),
                    ));
                }
                let mut block = mooncake_of(&record.spec);
                let mut proxy = block
                    .get("proxy")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                proxy.insert("image", image.as_str());
                block.insert("proxy", proxy);
                next.spec.insert("image", image);
                set_block(&mut next, block)?;
            } else {
                next.spec.insert("image", image);
            }
            next.spec.remove("region_image_uris");
        }
        Change::AddRegion { region } => regions::add(&mut next, &region_name(region)?, tokens),
        Change::RemoveRegion { region } => {
            regions::remove(&mut next, &region_name(region)?, tokens)
        }
        Change::Stop => next.desired_state = DesiredState::Stopped,
        Change::Start => {
            if record.desired_state != DesiredState::Stopped {
                return Err(OpError::conflict(
                    "desired_state",
                    format!(
                        "Endpoint '{name}' is in '{}' state; only stopped endpoints can be started.",
                        record.desired_state
                    ),
                ));
            }
            next.desired_state = DesiredState::Running;
        }
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
    if change.updates_spec() {
        if let Some(mixed) = mixed_blocks(&next.spec) {
            return Err(OpError::invalid(mixed.path, mixed.message));
        }
        next.desired_state = DesiredState::Deploying;
    }
    Ok(next)
}

fn check_topology_count(role: Role, count: &Value) -> Result<(), OpError> {
    let field = role.as_str();
    match count.as_int() {
        None => Err(OpError::invalid(
            field,
            format!(
                "topology {field} count must be an integer in [{MOONCAKE_TOPOLOGY_MIN}, {MOONCAKE_TOPOLOGY_MAX}], got {}",
                count.repr()
            ),
        )),
        Some(n) if !n.in_range(MOONCAKE_TOPOLOGY_MIN, MOONCAKE_TOPOLOGY_MAX) => {
            Err(OpError::invalid(
                field,
                format!(
                    "topology {field} count out of range [{MOONCAKE_TOPOLOGY_MIN}, {MOONCAKE_TOPOLOGY_MAX}]: {n}"
                ),
            ))
        }
        Some(_) => Ok(()),
    }
}

fn image_text(image: &Value) -> Result<String, OpError> {
    match image.as_str().map(str::trim) {
        // GCO's update-image takes any text; the monitor's pods could not
        // pull one that is no reference, so the console refuses it.
        Some(s) if !s.is_empty() && !crate::names::is_image_reference(s) => Err(OpError::invalid(
            "image",
            format!(
                "image {} is not an image reference ([registry/]repository[:tag][@digest]; the repository in lowercase letters, digits, '.', '_', '-' and '/'): GCO's monitor could not pull it",
                crate::pyrepr::repr_text(s)
            ),
        )),
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err(OpError::invalid(
            "image",
            "Image must be a non-empty string",
        )),
    }
}

fn replica_count(replicas: &Value) -> Result<i64, OpError> {
    match replicas.as_int().and_then(|i| i.as_i64()) {
        Some(n) if n >= 0 => Ok(n),
        _ => {
            let past_top = replicas.as_int().is_some_and(|i| i.as_i64().is_none());
            let range = if past_top {
                format!("in [0, {}]", i64::MAX)
            } else {
                ">= 0".to_owned()
            };
            Err(OpError::invalid(
                "replicas",
                format!(
                    "replicas must be an integer {range}, got {}",
                    replicas.repr()
                ),
            ))
        }
    }
}

fn region_name(region: &Value) -> Result<String, OpError> {
    match region.as_str() {
        Some(r) if is_region(r) => Ok(r.to_owned()),
        _ => Err(OpError::invalid(
            "region",
            format!(
                "region must be an AWS region such as 'us-east-1', got {}",
                region.repr()
            ),
        )),
    }
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
