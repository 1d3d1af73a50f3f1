//! stop / start (GCO_FACTS_NEWEST section 2.7): stop from any state but
//! deleted (a deleted endpoint refuses every change before this), start
//! only a stopped endpoint.

use crate::record::{DesiredState, Record};

use super::OpError;

pub(super) fn stop(next: &mut Record) {
    next.desired_state = DesiredState::Stopped;
}

pub(super) fn start(next: &mut Record) -> Result<(), OpError> {
    if next.desired_state != DesiredState::Stopped {
        return Err(OpError::conflict(
            "desired_state",
            format!(
                "Endpoint '{}' is in '{}' state; only stopped endpoints can be started.",
                next.endpoint_name, next.desired_state
            ),
        ));
    }
    next.desired_state = DesiredState::Running;
    Ok(())
}
