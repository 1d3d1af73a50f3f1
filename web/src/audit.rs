//! The audit view (`/history`): every endpoint's changes, newest first
//! (`GET /api/history`), filtered by who, operation, endpoint, a search over
//! endpoint names and a range of days in the browser's time zone, all in
//! the address; each change links to its entry on its endpoint's History
//! tab; the filtered set exports as JSON Lines or CSV.

use gco_api::{AuditEntry, AuditQuery, ExportFormat, operation};
use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::pages::Pages;
use crate::paths;
use crate::route::{self, Router, query_value};
use crate::time::{Time, local_day_start, rfc3339, zone_name};

/// The filters as the address holds them; `from` and `to` are local days
/// (`YYYY-MM-DD`, as a date input gives them).
#[derive(Clone, Debug, Default, PartialEq)]
struct Filters {
    who: String,
    operation: String,
    endpoint: String,
    q: String,
    from: String,
    to: String,
}

/// Each filter's key in the address (the API's parameter).
const KEYS: [&str; 6] = ["who", "operation", "endpoint", "q", "from", "to"];

impl Filters {
    fn slot(&mut self, key: &str) -> Option<&mut String> {
        Some(match key {
            "who" => &mut self.who,
            "operation" => &mut self.operation,
            "endpoint" => &mut self.endpoint,
            "q" => &mut self.q,
            "from" => &mut self.from,
            "to" => &mut self.to,
            _ => return None,
        })
    }

