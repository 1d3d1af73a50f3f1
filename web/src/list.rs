//! The endpoint list: name, state, regions with their status, mode and
//! XpYd, last update; filtered by state and region.

use gco_spec::Record;
use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::paths;
use crate::route::{Link, Page};

/// Records per request; the rest follow on "Show more".
const PAGE_SIZE: usize = 100;

enum Load {
    Loading,
    Failed(String),
    /// The records so far, and the server's cursor when more follow.
    Ready(Vec<Record>, Option<String>, Unreadable),
}

/// What the server says of stored items that are no record it reads (on
/// the first page): one line each, `name (path: message)`.
type Unreadable = Vec<String>;

/// One page of the list: the server's records, its `next` cursor, and the
/// items it could not read.
async fn fetch_page(url: String) -> Result<(Vec<Record>, Option<String>, Unreadable), String> {
    let reply = api::get(&url).await?;
    if !reply.ok() {
        return Err(reply.summary());
    }
    let Some(Value::List(items)) = paths::get(&reply.body, &["endpoints"]) else {
        return Err("the server sent an unexpected answer".into());
    };
    let records = items
        .iter()
        .filter_map(|i| Record::from_value(i).ok())
        .collect();
    let next = paths::get(&reply.body, &["next"])
        .and_then(Value::as_str)
        .map(str::to_owned);
    let unreadable = match paths::get(&reply.body, &["unreadable"]) {
        Some(Value::List(items)) => items
            .iter()
            .map(|u| {
                let field = |k| paths::display(paths::get(u, &[k]));
                let path = field("path");
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!("{path}: ")
                };
                format!("{} ({at}{})", field("endpoint_name"), field("message"))
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok((records, next, unreadable))
}

fn region_status(r: &Record, region: &str) -> String {
    let state = r
        .region_status
        .get(region)
        .map(|s| paths::display(paths::get(s, &["state"])))
        .unwrap_or_default();
    if state.is_empty() {
        "pending".into()
    } else {
        state
    }
}

fn mode(r: &Record) -> String {
    r.spec
        .get("mooncake")
        .map(|m| paths::display(paths::get(m, &["mode"])))
        .unwrap_or_else(|| "plain".into())
}

#[component]
pub fn ListPage() -> impl IntoView {
    let state_filter = RwSignal::new(String::new());
    let region_filter = RwSignal::new(String::new());
    let load = RwSignal::new(Load::Loading);
    let more_pending = RwSignal::new(false);
    let more_error = RwSignal::new(None::<String>);
    // The query of the list on screen: its next pages keep its filters,
    // whatever has been typed in the filters since.
    let shown_query = RwSignal::new(String::new());
    let filter_query = move || {
        let mut query = vec![format!("limit={PAGE_SIZE}")];
        let s = state_filter.get_untracked();
        if !s.is_empty() {
            query.push(format!("desired_state={}", api::segment(&s)));
        }
        let r = region_filter.get_untracked();
        if !r.trim().is_empty() {
            query.push(format!("region={}", api::segment(r.trim())));
        }
        query.join("&")
    };
    let refresh = move || {
        load.set(Load::Loading);
        more_error.set(None);
        let query = filter_query();
        let url = format!("/api/endpoints?{query}");
        shown_query.set(query);
        spawn_local(async move {
            let next = match fetch_page(url).await {
                Ok((records, next, unreadable)) => Load::Ready(records, next, unreadable),
                Err(e) => Load::Failed(e),
            };
            // The page may have been left meanwhile.
            let _ = load.try_set(next);
        });
    };
    let show_more = move || {
        let Some(after) = load.with_untracked(|l| match l {
            Load::Ready(_, next, _) => next.clone(),
            _ => None,
        }) else {
            return;
        };
        more_pending.set(true);
        more_error.set(None);
        let url = format!(
            "/api/endpoints?{}&after={}",
            shown_query.get_untracked(),
            api::segment(&after)
        );
        spawn_local(async move {
            let page = fetch_page(url).await;
            let _ = more_pending.try_set(false);
            let (more, then, _) = match page {
                Ok(page) => page,
                Err(e) => {
                    let _ = more_error.try_set(Some(e));
                    return;
                }
            };
            let _ = load.try_update(|l| {
                // Only onto the list it continues: a refresh meanwhile wins.
                if let Load::Ready(records, next, _) = l
                    && next.as_deref() == Some(after.as_str())
                {
                    records.extend(more);
                    *next = then;
                }
            });
        });
    };
    refresh();
    view! {
        <div class="list">
            <header class="page-head">
                <h1>"Endpoints"</h1>
                <div class="toolbar">
                    <Link to=Page::New><span class="button primary">"New endpoint"</span></Link>
                </div>
            </header>
            <form class="filters" on:submit=move |ev| { ev.prevent_default(); refresh(); }>
                <div class="field">
                    <label for="filter-state">"State"</label>
                    <select id="filter-state" prop:value=move || state_filter.get()
                        on:change=move |ev| { state_filter.set(event_target_value(&ev)); refresh(); }>
                        <option value="">"any"</option>
                        <option value="deploying">"deploying"</option>
                        <option value="running">"running"</option>
                        <option value="stopped">"stopped"</option>
                        <option value="deleted">"deleted"</option>
                    </select>
                </div>
                <div class="field">
                    <label for="filter-region">"Region"</label>
                    <input id="filter-region" type="text" placeholder="e.g. us-east-1" prop:value=move || region_filter.get()
                        on:input=move |ev| region_filter.set(event_target_value(&ev))/>
                </div>
                <button type="submit">"Refresh"</button>
            </form>
            {move || load.with(|load| match load {
                Load::Ready(_, _, unreadable) if !unreadable.is_empty() => Some(view! {
                    <div class="banner error" role="alert">
                        <p>{match unreadable.len() {
                            1 => "1 stored endpoint could not be read and is not listed:".to_owned(),
                            n => format!("{n} stored endpoints could not be read and are not listed:"),
                        }}</p>
                        <ul class="unreadable">{unreadable.iter().map(|u| view! { <li>{u.clone()}</li> }).collect_view()}</ul>
                    </div>
                }),
                _ => None,
            })}
            {move || load.with(|load| match load {
                Load::Loading => view! { <p class="muted" role="status">"Loading endpoints…"</p> }.into_any(),
                Load::Failed(e) => view! { <p class="banner error" role="alert">{format!("Could not load endpoints: {e}")}</p> }.into_any(),
                Load::Ready(records, _, _) if records.is_empty() => view! { <p class="muted">"No endpoints match."</p> }.into_any(),
                Load::Ready(records, next, _) => view! {
                    <div class="table-wrap"><table>
                        <thead><tr><th>"Name"</th><th>"State"</th><th>"Regions"</th><th>"Mode"</th><th>"Topology"</th><th>"Updated"</th></tr></thead>
                        <tbody>
                            {records.iter().map(|r| {
                                let regions = r.target_regions.iter().map(|g| view! {
                                    <span class="chip">{g.clone()}" · "{region_status(r, g)}</span>
                                }).collect_view();
                                let name = r.endpoint_name.clone();
                                view! {
                                    <tr>
                                        <td><Link to=Page::Endpoint(name.clone())>{name}</Link></td>
                                        <td><span class=format!("state {}", r.desired_state)>{r.desired_state.to_string()}</span></td>
                                        <td>{regions}</td>
                                        <td>{mode(r)}</td>
                                        <td>{r.topology_label().unwrap_or_default()}</td>
                                        <td><time>{r.updated_at.get(..19).unwrap_or(&r.updated_at).replace('T', " ")}</time></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table></div>
                    {next.is_some().then(|| view! {
                        <p class="list-more">
                            <button type="button" disabled=move || more_pending.get()
                                on:click=move |_| show_more()>
                                {move || if more_pending.get() { "Loading…" } else { "Show more" }}
                            </button>
                            {move || more_error.get().map(|e| view! {
                                <span class="banner error" role="alert">{format!("Could not load more endpoints: {e}")}</span>
                            })}
                        </p>
                    })}
                }.into_any(),
            })}
        </div>
    }
}
