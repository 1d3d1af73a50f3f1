//! One way to show a time: local `YYYY-MM-DD HH:MM:SS`, the stored ISO text
//! on hover, and ages (`12 s ago`) for the monitors' syncs.

use gco_spec::time::parse_timestamp;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

/// Milliseconds since the epoch of a GCO timestamp.
fn millis(iso: &str) -> Option<f64> {
    parse_timestamp(iso).map(|micros| micros as f64 / 1000.0)
}

/// `iso` in the browser's time zone, or the text as stored when it is no
/// GCO timestamp (another writer's).
pub fn local(iso: &str) -> String {
    match millis(iso) {
        Some(ms) => local_millis(ms),
        None => iso.to_owned(),
    }
}

/// A time (ms since the epoch) in the browser's time zone.
pub fn local_millis(ms: f64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

/// The app's clock: the time now (ms since the epoch), ticking every
/// second, so ages and staleness follow time without new data.
#[derive(Clone, Copy)]
struct Clock(RwSignal<f64>);

/// Starts the clock (once, at the app's root).
pub fn provide_clock() {
    let now = RwSignal::new(js_sys::Date::now());
    let _ = set_interval_with_handle(
        move || now.set(js_sys::Date::now()),
        std::time::Duration::from_secs(1),
    );
    provide_context(Clock(now));
}

/// The time now, as the clock says (a reactive read under it).
pub fn now() -> f64 {
    use_context::<Clock>().map_or_else(js_sys::Date::now, |c| c.0.get())
}

/// After this long without a monitor's write a region's status is stale:
/// three passes of GCO's monitor (its default interval is 15 s,
/// GCO_FACTS_NEWEST section 4.2, as read).
pub const STALE_AFTER_S: f64 = 45.0;

/// Seconds since `iso` (reactive: it follows the clock).
fn seconds_since(iso: &str) -> Option<f64> {
    Some(((now() - millis(iso)?) / 1000.0).max(0.0))
}

/// Whether a monitor's `last_sync` is older than [`STALE_AFTER_S`].
pub fn is_stale(last_sync: &str) -> bool {
    seconds_since(last_sync).is_some_and(|s| s > STALE_AFTER_S)
}

/// How long ago `iso` was, coarsely (`just now`, `40 s ago`, `3 min ago`,
/// `2 h ago`, `5 d ago`); reactive, it follows the clock.
pub fn age(iso: &str) -> Option<String> {
    let seconds = seconds_since(iso)? as i64;
    Some(match seconds {
        0..=4 => "just now".to_owned(),
        5..=119 => format!("{seconds} s ago"),
        120..=7199 => format!("{} min ago", seconds / 60),
        7200..=172_799 => format!("{} h ago", seconds / 3600),
        _ => format!("{} d ago", seconds / 86_400),
    })
}

/// A time as the console shows every time.
#[component]
pub fn Time(iso: String) -> impl IntoView {
    view! { <time datetime=iso.clone() title=iso.clone()>{local(&iso)}</time> }
}
