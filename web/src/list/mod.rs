//! The endpoint list: name, state, each region with its status as GCO's
//! monitors write it, mode and XpYd, last update. Search by name, filters
//! (state, region) and the sort live in the URL's query, so a reload or a
//! shared address shows the same list; the list keeps itself current.

mod query;

use gco_api::Role;
use gco_spec::status::RegionState;
use gco_spec::{DesiredState, Frameworks, Record};
use leptos::prelude::*;

use crate::api::{self, Reply};
use crate::editor::DEPLOYING;
use crate::live::{ConnectionNotice, Load, Watcher};
use crate::paths;
use crate::region_state;
use crate::route::{self, Link, Page};
use crate::time::Time;
use gco_api::StoreUnreadable;
use query::{Query, Sort};

/// Records per request in the default view; the rest follow on "Show
/// more". A search or another sort needs every record, asked for at once.
const PAGE_SIZE: usize = 100;

/// One answer of the list: its records, the cursor when more follow, and
/// the stored items the server could not read (first page only).
#[derive(Clone, Default, PartialEq)]
struct Listing {
    records: Vec<Record>,
    next: Option<String>,
    unreadable: Vec<String>,
    /// Seconds since the table was last read whole, when reads of it fail
    /// and the server answers its last view.
    stale: Option<u64>,
}

