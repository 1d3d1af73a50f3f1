//! One way to show a time: local `YYYY-MM-DD HH:MM:SS` with the browser's
//! zone as its offset (`UTC+01:00`), the same time in UTC on hover, and
//! ages (`12 s ago`) for the monitors' syncs. Every time the console shows
//! goes through [`local`] (most through [`Time`]), so none is without its
//! zone.

use gco_spec::time::parse_timestamp;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

/// Milliseconds since the epoch of a GCO timestamp.
pub fn millis(iso: &str) -> Option<f64> {
    parse_timestamp(iso).map(|micros| micros as f64 / 1000.0)
}

/// `iso` in the browser's time zone, with the zone's offset
/// (`2026-12-07 07:52:10 UTC+01:00`), or the text as stored when it is no
/// GCO timestamp (another writer's).
pub fn local(iso: &str) -> String {
    match millis(iso) {
        Some(ms) => local_millis(ms),
        None => iso.to_owned(),
    }
}

/// `iso` in UTC (`2026-12-07 06:52:10 UTC`), for the hover.
pub fn utc(iso: &str) -> String {
    match millis(iso) {
        Some(ms) => written(ms, true),
        None => iso.to_owned(),
    }
}

/// A time (ms since the epoch) in the browser's time zone, with its offset.
pub fn local_millis(ms: f64) -> String {
    written(ms, false)
}

fn written(ms: f64, in_utc: bool) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms));
    let (fields, zone) = if in_utc {
        let f = [
            d.get_utc_full_year(),
            d.get_utc_month() + 1,
            d.get_utc_date(),
            d.get_utc_hours(),
            d.get_utc_minutes(),
            d.get_utc_seconds(),
        ];
        (f, "UTC".to_owned())
    } else {
        let f = [
            d.get_full_year(),
            d.get_month() + 1,
            d.get_date(),
            d.get_hours(),
            d.get_minutes(),
            d.get_seconds(),
        ];
        (f, offset_label(-(d.get_timezone_offset() as i64)))
    };
    let [y, mo, day, h, mi, s] = fields;
    format!("{y:04}-{mo:02}-{day:02} {h:02}:{mi:02}:{s:02} {zone}")
}

/// A zone's offset east of UTC, in minutes, as the console writes it:
/// `UTC`, `UTC+01:00`, `UTC-05:30`.
fn offset_label(minutes: i64) -> String {
    if minutes == 0 {
        return "UTC".to_owned();
    }
    let sign = if minutes > 0 { '+' } else { '-' };
    let m = minutes.abs();
    format!("UTC{sign}{:02}:{:02}", m / 60, m % 60)
}

/// The browser's time zone by name (`Europe/Berlin`), as Intl knows it.
pub fn zone_name() -> String {
    let format = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new());
    js_sys::Reflect::get(&format.resolved_options(), &JsValue::from_str("timeZone"))
        .ok()
        .and_then(|z| z.as_string())
        .unwrap_or_default()
}

/// Milliseconds since the epoch of the start of local day `date`
/// (`YYYY-MM-DD`, as a date input gives it), plus `days`.
pub fn local_day_start(date: &str, days: u32) -> Option<f64> {
    let mut parts = date.splitn(3, '-').map(|p| p.parse::<u32>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    let day = js_sys::Date::new_with_year_month_day(y, m as i32 - 1, (d + days) as i32);
    let ms = day.get_time();
    (!ms.is_nan()).then_some(ms)
}

/// An instant as RFC 3339 in UTC, as the API takes it.
pub fn rfc3339(ms: f64) -> String {
    String::from(js_sys::Date::new(&JsValue::from_f64(ms)).to_iso_string())
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

#[cfg(test)]
mod tests {
    use super::offset_label;

    #[test]
    fn an_offset_is_written_from_utc() {
        assert_eq!(offset_label(0), "UTC");
        assert_eq!(offset_label(60), "UTC+01:00");
        assert_eq!(offset_label(-330), "UTC-05:30");
    }
}

/// A time as the console shows every time.
#[component]
pub fn Time(iso: String) -> impl IntoView {
    view! { <time datetime=iso.clone() title=utc(&iso)>{local(&iso)}</time> }
}
