//! Every operation on a stored endpoint (GCO_FACTS section 3), as a pure
//! function from (record, change) to the new record or the reason it is
//! refused. The caller reads the record, applies, and writes conditionally.

use std::fmt;

use crate::bytesize::{ByteSizeArg, author_byte_size};
use crate::diagnostics::Diagnostic;
use crate::json::{Object, Value};
use crate::limits::{
    MOONCAKE_STORE_BYTE_SIZE_FIELDS, MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN,
};
use crate::mooncake::{Mode, Role, validate_mooncake};
use crate::names::is_region;
use crate::record::{DesiredState, Record};
use crate::spec::{check_spec_fields, spec_mode};

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
    },
    /// `generation` is a fresh 64-hex token for a region not seen before.
    AddRegion {
        region: Value,
        generation: String,
    },
    RemoveRegion {
        region: Value,
    },
    Stop,
    Start,
    Delete,
}

impl Change {
    /// The verb in "cannot be <verb>" messages.
    fn verb(&self) -> &'static str {
        match self {
            Change::Scale { .. } => "scaled",
            Change::SetTopology { .. } => "resized",
            Change::ConfigureStore { .. } => "reconfigured",
            Change::UpdateImage { .. } => "updated",
            Change::AddRegion { .. } | Change::RemoveRegion { .. } => "moved between regions",
            Change::Stop => "stopped",
            Change::Start => "started",
            Change::Delete => "deleted",
        }
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
            Change::UpdateImage { image } => image_text(image).map(|_| ()),
            Change::Scale { replicas } => replica_count(replicas).map(|_| ()),
            Change::AddRegion { region, .. } | Change::RemoveRegion { region } => {
                region_name(region).map(|_| ())
            }
            Change::ConfigureStore { store } => match store {
                Value::Object(_) => Ok(()),
                other => Err(OpError::invalid(
                    "store",
                    format!("store settings must be a mapping, got {}", other.repr()),
                )),
            },
            Change::Stop | Change::Start | Change::Delete => Ok(()),
        }
    }
}

/// Why a change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: OpErrorKind,
    /// The field at fault (a spec path, or the argument's name).
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpErrorKind {
    /// The arguments or the resulting spec are invalid.
    Invalid,
    /// The endpoint's state does not allow the change.
    Conflict,
}

impl OpError {
    fn invalid(path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError {
            kind: OpErrorKind::Invalid,
            path: path.into(),
            message: message.into(),
        }
    }

    fn conflict(path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError {
            kind: OpErrorKind::Conflict,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(self.path.clone(), self.message.clone())
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpError {}

/// Applies `change` to `record` at time `now`. The result is the record to
/// write; `record` itself is never touched.
pub fn apply(record: &Record, change: &Change, now: &str) -> Result<Record, OpError> {
    change.check_arguments()?;
    let name = &record.endpoint_name;
    if record.desired_state == DesiredState::Deleted && *change != Change::Delete {
        return Err(OpError::conflict(
            "desired_state",
            format!(
                "Endpoint '{name}' is deleted and cannot be {}; redeploy it after deletion completes.",
                change.verb()
            ),
        ));
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
                        "Endpoint '{name}' has autoscaling enabled; disable autoscaling before scaling it by hand."
                    ),
                ));
            }
            next.spec.insert("replicas", replicas.clone());
        }
        Change::SetTopology { prefill, decode } => {
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
        Change::UpdateImage { image } => {
            next.spec.insert("image", image_text(image)?);
            next.spec.remove("region_image_uris");
            next.desired_state = DesiredState::Deploying;
        }
        Change::AddRegion { region, generation } => {
            let region = region_name(region)?;
            if !next.target_regions.contains(&region) {
                next.target_regions.push(region.clone());
            }
            // A record without these attributes is left for the monitors
            // to migrate (see `Record::cleanup_regions`).
            if let Some(cleanup) = &mut next.cleanup_regions
                && !cleanup.contains(&region)
            {
                cleanup.push(region.clone());
            }
            if let Some(generations) = &mut next.region_generations {
                generations.set_default(&region, generation.as_str());
            }
        }
        Change::RemoveRegion { region } => {
            let region = region_name(region)?;
            if next.target_regions == [region.clone()] {
                return Err(OpError::conflict(
                    "region",
                    format!(
                        "'{region}' is the only target region of Endpoint '{name}'; delete the endpoint instead."
                    ),
                ));
            }
            next.target_regions.retain(|r| *r != region);
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
        Change::Delete => next.desired_state = DesiredState::Deleted,
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
    check_spec_fields(&next.spec, &mut report);
    if let Some(d) = report.first_error() {
        return Err(OpError::invalid(d.path.clone(), d.message.clone()));
    }
    next.desired_state = DesiredState::Deploying;
    Ok(())
}