fn listing_of(reply: &Reply) -> Result<Listing, String> {
    if !reply.ok() {
        return Err(reply.summary());
    }
    let Some(gco_spec::json::Value::List(items)) = paths::get(&reply.body, &["endpoints"]) else {
        return Err("the server sent an unexpected answer".into());
    };
    let unreadable = match paths::get(&reply.body, &["unreadable"]) {
        Some(gco_spec::json::Value::List(items)) => items
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
    Ok(Listing {
        records: items
            .iter()
            .filter_map(|i| Record::from_value(i).ok())
            .collect(),
        next: paths::get(&reply.body, &["next"])
            .and_then(gco_spec::json::Value::as_str)
            .map(str::to_owned),
        unreadable,
        stale: paths::get(&reply.body, &["stale", "age_seconds"])
            .and_then(gco_spec::json::Value::as_int)
            .and_then(|i| i.as_i64())
            .and_then(|i| u64::try_from(i).ok()),
    })
}

fn mode(r: &Record) -> String {
    r.spec
        .get("mooncake")
        .map(|m| paths::display(paths::get(m, &["mode"])))
        .unwrap_or_else(|| "plain".into())
}

fn state_rank(s: DesiredState) -> usize {
    DesiredState::ALL.iter().position(|d| *d == s).unwrap_or(0)
}

#[component]
pub fn ListPage() -> impl IntoView {
    let frameworks = crate::settings::Settings::get().frameworks;
    // Deploying is not offered to a role that may not.
    let session = crate::team::Session::get();
    let may_deploy = move || session.may(Role::Operator);
    let query = RwSignal::new(Query::from_search(&route::search()));
    let load = RwSignal::new(Load::<Listing>::Loading);
    // Records shown in the default view: the first page, then each "Show more".
    let shown = RwSignal::new(PAGE_SIZE);

    // The URL follows the query (replaced, so Back leaves the list).
    Effect::new(move |_| route::replace_url(&query.with(Query::to_url)));
    let watcher = Watcher::new(
        move || {
            query.with_untracked(|q| {
                if q.needs_all() {
                    q.api_query(None).path()
                } else {
                    q.api_query(Some(shown.get_untracked())).path()
                }
            })
        },
        move |reply| {
            let next = match reply.and_then(|r| listing_of(&r)) {
                Ok(listing) => Load::Ready(listing),
                // A failed refresh keeps the list on screen.
                Err(e) if load.with_untracked(|l| l.ready().is_none()) => Load::Failed(e),
                Err(_) => return,
            };
            load.set(next);
        },
    );
    // A new query asks at once.
    Effect::new(move |first: Option<()>| {
        query.track();
        if first.is_some() {
            shown.set(PAGE_SIZE);
            watcher.poll();
        }
    });

    view! {
        <div class="list">
            <header class="page-head">
                <h1>"Endpoints"</h1>
                <div class="toolbar">
                    <Show when=move || may_deploy()>
                        <Link to=Page::New><span class="button primary">"New endpoint"</span></Link>
                    </Show>
                </div>
            </header>
            <ConnectionNotice watcher=watcher/>
            <Filters query=query/>
            <Notices load=load/>
            {move || match load.with(|l| match l {
                Load::Loading | Load::Missing => Err(None),
                Load::Failed(e) => Err(Some(e.clone())),
                Load::Ready(l) => Ok(l.records.is_empty()),
            }) {
                Err(None) => view! { <p class="muted" role="status">"Loading endpoints…"</p> }.into_any(),
                Err(Some(e)) => view! { <p class="banner error" role="alert">{format!("Could not load endpoints: {e}")}</p> }.into_any(),
                Ok(true) if !query.with(Query::filtered) => view! {
                    <div class="empty">
                        <p><strong>"No endpoints yet."</strong></p>
                        {move || match session.refusal(DEPLOYING, Role::Operator) {
                            None => view! {
                                <p>"Create one with "<Link to=Page::New>"New endpoint"</Link>", or deploy from GCO's CLI ("
                                    <code>"gco inference deploy NAME -i IMAGE"</code>"): it shows here within seconds."</p>
                            }.into_any(),
                            Some(reason) => view! {
                                <p>{reason}" Endpoints your team deploys (here or with GCO's CLI) show here within seconds."</p>
                            }.into_any(),
                        }}
                    </div>
                }.into_any(),
                Ok(_) => {
                    let rows = load.with(|l| l.ready().map(|l| rows(l, &query.get())).unwrap_or_default());
                    if rows.is_empty() {
                        view! { <p class="muted">"No endpoint matches this search and these filters. "
                            <button type="button" class="link-button" on:click=move |_| query.update(|q| *q = Query::default())>"Clear them"</button></p> }.into_any()
                    } else {
                        table(rows, frameworks.get(), watcher.unreadable).into_any()
                    }
                }
            }}
            <ShowMore load=load query=query shown=shown/>
        </div>
    }
}

/// The records a query shows of a listing, in its order. Endpoint names
/// are DNS labels (ASCII), so the search folds ASCII case only, which
/// keeps Unicode's case tables out of the console.
fn rows(listing: &Listing, query: &Query) -> Vec<Record> {
    let needle = query.search.trim().to_ascii_lowercase();
    let mut records: Vec<Record> = listing
        .records
        .iter()
        .filter(|r| needle.is_empty() || r.endpoint_name.to_ascii_lowercase().contains(&needle))
        .cloned()
        .collect();
    // One comparator for both orders: each sort call is its own copy of
    // the sort's code in the wasm. Names are unique, so no two records
    // compare equal and the unstable sort (the smaller code) is exact.
    let by_state = match query.sort {
        Sort::Created => return records,
        Sort::Name => false,
        Sort::State => true,
    };
    records.sort_unstable_by(|a, b| {
        let rank = |r: &Record| {
            if by_state {
                state_rank(r.desired_state)
            } else {
                0
            }
        };
        (rank(a), &a.endpoint_name).cmp(&(rank(b), &b.endpoint_name))
    });
    records
}

/// Search, the state and region filters, the sort.
#[component]
fn Filters(query: RwSignal<Query>) -> impl IntoView {
    let set = move |f: fn(&mut Query, String)| {
        move |ev: leptos::ev::Event| query.update(|q| f(q, event_target_value(&ev)))
    };
    view! {
        <form class="filters" role="search" on:submit=|ev| ev.prevent_default()>
            <div class="field">
                <label for="filter-search">"Search endpoints"</label>
                <input id="filter-search" type="search" placeholder="name contains…" autocomplete="off"
                    prop:value=move || query.with(|q| q.search.clone()) on:input=set(|q, v| q.search = v)/>
            </div>
            <div class="field">
                <label for="filter-state">"State"</label>
                <select id="filter-state" prop:value=move || query.with(|q| q.state.clone()) on:change=set(|q, v| q.state = v)>
                    <option value="">"any"</option>
                    {DesiredState::ALL.iter().map(|s| view! { <option value=s.as_str()>{s.as_str()}</option> }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="filter-region">"Region"</label>
                <input id="filter-region" type="text" placeholder="e.g. us-east-1" autocomplete="off"
                    prop:value=move || query.with(|q| q.region.clone()) on:change=set(|q, v| q.region = v)/>
            </div>
            <div class="field">
                <label for="sort">"Sort by"</label>
                <select id="sort" prop:value=move || query.with(|q| q.sort.key()) on:change=set(|q, v| q.sort = Sort::of_key(&v))>
                    {Sort::ALL.iter().map(|(_, k, label)| view! { <option value=*k>{*label}</option> }).collect_view()}
                </select>
            </div>
            <Show when=move || query.with(Query::filtered)>
                <button type="button" on:click=move |_| query.update(|q| *q = Query { sort: q.sort, ..Query::default() })>"Clear filters"</button>
            </Show>
        </form>
    }
}

/// What the server says beside the records: its view is old (the table
/// cannot be read), or some stored items are no records it can read.
#[component]
fn Notices(load: RwSignal<Load<Listing>>) -> impl IntoView {
    let stale = move || load.with(|l| l.ready().and_then(|l| l.stale));
    let unreadable =
        move || load.with(|l| l.ready().map(|l| l.unreadable.clone()).unwrap_or_default());
    view! {
        {move || stale().map(|age| view! {
            <p class="banner warning-banner" role="status">
                {format!("This list may be out of date: the endpoints table could not be read for {age} s. The console keeps retrying.")}
            </p>
        })}
        {move || {
            let unreadable = unreadable();
            (!unreadable.is_empty()).then(|| view! {
                <div class="banner error" role="alert">
                    <p>{match unreadable.len() {
                        1 => "1 stored endpoint could not be read and is not listed:".to_owned(),
                        n => format!("{n} stored endpoints could not be read and are not listed:"),
                    }}</p>
                    <ul class="unreadable">{unreadable.into_iter().map(|u| view! { <li>{u}</li> }).collect_view()}</ul>
                </div>
            })
        }}
    }
}

/// The records, a row each (`frameworks`: the ones the team's GCO serves;
/// `unreadable`: the server cannot read the table, see [`region_chips`]).
fn table(
    records: Vec<Record>,
    frameworks: Frameworks,
    unreadable: RwSignal<Option<StoreUnreadable>>,
) -> impl IntoView {
    view! {
        <div class="table-wrap"><table>
            <thead><tr><th>"Name"</th><th>"State"</th><th>"Regions"</th><th>"Mode"</th><th>"Topology"</th><th>"Created"</th><th>"Updated"</th></tr></thead>
            <tbody>{records.into_iter().map(|r| row(r, frameworks, unreadable)).collect_view()}</tbody>
        </table></div>
    }
}

fn row(
    r: Record,
    frameworks: Frameworks,
    unreadable: RwSignal<Option<StoreUnreadable>>,
) -> impl IntoView {
    let unserved = crate::endpoint::unserved_framework(&r, &frameworks).map(|f| view! {
        " "<span class="badge problem unserved"
            title="GCO does not serve this framework: the endpoint never starts; open it to deploy it again">
            {format!("{f}: not served")}
        </span>
    });
    let name = r.endpoint_name.clone();
    let to = Page::Endpoint(name.clone());
    view! {
        <tr data-name=r.endpoint_name.clone()>
            <td><Link to=to>{name}</Link>{unserved}</td>
            <td><span class=format!("state {}", r.desired_state)>{r.desired_state.to_string()}</span></td>
            <td>{region_chips(&r, unreadable)}</td>
            <td>{mode(&r)}</td>
            <td>{r.topology_label().unwrap_or_default()}</td>
            <td><Time iso=r.created_at.clone()/></td>
            <td><Time iso=r.updated_at.clone()/></td>
        </tr>
    }
}

/// Each target region with its state as its monitor last wrote it, marked
/// when that write is stale: as of the table's last read while the server
/// cannot read it (`unreadable`).
fn region_chips(
    r: &Record,
    unreadable: RwSignal<Option<StoreUnreadable>>,
) -> impl IntoView + use<> {
    let statuses = r.region_statuses();
    r.target_regions
        .iter()
        .map(|g| {
            let status = statuses
                .iter()
                .find(|(region, _)| region == g)
                .and_then(|(_, s)| s.as_ref());
            // No entry yet: GCO's RegionStatus starts as pending.
            let state = status
                .and_then(|s| s.state.clone())
                .unwrap_or(RegionState::Pending);
            let sync = status.and_then(|s| s.last_sync.clone());
            let stale = Signal::derive(move || {
                sync.as_deref().is_some_and(|s| {
                    region_state::is_stale_as_read(s, unreadable.get().as_ref())
                })
            });
            // The monitor's error, whatever the state beside it ("creating"
            // with an error is stuck, not on its way).
            let error = status.and_then(|s| s.error.clone()).filter(|e| !e.trim().is_empty());
            let class = format!("chip region-chip {}", region_state::class(&state));
            let meaning = region_state::meaning(&state).unwrap_or_default();
            let title = match &error {
                Some(e) => format!("{meaning}. The monitor's error: {e}"),
                None => meaning.to_owned(),
            };
            let word = state.as_str().to_owned();
            let data_state = word.clone();
            let marked = error.is_some().then_some(" · error");
            view! { <span class=class class:stale=stale class:region-error=error.is_some() data-region=g.clone() data-state=data_state title=title>{g.clone()}" · "{word}{marked}{move || stale.get().then_some(" · stale")}</span> }
        })
        .collect_view()
}

/// "Show more": the page after the last one shown, added to the list it
/// continues. The server pages only its own order, unsearched.
#[component]
fn ShowMore(
    load: RwSignal<Load<Listing>>,
    query: RwSignal<Query>,
    shown: RwSignal<usize>,
) -> impl IntoView {
    let more = Action::new_local(move |after: &String| {
        let after = after.clone();
        let url = query.with_untracked(|q| {
            gco_api::ListQuery {
                after: Some(after.clone()),
                ..q.api_query(Some(PAGE_SIZE))
            }
            .path()
        });
        async move {
            let reply = api::get(&url).await?;
            let more = listing_of(&reply)?;
            let _ = load.try_update(|l| {
                // Only onto the list it continues.
                if let Load::Ready(l) = l
                    && l.next.as_deref() == Some(after.as_str())
                {
                    l.records.extend(more.records);
                    l.next = more.next;
                }
            });
            let _ = shown.try_update(|n| *n += PAGE_SIZE);
            Ok::<_, String>(reply)
        }
    });
    let pending = more.pending();
    // Why the last "Show more" failed, until the next one.
    let error = move || {
        if pending.get() {
            return None;
        }
        more.value().with(|v| v.as_ref()?.as_ref().err().cloned())
    };
    let next = move || load.with(|l| l.ready().and_then(|l| l.next.clone()));
    let offered = move || next().is_some() && !query.with(Query::needs_all);
    view! {
        <Show when=offered>
            <p class="list-more">
                <button type="button" disabled=move || pending.get() on:click=move |_| {
                    if let Some(after) = next() {
                        more.dispatch(after);
                    }
                }>
                    {move || if pending.get() { "Loading…" } else { "Show more" }}
                </button>
                {move || error().map(|e| view! {
                    <span class="banner error" role="alert">{format!("Could not load more endpoints: {e}")}</span>
                })}
            </p>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::{parse, to_value};

    use super::*;

    /// The list reads the answer by key path (a typed read costs the
    /// console 3.5 KB): what the backend writes, `gco_api::Listing`, must
    /// read back whole.
    #[test]
    fn the_list_reads_the_answer_the_api_writes() {
        let record = parse(
            r#"{"endpoint_name": "a", "desired_state": "running", "target_regions": ["us-east-1"],
                "namespace": "gco-inference", "spec": {"image": "x"}, "created_at": "t", "updated_at": "t",
                "region_status": {}, "ingress_path": "/inference/a", "labels": {}}"#,
        )
        .unwrap();
        let answer = gco_api::Listing {
            endpoints: vec![record],
            unreadable: vec![gco_api::Unreadable {
                endpoint_name: "b".into(),
                path: "spec".into(),
                message: "not a mapping".into(),
            }],
            next: Some(Some("cursor".into())),
            stale: Some(gco_api::Stale { age_seconds: 7 }),
        };
        let reply = Reply {
            status: 200,
            etag: None,
            body: to_value(&answer).unwrap(),
            unreadable: None,
        };
        let listing = listing_of(&reply).unwrap();
        assert_eq!(listing.records.len(), 1);
        assert_eq!(listing.records[0].endpoint_name, "a");
        assert_eq!(listing.next.as_deref(), Some("cursor"));
        assert_eq!(listing.unreadable, ["b (spec: not a mapping)"]);
        assert_eq!(listing.stale, Some(7));
    }

    #[test]
    fn rows_sort_by_name_or_by_state_then_name() {
        let record = |name: &str, state: &str| {
            let text = format!(
                r#"{{"endpoint_name": "{name}", "desired_state": "{state}", "target_regions": ["us-east-1"],
                    "namespace": "gco-inference", "spec": {{"image": "x"}}, "created_at": "t", "updated_at": "t"}}"#
            );
            Record::from_value(&parse(&text).unwrap()).unwrap()
        };
        let listing = Listing {
            records: vec![
                record("c", "running"),
                record("a", "stopped"),
                record("b", "running"),
                record("d", "deploying"),
            ],
            next: None,
            unreadable: vec![],
            stale: None,
        };
        let names = |sort| {
            let query = Query {
                sort,
                ..Query::default()
            };
            rows(&listing, &query)
                .into_iter()
                .map(|r| r.endpoint_name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(Sort::Created), ["c", "a", "b", "d"]);
        assert_eq!(names(Sort::Name), ["a", "b", "c", "d"]);
        assert_eq!(names(Sort::State), ["d", "b", "c", "a"]);
    }
}