    fn get(&self, key: &str) -> String {
        self.clone()
            .slot(key)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn from_search(search: &str) -> Filters {
        let mut filters = Filters::default();
        for key in KEYS {
            if let Some(slot) = filters.slot(key) {
                *slot = query_value(search, key).unwrap_or_default();
            }
        }
        filters
    }

    /// This page's address with the filters.
    fn to_url(&self) -> String {
        let parts: Vec<String> = KEYS
            .iter()
            .map(|key| (key, self.get(key)))
            .filter(|(_, v)| !v.trim().is_empty())
            .map(|(k, v)| format!("{k}={}", gco_api::route::encode_segment(v.trim())))
            .collect();
        if parts.is_empty() {
            "/history".to_owned()
        } else {
            format!("/history?{}", parts.join("&"))
        }
    }

    /// The API's query: the local days as the instants they begin and end
    /// at (a day that is no date goes as typed, for the server to name).
    fn query(&self, after: Option<String>) -> AuditQuery {
        let text = |v: &str| Some(v.trim().to_owned()).filter(|v| !v.is_empty());
        let day = |v: &str, end: bool| {
            let v = text(v)?;
            Some(match local_day_start(&v, u32::from(end)) {
                Some(ms) if end => rfc3339(ms - 1.0),
                Some(ms) => rfc3339(ms),
                None => v,
            })
        };
        AuditQuery {
            who: text(&self.who),
            operation: text(&self.operation),
            endpoint: text(&self.endpoint),
            q: text(&self.q),
            from: day(&self.from, false),
            to: day(&self.to, true),
            limit: None,
            after,
        }
    }
}

/// A page's changes and its `next`, or what is wrong with the answer.
fn page_of(body: &Value) -> Result<(Vec<AuditEntry>, Option<String>), String> {
    let Some(Value::List(items)) = paths::get(body, &["items"]) else {
        return Err("the server sent an unexpected answer".into());
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let items = items
        .iter()
        .map(|e| {
            let at = |k: &str| text(paths::get(e, &[k]));
            Some(AuditEntry {
                endpoint: at("endpoint")?,
                id: at("id")?,
                at: at("at").unwrap_or_default(),
                who: at("who"),
                operation: at("operation").unwrap_or_default(),
                request_id: at("request_id"),
                client_request_id: at("client_request_id"),
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("a change without its endpoint or id")?;
    Ok((items, text(paths::get(body, &["next"]))))
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let filters = RwSignal::new(Filters::from_search(&route::search()));
    // Read by a task into signals, not an Action: the same, for less wasm.
    let pages = Pages::<AuditEntry>::new();
    let Pages {
        items: entries,
        next,
        error,
        read,
        busy,
    } = pages;
    let fetch = move |after: Option<String>| {
        let url = filters.with_untracked(|f| f.query(after.clone()).path());
        pages.fetch(url, after, page_of);
    };
    // The address follows the filters, and the first page is read again.
    Effect::new(move |_| {
        let url = filters.with(Filters::to_url);
        route::replace_url(&url);
        fetch(None);
    });
    let exporting = RwSignal::new(None::<String>);
    let export = move |format: ExportFormat| {
        let url = filters
            .with_untracked(|f| f.query(None))
            .export_path(format);
        exporting.set(Some(format!("Exporting {}…", label(format))));
        spawn_local(async move {
            let outcome = match api::get_text(&url).await {
                Ok((200, text)) => save(&text, format).map(|()| None),
                Ok((_, text)) => Err(gco_spec::json::parse(&text)
                    .ok()
                    .map(|v| paths::display(paths::get(&v, &["error"])))
                    .unwrap_or(text)),
                Err(e) => Err(e),
            };
            let _ = exporting
                .try_set(outcome.unwrap_or_else(|e| Some(format!("Could not export: {e}"))));
        });
    };
    view! {
        <div class="audit">
            <header class="page-head">
                <h1>"History of every endpoint"</h1>
                <div class="toolbar">
                    <button type="button" id="export-jsonl" on:click=move |_| export(ExportFormat::JsonLines)>"Export JSON Lines"</button>
                    <button type="button" id="export-csv" on:click=move |_| export(ExportFormat::Csv)>"Export CSV"</button>
                </div>
            </header>
            {move || exporting.get().map(|t| view! { <p class="muted" role="status">{t}</p> })}
            <AuditFilters filters=filters/>
            {move || error.get().map(|e| view! { <p class="banner error" role="alert">{format!("Could not read the history: {e}")}</p> })}
            {move || (read.get() && error.with(Option::is_none) && entries.with(Vec::is_empty) && next.with(Option::is_none)).then(|| view! {
                <p class="muted">"No change matches these filters."</p>
            })}
            <div class="table-wrap"><table class="audit-table" hidden=move || entries.with(Vec::is_empty) || error.with(Option::is_some)>
                <thead><tr><th>"When"</th><th>"Endpoint"</th><th>"Change"</th><th>"Who"</th><th>"Request"</th></tr></thead>
                <tbody>{move || entries.with(|e| e.iter().map(row).collect_view())}</tbody>
            </table></div>
            <p class="list-more">
                <button type="button" hidden=move || next.with(Option::is_none) disabled=move || busy.get()
                    on:click=move |_| fetch(next.get_untracked())>"Show older changes"</button>
            </p>
        </div>
    }
}

fn label(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::JsonLines => "JSON Lines",
        ExportFormat::Csv => "CSV",
    }
}

/// Hands `text` to the browser as a download.
fn save(text: &str, format: ExportFormat) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let (mime, name) = match format {
        ExportFormat::JsonLines => ("application/x-ndjson", "gco-history.jsonl"),
        ExportFormat::Csv => ("text/csv", "gco-history.csv"),
    };
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser refused the file".to_owned())?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)
        .map_err(|_| "the browser refused the file".to_owned())?;
    let a = document()
        .create_element("a")
        .ok()
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
        .ok_or("the browser refused the file")?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// One change: when, which endpoint (its entry), what, who, the request.
fn row(e: &AuditEntry) -> impl IntoView + use<> {
    let router = Router::get();
    let href = e.console_path();
    let go = href.clone();
    view! {
        <tr data-endpoint=e.endpoint.clone() data-operation=e.operation.clone()>
            <td><Time iso=e.at.clone()/></td>
            <td><a href=href on:click=move |ev: leptos::ev::MouseEvent| {
                if !(ev.ctrl_key() || ev.meta_key() || ev.shift_key()) {
                    ev.prevent_default();
                    router.navigate_to(&go);
                }
            }>{e.endpoint.clone()}</a></td>
            <td><code class="op">{e.operation.clone()}</code></td>
            <td class="who">{e.who.clone().unwrap_or_default()}</td>
            <td class="muted request-id">{e.request_id.clone()}</td>
        </tr>
    }
}

/// The filters, each applied as it is changed.
#[component]
fn AuditFilters(filters: RwSignal<Filters>) -> impl IntoView {
    let value = move |key: &'static str| move || filters.with(|f| f.get(key));
    let set = move |key: &'static str| {
        move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            filters.update(|f| {
                if let Some(slot) = f.slot(key) {
                    *slot = v;
                }
            });
        }
    };
    let zone = zone_name();
    let text = move |key: &'static str, label: &'static str, hint: &'static str| {
        let id = format!("audit-{key}");
        view! {
            <div class="field">
                <label for=id.clone()>{label}</label>
                <input id=id type="search" placeholder=hint autocomplete="off"
                    prop:value=value(key) on:change=set(key)/>
            </div>
        }
    };
    let day = move |key: &'static str, label: &'static str| {
        let id = format!("audit-{key}");
        view! {
            <div class="field">
                <label for=id.clone()>{label}</label>
                <input id=id type="date" prop:value=value(key) on:change=set(key)/>
            </div>
        }
    };
    view! {
        <form class="filters" role="search" on:submit=|ev| ev.prevent_default()>
            {text("q", "Search endpoints", "name contains…")}
            {text("endpoint", "Endpoint", "exact name")}
            {text("who", "Who", "ada@example.com")}
            <div class="field">
                <label for="audit-operation">"Operation"</label>
                <select id="audit-operation" prop:value=value("operation") on:change=set("operation")>
                    <option value="">"any"</option>
                    {operation::RECORDED.map(|op| view! { <option value=op>{op}</option> }).collect_view()}
                </select>
            </div>
            {day("from", "From")}
            {day("to", "To")}
            <p class="muted zone">{format!("Days and times in your time zone ({zone}); UTC on hover.")}</p>
            <button type="button" class="link-button" on:click=move |_| filters.set(Filters::default())>"Clear filters"</button>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn filters_read_back_from_their_address() {
        let f = Filters {
            who: "ada@example.com".into(),
            operation: "scale".into(),
            q: "chat".into(),
            from: "2026-12-01".into(),
            ..Filters::default()
        };
        let url = f.to_url();
        assert_eq!(
            url,
            "/history?who=ada%40example.com&operation=scale&q=chat&from=2026-12-01"
        );
        assert_eq!(Filters::from_search(&url["/history".len()..]), f);
        assert_eq!(Filters::default().to_url(), "/history");
    }

    #[test]
    fn a_page_reads_its_changes_and_cursor() {
        let body = parse(
            r#"{"items": [{"endpoint": "chat", "id": "i", "at": "t", "who": "ada", "operation": "scale"}], "next": "n"}"#,
        )
        .unwrap();
        let (items, next) = page_of(&body).unwrap();
        assert_eq!(items[0].endpoint, "chat");
        assert_eq!(next.as_deref(), Some("n"));
        assert!(page_of(&parse(r#"{"items": [{"id": "i"}]}"#).unwrap()).is_err());
    }
}
