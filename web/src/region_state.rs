//! A region's state as GCO names it (its `RegionSyncState`, and `failed`,
//! which its monitor writes too): the label is GCO's own word, each has its
//! own colour (`web/style.css`, `.state.<word>`) and a line saying what it
//! means, on the list and the endpoint page alike.

use gco_spec::status::RegionState;
use gco_spec::time::parse_timestamp;
use leptos::prelude::*;

/// What a state means, in the console's words; `None` for a word GCO does
/// not name (shown as written, uncoloured).
pub fn meaning(state: &RegionState) -> Option<&'static str> {
    Some(match state {
        RegionState::Pending => "pending: no monitor has synced this region yet",
        RegionState::Creating => {
            "creating: the region's monitor is creating the endpoint's objects"
        }
        RegionState::Running => "running: the ready replicas have reached the floor",
        RegionState::Updating => {
            "updating: a scale, an image change or an autoscaler handoff is rolling out"
        }
        RegionState::Stopping => {
            "stopping: the monitor is removing the autoscalers and scaling to zero"
        }
        RegionState::Stopped => "stopped: scaled to zero; the Services and ConfigMaps stay",
        RegionState::Deleting => "deleting: the monitor is removing the endpoint's objects",
        RegionState::Deleted => "deleted: two complete passes found nothing left",
        RegionState::Error => "error: the monitor's pass failed; its error says why",
        RegionState::Failed => "failed: the monitor refuses the spec here; its error says why",
        RegionState::Other(_) => return None,
    })
}

/// The CSS class of a state's label: `state <word>`; a word GCO does not
/// name is `state other`, with the word too when it is one a class can
/// hold (a monitor's `degraded` keeps its problem colour).
pub fn class(state: &RegionState) -> String {
    match state {
        RegionState::Other(text)
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') =>
        {
            format!("state other {text}")
        }
        RegionState::Other(_) => "state other".to_owned(),
        known => format!("state {}", known.as_str()),
    }
}

/// Whether a region's status is stale (no monitor write for three
/// passes): now, or, while the server cannot read the endpoints table,
/// as of when what the page shows was read. What the console cannot read
/// is not the monitors' fault: the page's notice says so instead.
pub fn is_stale_as_read(last_sync: &str, unreadable: Option<&gco_api::StoreUnreadable>) -> bool {
    let Some(u) = unreadable else {
        return crate::time::is_stale(last_sync);
    };
    let read = u.read.as_deref().map_or(u.since.as_str(), |r| r);
    match (parse_timestamp(last_sync), parse_timestamp(read)) {
        (Some(sync), Some(read)) => (read - sync) as f64 / 1e6 > crate::time::STALE_AFTER_S,
        _ => false,
    }
}

/// A state's label: GCO's word, its colour, and its meaning on hover.
#[component]
pub fn StateLabel(state: RegionState) -> impl IntoView {
    let title =
        meaning(&state).unwrap_or("a state this console does not know, as the monitor wrote it");
    view! {
        <span class=class(&state) data-state=state.as_str().to_owned() title=title>{state.as_str().to_owned()}</span>
    }
}
