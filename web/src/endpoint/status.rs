//! Each region's status as GCO's monitors write it (`region_status`): the
//! state, ready/desired replicas, per role for split modes, the shared
//! store's readiness, a canary, the error text, and how long ago the
//! monitor last synced. Regions the endpoint no longer targets keep their
//! last entry (GCO never removes one) and are marked so.

use gco_spec::Record;
use gco_spec::record::DesiredState;
use gco_spec::routing::proxy_route;
use gco_spec::status::{RegionState, RegionStatus, RoleReplicas};
use leptos::prelude::*;

use crate::region_state::{StateLabel, class, is_stale_as_read};
use crate::time::{STALE_AFTER_S, Time, age};

/// The mark of a region whose monitor has not written for three passes.
pub fn stale_badge() -> impl IntoView {
    view! {
        <span class="badge stale" title=format!("No write from the region's monitor for over {STALE_AFTER_S} s (three passes): it may be down, and this status out of date.")>
            "stale"
        </span>
    }
}

fn ratio(ready: Option<i64>, desired: Option<i64>) -> String {
    let n = |v: Option<i64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!("{}/{}", n(ready), n(desired))
}

/// Why GCO's inference proxy will not reach the endpoint in `region`
/// where a reader would expect it to (the region runs, or the endpoint's
/// namespace is one the proxy never routes): its answer, and the reason.
fn unreachable(record: &Record, region: &str, state: Option<&RegionState>) -> Option<String> {
    let refusal = proxy_route(record, region).err()?;
    if refusal.is_not_ready() {
        if state != Some(&RegionState::Running) {
            return None;
        }
        let mooncake = record.spec.get("mooncake").is_some_and(|m| !m.is_null());
        let why = if mooncake && record.desired_state == DesiredState::Deploying {
            " (as read: GCO's monitor promotes only classic endpoints to running, so a Mooncake endpoint stays deploying)"
        } else {
            ""
        };
        return Some(format!(
            "GCO's inference proxy answers {} {}: it routes only while the endpoint's desired state and this region's state are both running, and the endpoint is {}{why}.",
            refusal.status, refusal.detail, record.desired_state
        ));
    }
    (refusal.status == 503).then(|| {
        format!(
            "GCO's inference proxy answers {} {}: it routes only the {} namespace.",
            refusal.status,
            refusal.detail,
            gco_spec::limits::DEFAULT_NAMESPACE
        )
    })
}

fn role(r: &Option<RoleReplicas>) -> String {
    r.as_ref()
        .map_or_else(|| "—".to_owned(), |r| ratio(r.ready, r.desired))
}

