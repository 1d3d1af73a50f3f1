//! delete (GCO_FACTS_NEWEST section 2.8): `deleted`, the deletion token and
//! regions (kept by a second delete, so it changes nothing), and the
//! owner-conditioned form that deletes only the endpoint the caller owns.

use crate::deploy::TokenSource;
use crate::json::Value;
use crate::record::{DesiredState, Record};

use super::OpError;

/// An owner-conditioned delete's parameters, checked before the read.
pub(super) fn check_arguments(
    owner_label: Option<&(String, String)>,
    lifecycle_id: Option<&str>,
) -> Result<(), OpError> {
    match (owner_label, lifecycle_id) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(OpError::invalid(
            "lifecycle_id",
            "Owner-conditioned deletion also requires an immutable lifecycle id",
        )),
        // GCO's manager ignores a lone lifecycle id, which would delete what
        // the caller meant to protect; its CLI refuses it, as this does.
        (None, Some(_)) => Err(OpError::invalid(
            "owner_label",
            "owner_label and lifecycle_id must be supplied together",
        )),
        (Some((key, value)), Some(id)) => {
            if key.is_empty() || value.is_empty() {
                return Err(OpError::invalid(
                    "owner_label",
                    "Expected endpoint label name and value must be non-empty",
                ));
            }
            if id.is_empty() {
                return Err(OpError::invalid(
                    "lifecycle_id",
                    "Expected lifecycle id must be non-empty",
                ));
            }
            Ok(())
        }
    }
}

/// Refuses unless the record carries the label and the lifecycle id. Labels
/// and the id never change after create, and every write moves
/// `updated_at`, so the conditional write on the read record's version
/// keeps this condition until the write lands.
pub(super) fn check_owner(
    record: &Record,
    owner_label: Option<&(String, String)>,
    lifecycle_id: Option<&str>,
) -> Result<(), OpError> {
    let (Some((key, value)), Some(id)) = (owner_label, lifecycle_id) else {
        return Ok(());
    };
    let name = &record.endpoint_name;
    let repr = crate::pyrepr::repr_text;
    match record.labels.get(key) {
        Some(Value::Str(actual)) if actual.eq_str(value) => {}
        found => {
            let found = found.map_or_else(
                || format!("has no label {}", repr(key)),
                |v| format!("has labels.{key} = {}", v.repr()),
            );
            return Err(OpError::condition_failed(
                "owner_label",
                format!(
                    "Endpoint '{name}' was not deleted: owner_label requires labels.{key} = {}, but the endpoint {found}",
                    repr(value)
                ),
            ));
        }
    }
    if record.lifecycle_id.as_deref() != Some(id) {
        let found = record.lifecycle_id.as_deref().map_or_else(
            || "has no lifecycle_id".to_owned(),
            |actual| format!("has lifecycle_id {}", repr(actual)),
        );
        return Err(OpError::condition_failed(
            "lifecycle_id",
            format!(
                "Endpoint '{name}' was not deleted: lifecycle_id requires {}, but the endpoint {found}",
                repr(id)
            ),
        ));
    }
    Ok(())
}

/// Marks the record deleted. The deletion token and regions are written
/// once (`if_not_exists`): a second delete keeps them and changes nothing.
/// A record without a cleanup history (older GCO) gets neither: its
/// monitors migrate it and initialize the deletion themselves.
pub(super) fn delete(next: &mut Record, tokens: &mut impl TokenSource) {
    next.desired_state = DesiredState::Deleted;
    let Some(cleanup) = &next.cleanup_regions else {
        return;
    };
    if next.deletion_regions.is_none() {
        next.deletion_regions = Some(cleanup.clone());
    }
    if next.deletion_generation.is_none() {
        next.deletion_generation = Some(tokens.token());
    }
}
