//! scale (GCO_FACTS_NEWEST section 2.2): a plain endpoint's replica
//! count; a Mooncake endpoint scales by its topology, an autoscaled one by
//! its bounds.

use crate::json::Value;
use crate::record::Record;

use super::OpError;

pub(super) fn check_arguments(replicas: &Value) -> Result<(), OpError> {
    replica_count(replicas).map(|_| ())
}

pub(super) fn scale(next: &mut Record, replicas: &Value) -> Result<(), OpError> {
    let name = &next.endpoint_name;
    if next.spec.contains_key("mooncake") {
        return Err(OpError::conflict(
            "replicas",
            format!(
                "Endpoint '{name}' uses Mooncake topology; use 'gco inference set-topology' instead of 'gco inference scale'."
            ),
        ));
    }
    let autoscaled = next
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
    Ok(())
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