#[component]
pub fn RegionStatuses(record: Record) -> impl IntoView {
    let unreadable = super::ctx().watcher.get_value().map(|w| w.unreadable);
    let unreadable = move || unreadable.and_then(|u| u.get());
    let mut rows: Vec<(String, bool, Option<Option<RegionStatus>>)> = record
        .target_regions
        .iter()
        .map(|r| (r.clone(), true, None))
        .collect();
    for (region, status) in record.region_statuses() {
        match rows.iter_mut().find(|(r, ..)| *r == region) {
            Some(row) => row.2 = Some(status),
            None => rows.push((region, false, Some(status))),
        }
    }
    let split = record.topology_label().is_some();
    // Every column after the region's.
    let rest = if split { "6" } else { "4" };
    // Every column after the region's and the state's.
    let after_state = if split { "5" } else { "3" };
    view! {
        <h2>"Regions"</h2>
        {if rows.is_empty() {
            view! { <p class="muted">"No target regions."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap"><table class="status">
                    <thead><tr>
                        <th>"Region"</th><th>"State"</th><th>"Ready"</th>
                        {split.then(|| view! { <th>"Prefill"</th><th>"Decode"</th> })}
                        <th>"Store"</th><th>"Last sync"</th>
                    </tr></thead>
                    <tbody>{rows.into_iter().map(|(region, targeted, status)| {
                        let removed = (!targeted).then(|| view! { <span class="badge">"removed"</span> });
                        match status {
                            None => view! {
                                <tr data-region=region.clone() class="region-state pending">
                                    <td>{region.clone()}" "{removed}</td>
                                    <td><StateLabel state=RegionState::Pending/></td>
                                    <td colspan=after_state class="muted">"waiting for the region's monitor to sync"</td>
                                </tr>
                            }.into_any(),
                            Some(None) => view! {
                                <tr data-region=region.clone()>
                                    <td>{region.clone()}" "{removed}</td>
                                    <td colspan=rest class="error">"the monitor's entry is not one this console reads"</td>
                                </tr>
                            }.into_any(),
                            Some(Some(s)) => {
                                let proxy = unreachable(&record, &region, s.state.as_ref());
                                let state_class = s.state.as_ref().map_or_else(|| "state".to_owned(), class);
                                let state = s.state.as_ref().map_or_else(|| "—".to_owned(), |st| st.as_str().to_owned());
                                let store = s.store.as_ref().map(|st| match st.ready {
                                    Some(true) => "ready".to_owned(),
                                    Some(false) => "not ready".to_owned(),
                                    None => "?".to_owned(),
                                }).unwrap_or_else(|| "—".to_owned());
                                let sync = s.last_sync.clone();
                                let error = s.error.clone();
                                // What the monitor wrote that this console does not
                                // read (a `message`, say), shown as written.
                                let extra: Vec<(String, String)> = s.extra.str_entries().map(|(k, v)| (
                                    k.to_string_lossy(),
                                    v.as_str().map_or_else(|| v.to_json(), str::to_owned),
                                )).collect();
                                let problem = matches!(state.as_str(), "failed" | "error" | "degraded");
                                let canary = s.canary.as_ref().map(|c| format!(
                                    "canary {} · {}% · {} · {}",
                                    c.state.as_ref().map_or("?", |st| st.as_str()),
                                    c.weight.map_or_else(|| "?".to_owned(), |w| w.to_string()),
                                    c.image.clone().unwrap_or_default(),
                                    ratio(c.replicas_ready, c.replicas_desired),
                                ));
                                view! {
                                    <tr data-region=region.clone() class=format!("region-{state_class}")>
                                        <td>{region.clone()}" "{removed}</td>
                                        <td>{match s.state.clone() {
                                            Some(st) => view! { <StateLabel state=st/> }.into_any(),
                                            None => view! { <span class="state">"—"</span> }.into_any(),
                                        }}</td>
                                        <td>{ratio(s.replicas_ready, s.replicas_desired)}</td>
                                        {split.then(|| view! {
                                            <td>{role(&s.roles.as_ref().and_then(|r| r.prefill))}</td>
                                            <td>{role(&s.roles.as_ref().and_then(|r| r.decode))}</td>
                                        })}
                                        <td>{store}</td>
                                        <td>{sync.map(|t| {
                                            let (a, b) = (t.clone(), t.clone());
                                            view! {
                                                <span>{move || age(&a).unwrap_or_default()}" · "<Time iso=t/></span>
                                                {move || is_stale_as_read(&b, unreadable().as_ref()).then(stale_badge)}
                                            }
                                        })}</td>
                                    </tr>
                                    {(error.is_some() || canary.is_some() || !extra.is_empty() || proxy.is_some()).then(|| view! {
                                        <tr class="region-detail"><td></td><td colspan=rest>
                                            {proxy.map(|p| view! { <p class="proxy-answer warning" role="note">{p}</p> })}
                                            {error.map(|e| view! { <p class="error">{e}</p> })}
                                            {extra.into_iter().map(|(k, v)| {
                                                let key = k.clone();
                                                view! { <p class="extra" class:error=problem data-key=key><span class="muted">{k}": "</span>{v}</p> }
                                            }).collect_view()}
                                            {canary.map(|c| view! { <p>{c}</p> })}
                                        </td></tr>
                                    })}
                                }.into_any()
                            }
                        }
                    }).collect_view()}</tbody>
                </table></div>
            }.into_any()
        }}
    }
}
