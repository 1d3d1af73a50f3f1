//! The endpoint's history (`GET /api/endpoints/{name}/history`, newest
//! first, a page at a time): who changed it, when, with what, each change's
//! diff (the review's own table), and "Revert to this", which goes through
//! the review like every change. It reads the history of an endpoint that
//! is gone too, and an admin can deploy such an endpoint again from it.

use gco_api::{HistoryEntry, HistoryPage, Role, operation};
use gco_spec::json::Value;
use gco_spec::ops::record_of_content;
use gco_spec::{DesiredState, Record};
use leptos::prelude::*;

use super::review::{Act, DiffTable, diff_lines};
use super::{Load, content, ctx};
use crate::api;
use crate::paths;
use crate::team::Guard;
use crate::time::{Time, local};

/// The form name a refused revert is shown at.
const FORM: &str = "history";

/// A history page's answer, or what is wrong with it.
pub fn page_of(body: &Value) -> Result<HistoryPage, String> {
    let Some(Value::List(items)) = paths::get(body, &["items"]) else {
        return Err("the server sent an unexpected answer".into());
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let items = items
        .iter()
        .map(|e| {
            let at = |k: &str| paths::get(e, &[k]);
            let content = |k: &str| at(k).filter(|v| !matches!(v, Value::Null)).cloned();
            Some(HistoryEntry {
                id: text(at("id"))?,
                at: text(at("at")).unwrap_or_default(),
                since: text(at("since")),
                who: text(at("who")),
                operation: text(at("operation")).unwrap_or_default(),
                request_id: text(at("request_id")),
                before: content("before"),
                after: content("after"),
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("a history entry without an id")?;
    Ok(HistoryPage {
        items,
        next: text(paths::get(body, &["next"])),
    })
}

/// The record an entry left, when a revert could bring it back (never a
/// deleted one: a revert does not delete).
fn revertible(entry: &HistoryEntry) -> Option<Record> {
    record_of_content(entry.after.as_ref()?)
        .ok()
        .filter(|r| r.desired_state != DesiredState::Deleted)
}

/// What the entry says happened, in words.
pub fn what(entry: &HistoryEntry) -> &'static str {
    match entry.operation.as_str() {
        operation::DEPLOY => "Deployed",
        operation::REVERT => "Reverted",
        operation::EXTERNAL => "Changed outside the console",
        "delete" => "Deleted",
        _ => "Changed",
    }
}

/// The URL of the page after `after` (the first without).
fn url(name: &str, after: Option<&str>) -> String {
    let path = gco_api::route::fill(
        gco_api::route::HISTORY,
        &[(gco_api::route::NAME_PARAMETER, name)],
    );
    match after {
        Some(cursor) => format!(
            "{path}?{}={}",
            gco_api::route::AFTER_PARAMETER,
            api::segment(cursor)
        ),
        None => path,
    }
}

#[component]
pub fn History() -> impl IntoView {
    let ctx = ctx();
    let name = ctx.name.get_value();
    let entries = RwSignal::new(Vec::<HistoryEntry>::new());
    let next = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let fetch = Action::new_local(move |after: &Option<String>| {
        let url = url(&name, after.as_deref());
        let more = after.is_some();
        async move { (more, api::get(&url).await) }
    });
    Effect::new(move |_| {
        let Some((more, reply)) = fetch.value().get() else {
            return;
        };
        match reply.and_then(|r| {
            if r.ok() {
                page_of(&r.body)
            } else {
                Err(r.summary())
            }
        }) {
            Ok(page) => {
                error.set(None);
                next.set(page.next);
                if more {
                    entries.update(|e| e.extend(page.items));
                } else {
                    entries.set(page.items);
                }
            }
            Err(e) => error.set(Some(e)),
        }
    });
    // The record's content as it stands (None while there is none): the
    // first page is read again whenever it changes, here or elsewhere.
    let current = Memo::new(move |_| {
        ctx.load.with(|l| match l {
            Load::Ready(l) => Some(Some(content(&l.record))),
            Load::Missing => Some(None),
            _ => None,
        })
    });
    Effect::new(move |_| {
        if current.with(Option::is_some) {
            fetch.dispatch(None);
        }
    });
    let gone = move || current.with(|c| matches!(c, Some(None)));
    let unrecorded = crate::settings::Settings::get().unrecorded;
    let session = crate::team::Session::get();
    view! {
        <section class="history" aria-labelledby="history-title">
            <h2 id="history-title">"History"</h2>
            <Show when=move || unrecorded.get()>
                <p class="muted">"This console records no history: only changes made before it ran without one show here."</p>
            </Show>
            {move || error.get().map(|e| view! {
                <p class="banner error" role="alert">{format!("Could not read the history: {e}")}</p>
            })}
            {move || ctx.refused.with(|r| r.as_ref().filter(|(f, _)| *f == FORM).map(|(_, d)| view! {
                <p class="banner error" role="alert">{d.message.clone()}</p>
            }))}
            // The reason once, above the list; each entry's button says it
            // to screen readers.
            {move || {
                let (needed, doing) = revert_needs(gone());
                session.refusal(doing, needed).map(|r| view! { <p class="guard-reason">{r}</p> })
            }}
            <Show when=move || fetch.value().with(Option::is_some) && entries.with(Vec::is_empty) && error.with(Option::is_none)>
                <p class="muted">"No changes recorded."</p>
            </Show>
            <ol class="entries">
                <For each=move || entries.get() key=|e| e.id.clone() let:entry>
                    <Entry entry=entry gone=Signal::derive(gone) current=current/>
                </For>
            </ol>
            <Show when=move || next.with(Option::is_some)>
                <button type="button" disabled=move || fetch.pending().get()
                    on:click=move |_| { fetch.dispatch(next.get_untracked()); }>"Show older changes"</button>
            </Show>
        </section>
    }
}

/// The role a revert needs, and what it is called: an endpoint that is
/// gone is deployed again, which only an admin may.
fn revert_needs(gone: bool) -> (Role, &'static str) {
    if gone {
        (Role::Admin, "Deploying a deleted endpoint again")
    } else {
        (Role::Operator, "Reverting")
    }
}

#[component]
fn Entry(
    entry: HistoryEntry,
    gone: Signal<bool>,
    current: Memo<Option<Option<Record>>>,
) -> impl IntoView {
    let ctx = ctx();
    let empty = || Value::Object(Default::default());
    let lines = diff_lines(
        entry.before.as_ref().unwrap_or(&empty()),
        entry.after.as_ref().unwrap_or(&empty()),
    );
    let count = lines.len();
    let target = revertible(&entry);
    let external = entry.operation == operation::EXTERNAL;
    let id = entry.id.clone();
    let when = local(&entry.at);
    // The entry that left the record as it is: nothing to revert to.
    let is_current = {
        let target = target.clone();
        move || {
            current.with(|c| match (c, &target) {
                (Some(Some(now)), Some(t)) => content(t) == *now,
                _ => false,
            })
        }
    };
    let revert = {
        let target = target.clone();
        let id = id.clone();
        move |_| {
            if let Some(after) = target.clone() {
                super::review::open(
                    &ctx,
                    FORM,
                    &format!("revert to the change of {when}"),
                    Act::Revert {
                        to: id.clone(),
                        after: Box::new(after),
                    },
                );
            }
        }
    };
    let reason_id = format!("revert-reason-{}", entry.id);
    view! {
        <li class="entry" data-operation=entry.operation.clone()>
            <div class="entry-head">
                <strong class="what">{what(&entry)}</strong>
                {(!external).then(|| view! { <code class="op">{entry.operation.clone()}</code> })}
                {if external {
                    view! {
                        <span class="when">"between "{entry.since.clone().map(|s| view! { <Time iso=s/> })}" and "<Time iso=entry.at.clone()/></span>
                    }.into_any()
                } else {
                    view! {
                        <span class="when"><Time iso=entry.at.clone()/></span>
                        <span class="by">"by "<strong>{entry.who.clone().unwrap_or_else(|| "unknown".into())}</strong></span>
                    }.into_any()
                }}
                {entry.request_id.clone().map(|r| view! { <span class="muted request-id" title="The request's id (x-request-id), as the server logged it">{r}</span> })}
                <span class="entry-action">
                    {move || match (&target, is_current()) {
                        (Some(_), true) => view! { <span class="badge">"Current"</span> }.into_any(),
                        (Some(_), false) => {
                            let (needed, doing) = revert_needs(gone.get());
                            let revert = revert.clone();
                            view! {
                                <Guard needed=needed doing=doing id=reason_id.clone() quiet=true>
                                    <button type="button" on:click=revert>
                                        {if gone.get() { "Deploy again as this…" } else { "Revert to this…" }}
                                    </button>
                                </Guard>
                            }.into_any()
                        }
                        (None, _) => ().into_any(),
                    }}
                </span>
            </div>
            <details class="entry-diff" open={count <= 12}>
                <summary>{match count { 1 => "1 field".to_owned(), n => format!("{n} fields") }}</summary>
                <DiffTable lines=lines labels=["Before", "After"]/>
            </details>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn a_page_reads_its_entries_and_cursor() {
        let body = parse(
            r#"{"items": [
                {"id": "b", "at": "2026-12-06T19:31:00.000000+00:00", "since": "2026-12-06T19:30:00.000000+00:00",
                 "who": null, "operation": "external", "before": {"endpoint_name": "x"}, "after": {"endpoint_name": "x", "spec": {}}},
                {"id": "a", "at": "2026-12-06T19:30:00.000000+00:00", "who": "ada", "operation": "deploy",
                 "request_id": "r-1", "before": null, "after": {"endpoint_name": "x"}}
            ], "next": "a"}"#,
        )
        .unwrap();
        let page = page_of(&body).unwrap();
        assert_eq!(page.next.as_deref(), Some("a"));
        assert_eq!(page.items.len(), 2);
        let external = &page.items[0];
        assert_eq!(
            (external.who.as_deref(), external.since.is_some()),
            (None, true)
        );
        assert_eq!(what(external), "Changed outside the console");
        let deploy = &page.items[1];
        assert_eq!(deploy.before, None);
        assert_eq!(deploy.request_id.as_deref(), Some("r-1"));
        assert_eq!(what(deploy), "Deployed");
        let last = page_of(&parse(r#"{"items": [], "next": null}"#).unwrap()).unwrap();
        assert_eq!(last.next, None);
        assert!(page_of(&parse(r#"{"error": "x"}"#).unwrap()).is_err());
    }

    #[test]
    fn a_revert_needs_an_operator_and_a_redeploy_an_admin() {
        assert_eq!(revert_needs(false).0, Role::Operator);
        assert_eq!(revert_needs(true).0, Role::Admin);
    }

    #[test]
    fn a_delete_is_never_reverted_to() {
        let entry = |state: &str| HistoryEntry {
            id: "1".into(),
            at: String::new(),
            since: None,
            who: Some("ada".into()),
            operation: "x".into(),
            request_id: None,
            before: None,
            after: Some(
                parse(&format!(
                    r#"{{"endpoint_name": "x", "desired_state": "{state}"}}"#
                ))
                .unwrap(),
            ),
        };
        assert!(revertible(&entry("deleted")).is_none());
        assert_eq!(
            revertible(&entry("stopped")).unwrap().desired_state,
            DesiredState::Stopped
        );
    }
}
