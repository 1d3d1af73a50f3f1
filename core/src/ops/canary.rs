//! canary_deploy, promote_canary and rollback_canary (GCO_FACTS_NEWEST
//! sections 2.9 and 2.10): a classic endpoint's second Deployment with a
//! share of the traffic, in `spec.canary`.

use crate::json::{Object, Value};
use crate::limits::{
    CANARY_DEFAULT_REPLICAS, CANARY_DEFAULT_WEIGHT, CANARY_WEIGHT_MAX, CANARY_WEIGHT_MIN,
};
use crate::record::{DesiredState, Record};

use super::OpError;

/// The arguments, checked before the record is read, in GCO's order.
pub(super) fn check_arguments(
    image: &Value,
    weight: Option<&Value>,
    replicas: Option<&Value>,
) -> Result<(), OpError> {
    if image.as_str().is_none_or(|s| s.trim().is_empty()) {
        return Err(OpError::invalid(
            "image",
            "Canary image must be a non-empty string",
        ));
    }
    if let Some(weight) = weight
        && !weight
            .as_int()
            .is_some_and(|w| w.in_range(CANARY_WEIGHT_MIN, CANARY_WEIGHT_MAX))
    {
        return Err(OpError::invalid(
            "weight",
            format!(
                "Canary weight must be an integer between {CANARY_WEIGHT_MIN} and {CANARY_WEIGHT_MAX}"
            ),
        ));
    }
    // A bool is no count (Python's bool is an int: GCO refuses it by name).
    if let Some(replicas) = replicas
        && !replicas.as_int().is_some_and(|r| r.in_range(1, i64::MAX))
    {
        return Err(OpError::invalid(
            "replicas",
            "Canary replicas must be a positive integer",
        ));
    }
    Ok(())
}

/// Sets up the canary: only on a classic endpoint that is running or being
/// deployed.
pub(super) fn deploy(
    next: &mut Record,
    image: &Value,
    weight: Option<&Value>,
    replicas: Option<&Value>,
) -> Result<(), OpError> {
    let state = next.desired_state;
    if !matches!(state, DesiredState::Running | DesiredState::Deploying) {
        return Err(OpError::conflict(
            "desired_state",
            format!(
                "Cannot canary an endpoint in '{state}' state. Endpoint must be running or deploying."
            ),
        ));
    }
    if next.spec.contains_key("mooncake") {
        return Err(OpError::conflict(
            "mooncake",
            "Canary deployments are not supported for Mooncake endpoints",
        ));
    }
    let mut canary = Object::new();
    canary.insert("image", image.clone());
    canary.insert(
        "weight",
        weight.cloned().unwrap_or(Value::int(CANARY_DEFAULT_WEIGHT)),
    );
    canary.insert(
        "replicas",
        replicas
            .cloned()
            .unwrap_or(Value::int(CANARY_DEFAULT_REPLICAS)),
    );
    next.spec.insert("canary", canary);
    Ok(())
}

/// The canary's image becomes the endpoint's; the canary goes.
pub(super) fn promote(next: &mut Record) -> Result<(), OpError> {
    let name = &next.endpoint_name;
    if next.spec.contains_key("mooncake") {
        return Err(OpError::conflict(
            "mooncake",
            "Canary promotion is not supported for Mooncake endpoints",
        ));
    }
    let Some(canary) = next.spec.get("canary").filter(|c| c.is_truthy()) else {
        return Err(no_canary(name));
    };
    let Some(image) = canary.as_object().and_then(|c| c.get("image")) else {
        return Err(OpError::conflict(
            "canary.image",
            format!("Canary deployment for '{name}' is missing the 'image' field"),
        ));
    };
    let Some(image) = image.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
        return Err(OpError::conflict(
            "canary.image",
            format!("Canary deployment for '{name}' has an invalid 'image' field"),
        ));
    };
    let image = image.to_owned();
    next.spec.insert("image", image);
    next.spec.remove("canary");
    next.spec.remove("region_image_uris");
    Ok(())
}

/// The canary goes; allowed on a Mooncake endpoint too, so a record that
/// holds both blocks (which GCO's store refuses) can be repaired.
pub(super) fn rollback(next: &mut Record) -> Result<(), OpError> {
    if next.spec.remove("canary").is_none() {
        return Err(no_canary(&next.endpoint_name));
    }
    Ok(())
}

fn no_canary(name: &str) -> OpError {
    OpError::conflict(
        "canary",
        format!("Endpoint '{name}' has no active canary deployment"),
    )
}
