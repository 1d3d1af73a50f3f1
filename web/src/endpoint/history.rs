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

use leptos::task::spawn_local;

use super::review::{Act, DiffTable, diff_lines};
use super::{EndpointCtx, content, ctx};
use crate::api;
use crate::live::Load;
use crate::paths;
use crate::team::{Guard, Session};
use crate::time::local;

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
                client_request_id: text(at("client_request_id")),
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
    gco_api::HistoryQuery {
        limit: None,
        after: after.map(str::to_owned),
    }
    .path(name)
}

#[component]
pub fn History() -> impl IntoView {
    let ctx = ctx();
    let session = Session::get();
    let unrecorded = crate::settings::Settings::get().unrecorded;
    // Read by a task into signals, not an Action: the same, for less wasm.
    let entries = RwSignal::new(Vec::<HistoryEntry>::new());
    let next = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let read = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let fetch = move |after: Option<String>| {
        let url = url(&ctx.name.get_value(), after.as_deref());
        busy.set(true);
        spawn_local(async move {
            let page = api::get(&url).await.and_then(|r| {
                if r.ok() {
                    page_of(&r.body)
                } else {
                    Err(r.summary())
                }
            });
            let _ = busy.try_set(false);
            let _ = read.try_set(true);
            match page {
                // An older page only onto the list it continues.
                Ok(page) if after.is_none() || next.get_untracked() == after => {
                    let _ = error.try_set(None);
                    let _ = next.try_set(page.next);
                    let _ = entries.try_update(|e| {
                        if after.is_none() {
                            e.clear();
                        }
                        e.extend(page.items);
                    });
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    };
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
            fetch(None);
        }
    });
    let gone = move || current.with(|c| matches!(c, Some(None)));
    // What the section says above the list, each a line.
    let notes = move || {
        let (needed, doing) = revert_needs(gone());
        let mut notes = Vec::new();
        if unrecorded.get() {
            notes.push((
                "muted",
                "This console records no history now: only changes recorded before show here."
                    .to_owned(),
            ));
        }
        if let Some(e) = error.get() {
            notes.push(("banner error", format!("Could not read the history: {e}")));
        }
        if let Some(d) = ctx.refusal(FORM).map(|d| d.message) {
            notes.push(("banner error", d));
        }
        // The reason once, above the list; each entry's button says it
        // to screen readers.
        if let Some(r) = session.refusal(doing, needed) {
            notes.push(("guard-reason", r));
        }
        if read.get() && entries.with(Vec::is_empty) && error.with(Option::is_none) {
            notes.push(("muted", "No changes recorded.".to_owned()));
        }
        notes
    };
    let list = move || {
        let gone = gone();
        let now = current.get_untracked().flatten();
        entries.with(|e| {
            e.iter()
                .map(|e| entry(ctx, e, gone, now.as_ref()))
                .collect_view()
        })
    };
    view! {
        <section class="history" aria-labelledby="history-title">
            <h2 id="history-title">"History"</h2>
            {move || notes().into_iter().map(|(class, text)| view! { <p class=class>{text}</p> }).collect_view()}
            <ol class="entries">{list}</ol>
            <button type="button" hidden=move || next.with(Option::is_none) disabled=move || busy.get()
                on:click=move |_| fetch(next.get_untracked())>"Show older changes"</button>
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

/// One change: what, when, who, its diff, and the way back to it. `now`:
/// the record's content (None when the endpoint is gone).
fn entry(
    ctx: EndpointCtx,
    entry: &HistoryEntry,
    gone: bool,
    now: Option<&Record>,
) -> impl IntoView + use<> {
    let empty = Value::Object(Default::default());
    let lines = diff_lines(
        entry.before.as_ref().unwrap_or(&empty),
        entry.after.as_ref().unwrap_or(&empty),
    );
    let fields = match lines.len() {
        1 => "1 field".to_owned(),
        n => format!("{n} fields"),
    };
    let open = lines.len() <= 12;
    let external = entry.operation == operation::EXTERNAL;
    // An operation's own name (GCO's command) where the words do not say it.
    let op = (what(entry) == "Changed").then(|| entry.operation.clone());
    let by = match (&entry.who, external) {
        (_, true) => String::new(),
        (Some(who), _) => format!("by {who}"),
        (None, _) => "by someone unknown".to_owned(),
    };
    // A change outside the console is known to lie between two reads.
    let (when, iso) = match (&entry.since, external) {
        (Some(since), true) => (
            format!("between {} and {}", local(since), local(&entry.at)),
            format!("{since} to {}", entry.at),
        ),
        _ => (local(&entry.at), entry.at.clone()),
    };
    let target = revertible(entry);
    // The entry that left the record as it is has nothing to go back to.
    let action = match target {
        Some(t) if now.is_some_and(|now| content(&t) == *now) => {
            view! { <span class="badge">"Current"</span> }.into_any()
        }
        Some(after) => {
            let (needed, doing) = revert_needs(gone);
            let title = format!(
                "{} the change of {}",
                if gone { "deploy again as" } else { "revert to" },
                local(&entry.at)
            );
            let to = entry.id.clone();
            let after = Box::new(after);
            view! {
                <Guard needed=needed doing=doing id=format!("revert-reason-{}", entry.id) quiet=true>
                    <button type="button" on:click=move |_| super::review::open(&ctx, FORM, &title, Act::Revert { to: to.clone(), after: after.clone() })>
                        {if gone { "Deploy again as this…" } else { "Revert to this…" }}
                    </button>
                </Guard>
            }
            .into_any()
        }
        None => ().into_any(),
    };
    view! {
        <li class="entry" data-operation=entry.operation.clone()>
            <p class="entry-head">
                <strong class="what">{what(entry)}</strong>
                {op.map(|op| view! { <code class="op">{op}</code> })}
                <time class="when" datetime=entry.at.clone() title=iso>{when}</time>
                <span class="by">{by}</span>
                <span class="muted request-id" title="The request's id (x-request-id), as the server logged it">{entry.request_id.clone()}</span>
                <span class="entry-action">{action}</span>
            </p>
            <details class="entry-diff" open=open>
                <summary>{fields}</summary>
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
            client_request_id: None,
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
