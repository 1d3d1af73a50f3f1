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
    let Some(ms) = millis(iso) else {
        return iso.to_owned();
    };
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

/// How long ago `iso` was, coarsely (`just now`, `40 s ago`, `3 min ago`,
/// `2 h ago`, `5 d ago`).
pub fn age(iso: &str) -> Option<String> {
    let seconds = ((js_sys::Date::now() - millis(iso)?) / 1000.0).max(0.0) as i64;
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
