//! The reference's validation rules (`validate_mooncake_spec`), in its order.
//!
//! Written once over [`Sink`]: a fail-fast sink stops at the first error,
//! which is then the reference's message byte for byte; a collecting sink
//! goes on and gathers every error with its path.

use std::ops::ControlFlow;

use super::{Mode, Role, TransferProtocol};
use crate::bytesize::{ByteSizeArg, byte_size_value};
use crate::json::{Object, Value};
use crate::limits::{
    MOONCAKE_STORE_BYTE_SIZE_FIELDS, MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN, choices,
};

/// Where rule violations go. `Break` stops the check. Taken as `dyn`: one
/// copy of the rules serves both sinks (errors are the rare path).
pub(crate) trait Sink {
    fn error(&mut self, path: &'static str, message: String) -> ControlFlow<()>;
}

/// Keeps the first error and stops: the reference's behaviour.
#[derive(Default)]
pub(crate) struct FirstError(pub Option<(&'static str, String)>);

impl Sink for FirstError {
    fn error(&mut self, path: &'static str, message: String) -> ControlFlow<()> {
        self.0 = Some((path, message));
        ControlFlow::Break(())
    }
}

/// Keeps every error and goes on.
#[derive(Default)]
pub(crate) struct AllErrors(pub Vec<(&'static str, String)>);

impl Sink for AllErrors {
    fn error(&mut self, path: &'static str, message: String) -> ControlFlow<()> {
        self.0.push((path, message));
        ControlFlow::Continue(())
    }
}

/// Python's `d.get(key)`: absent and `null` are both `None`.
fn non_null(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// `repr(d.get(key))`.
fn repr_opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "None".to_owned(), Value::repr)
}

/// `mooncake.store` and the other sub-blocks: absent or `null` is fine, a
/// mapping is read, anything else is the given error.
fn sub_block<'a>(
    value: Option<&'a Value>,
    sink: &mut dyn Sink,
    path: &'static str,
    message: &'static str,
) -> ControlFlow<(), Option<&'a Object>> {
    match non_null(value) {
        None => ControlFlow::Continue(None),
        Some(v) => match v.as_object() {
            Some(o) => ControlFlow::Continue(Some(o)),
            None => {
                sink.error(path, message.to_owned())?;
                ControlFlow::Continue(None)
            }
        },
    }
}

pub(crate) fn check(block: &Value, sink: &mut dyn Sink) -> ControlFlow<()> {
    let Some(block) = block.as_object() else {
        return sink.error("mooncake", "mooncake block must be a mapping".into());
    };
    let [mode_value, store, transfer, topology, autoscaling] =
        block.fields(["mode", "store", "transfer", "topology", "autoscaling"]);

    let mode = mode_value.and_then(Mode::of);
    if mode.is_none() {
        sink.error(
            "mooncake.mode",
            format!(
                "mooncake.mode must be one of {}, got {}",
                choices(Mode::NAMES),
                repr_opt(mode_value)
            ),
        )?;
    }

    let store = sub_block(
        store,
        sink,
        "mooncake.store",
        "mooncake.store must be a mapping",
    )?;
    let transfer = sub_block(
        transfer,
        sink,
        "mooncake.transfer",
        "mooncake.transfer must be a mapping",
    )?;
    if let Some(transfer) = transfer {
        check_transfer(transfer, sink)?;
    }

    let store_fields = store.map(|s| {
        s.fields([
            "global_segment_size",
            "local_buffer_size",
            "cold_tier_enabled",
            "enabled",
        ])
    });
    if let Some([gss, lbs, ..]) = store_fields {
        for (field, value) in MOONCAKE_STORE_BYTE_SIZE_FIELDS.iter().zip([gss, lbs]) {
            if let Some(value) = value
                && let Err(e) = byte_size_value(ByteSizeArg::from(value))
            {
                let path = if *field == "global_segment_size" {
                    "mooncake.store.global_segment_size"
                } else {
                    "mooncake.store.local_buffer_size"
                };
                sink.error(path, format!("mooncake.store.{field}: {e}"))?;
            }
        }
    }

    if let Some(mode) = mode.filter(|m| m.is_split()) {
        check_topology(mode, topology, sink)?;
    }

    if let Some([_, _, cold_tier, enabled]) = store_fields
        && cold_tier.is_some_and(Value::is_true)
        && !enabled.is_some_and(Value::is_true)
    {
        sink.error(
            "mooncake.store.cold_tier_enabled",
            "mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true".into(),
        )?;
    }

    let autoscaling = sub_block(
        autoscaling,
        sink,
        "mooncake.autoscaling",
        "mooncake.autoscaling must be a mapping",
    )?;
    if let Some(autoscaling) = autoscaling {
        let [enabled, prefill, decode] = autoscaling.fields(["enabled", "prefill", "decode"]);
        if enabled.is_some_and(Value::is_true) && !mode.is_some_and(Mode::is_split) {
            sink.error(
                "mooncake.autoscaling.enabled",
                format!(
                    "mooncake.autoscaling.enabled requires a 'disaggregated' or 'both' mode, got {}",
                    repr_opt(mode_value)
                ),
            )?;
        }
        for (role, block) in [(Role::Prefill, prefill), (Role::Decode, decode)] {
            let message = match role {
                Role::Prefill => "mooncake.autoscaling.prefill must be a mapping",
                Role::Decode => "mooncake.autoscaling.decode must be a mapping",
            };
            if let Some(block) = sub_block(block, sink, role.autoscaling_path(), message)? {
                check_role_bounds(role, block, sink)?;
            }
        }
    }
    ControlFlow::Continue(())
}

fn check_transfer(transfer: &Object, sink: &mut dyn Sink) -> ControlFlow<()> {
    let [protocol, device_name] = transfer.fields(["protocol", "device_name"]);
    // `transfer.get("protocol", "rdma")`: only an absent key takes the default.
    if let Some(protocol) = protocol
        && protocol
            .as_str()
            .and_then(TransferProtocol::parse)
            .is_none()
    {
        sink.error(
            "mooncake.transfer.protocol",
            format!(
                "mooncake.transfer.protocol must be one of {}, got {}",
                choices(TransferProtocol::NAMES),
                protocol.repr()
            ),
        )?;
    }
    if let Some(device_name) = device_name
        && !matches!(device_name, Value::Str(_))
    {
        sink.error(
            "mooncake.transfer.device_name",
            format!(
                "mooncake.transfer.device_name must be a string, got {}",
                device_name.repr()
            ),
        )?;
    }
    ControlFlow::Continue(())
}

fn check_topology(mode: Mode, topology: Option<&Value>, sink: &mut dyn Sink) -> ControlFlow<()> {
    let Some(topology) = topology.and_then(Value::as_object) else {
        return sink.error(
            "mooncake.topology",
            format!(
                "mooncake.topology is required for mode '{}' with integer 'prefill' and 'decode' counts",
                mode.as_str()
            ),
        );
    };
    let [prefill, decode] = topology.fields(["prefill", "decode"]);
    for (role, count) in [(Role::Prefill, prefill), (Role::Decode, decode)] {
        let field = role.as_str();
        match non_null(count).and_then(Value::as_int) {
            None => sink.error(
                role.topology_path(),
                format!(
                    "mooncake.topology.{field} must be an integer in [{MOONCAKE_TOPOLOGY_MIN}, {MOONCAKE_TOPOLOGY_MAX}], got {}",
                    repr_opt(count)
                ),
            )?,
            Some(n) if !n.in_range(MOONCAKE_TOPOLOGY_MIN, MOONCAKE_TOPOLOGY_MAX) => sink.error(
                role.topology_path(),
                format!(
                    "mooncake.topology.{field} out of range [{MOONCAKE_TOPOLOGY_MIN}, {MOONCAKE_TOPOLOGY_MAX}]: {n}"
                ),
            )?,
            Some(_) => {}
        }
    }
    ControlFlow::Continue(())
}

fn check_role_bounds(role: Role, block: &Object, sink: &mut dyn Sink) -> ControlFlow<()> {
    let [min, max] = block.fields(["min_replicas", "max_replicas"]);
    let (min, max) = (non_null(min), non_null(max));
    let r = role.as_str();
    let min_int = min.and_then(Value::as_int);
    if let Some(min) = min {
        match min_int {
            None => sink.error(
                role.bound_path(false),
                format!(
                    "mooncake.autoscaling.{r}.min_replicas must be an integer, got {}",
                    min.repr()
                ),
            )?,
            Some(n) if n.cmp_i64(1).is_lt() => sink.error(
                role.bound_path(false),
                format!("mooncake.autoscaling.{r}.min_replicas must be >= 1, got {n}"),
            )?,
            Some(_) => {}
        }
    }
    if let Some(max) = max {
        match max.as_int() {
            None => sink.error(
                role.bound_path(true),
                format!(
                    "mooncake.autoscaling.{r}.max_replicas must be an integer, got {}",
                    max.repr()
                ),
            )?,
            Some(n) => {
                let effective_min = min_int.cloned().unwrap_or(1.into());
                if *n < effective_min {
                    sink.error(
                        role.bound_path(true),
                        format!(
                            "mooncake.autoscaling.{r}.max_replicas ({n}) must be >= min_replicas ({effective_min})"
                        ),
                    )?;
                }
            }
        }
    }
    ControlFlow::Continue(())
}
