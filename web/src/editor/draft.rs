//! The editor's unsent draft, kept in the tab's sessionStorage on every
//! change: leaving the page (even within the link's throttle), reloading
//! it or coming Back finds the draft as it was. Only "Start over" or a
//! deploy ends it.

use gco_spec::json::Value;

const STATE_KEY: &str = "gco-console-draft";
/// The share fragment the editor last put in the URL for this draft: an
/// older copy of the draft itself, which the draft outranks on Back.
const FRAGMENT_KEY: &str = "gco-console-draft-fragment";
/// Where a draft came from, said once when the editor opens it (a clone).
const ORIGIN_KEY: &str = "gco-console-draft-origin";

use crate::browser::session_storage as storage;

/// The draft, when this tab holds a non-empty one.
pub fn load() -> Option<Value> {
    let text = storage()?.get_item(STATE_KEY).ok()??;
    let value = gco_spec::share::state_of_json(&text).ok()?;
    (!is_empty(&value)).then_some(value)
}

pub fn save(state: &Value) {
    let Some(s) = storage() else { return };
    let _ = if is_empty(state) {
        s.remove_item(STATE_KEY)
    } else {
        s.set_item(STATE_KEY, &state.to_json())
    };
}

pub fn clear() {
    if let Some(s) = storage() {
        let _ = s.remove_item(STATE_KEY);
        let _ = s.remove_item(FRAGMENT_KEY);
        let _ = s.remove_item(ORIGIN_KEY);
    }
}

pub fn note_origin(text: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(ORIGIN_KEY, text);
        let _ = s.remove_item(FRAGMENT_KEY);
    }
}

/// The draft's origin, once.
pub fn take_origin() -> Option<String> {
    let s = storage()?;
    let text = s.get_item(ORIGIN_KEY).ok()??;
    let _ = s.remove_item(ORIGIN_KEY);
    Some(text)
}

pub fn note_fragment(fragment: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(FRAGMENT_KEY, fragment);
    }
}

/// Whether `fragment` is one the editor wrote for this tab's draft, rather
/// than a link opened on purpose.
pub fn is_own_fragment(fragment: &str) -> bool {
    storage()
        .and_then(|s| s.get_item(FRAGMENT_KEY).ok().flatten())
        .is_some_and(|own| own == fragment)
}

pub fn is_empty(state: &Value) -> bool {
    state.as_object().is_none_or(|o| o.is_empty())
}
