//! set_topology (GCO_FACTS_NEWEST section 2.3): the XpYd topology of a
//! split-mode endpoint, its counts checked before anything is read.

use crate::json::{Object, Value};
use crate::limits::{MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN};
use crate::mooncake::{Mode, Role};
use crate::record::Record;
use crate::spec::spec_mode;

use super::{OpError, mooncake_of, set_block};

/// The reference checks topology counts first (prefill, then decode), so a
/// bad count never needs the record.
pub(super) fn check_arguments(prefill: &Value, decode: &Value) -> Result<(), OpError> {
    for (role, count) in [(Role::Prefill, prefill), (Role::Decode, decode)] {
        check_topology_count(role, count)?;
    }
    Ok(())
}

pub(super) fn set_topology(
    next: &mut Record,
    prefill: &Value,
    decode: &Value,
) -> Result<(), OpError> {
    // GCO writes a topology into any spec; a plain or store-mode
    // endpoint would get a block its monitor refuses, so only split
    // modes take one here.
    if !spec_mode(&next.spec).is_some_and(Mode::is_split) {
        return Err(OpError::conflict(
            "mooncake.mode",
            format!(
                "Endpoint '{}' is not a split-mode endpoint; set-topology applies to 'disaggregated' and 'both' modes.",
                next.endpoint_name
            ),
        ));
    }
    let mut block = mooncake_of(&next.spec);
    let mut topology = Object::new();
    topology.insert("prefill", prefill.clone());
    topology.insert("decode", decode.clone());
    block.insert("topology", topology);
    set_block(next, block)
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
