//! The endpoint's history (`GET /api/endpoints/{name}/history`, newest
//! first, a page at a time): who changed it, when, with what, each change's
//! diff (the review's own table, closed until opened), and "Revert to
//! this", which goes through the review like every change, keeping the
//! page where it is. Filters by who, operation and days read the whole
//! history (every page) and show what they admit; `?entry=<id>` (each
//! entry's "Link") opens that entry and brings it into view, reading older
//! pages until it is found. It reads the history of an endpoint that is
//! gone too, and an admin can deploy such an endpoint again from it.

use gco_api::{HistoryEntry, HistoryPage, Role, operation};
use gco_spec::json::Value;
use gco_spec::ops::record_of_content;
use gco_spec::{DesiredState, Record};
use leptos::prelude::*;

use crate::pages::Pages;

use super::review::{Act, DiffTable, diff_lines};
use super::{EndpointCtx, content, ctx};
use crate::live::Load;
use crate::paths;
use crate::route;
use crate::team::{Guard, Session};
use crate::time::{local, local_day_start, utc};

/// The form name a refused revert is shown at (its review is docked).
const FORM: &str = super::review::DOCKED_FORM;

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

/// What the tab's filters ask for; empty strings ask nothing. Days are
/// local (`YYYY-MM-DD`, as a date input gives them).
#[derive(Clone, Debug, Default, PartialEq)]
struct Filters {
    who: String,
    operation: String,
    from: String,
    to: String,
}

/// What [`Filters::who`] is for a change made outside the console.
const OUTSIDE: &str = "(outside the console)";

impl Filters {
    fn active(&self) -> bool {
        *self != Filters::default()
    }

    /// Whether `entry` is one the filters admit.
    fn admits(&self, entry: &HistoryEntry) -> bool {
        let who = entry.who.as_deref().unwrap_or(OUTSIDE);
        let at = crate::time::millis(&entry.at);
        let day = |d: &str, days| (!d.is_empty()).then(|| local_day_start(d, days)).flatten();
        (self.who.is_empty() || self.who == who)
            && (self.operation.is_empty() || self.operation == entry.operation)
            && day(&self.from, 0).is_none_or(|from| at.is_some_and(|at| at >= from))
            && day(&self.to, 1).is_none_or(|end| at.is_some_and(|at| at < end))
    }
}

/// The values a select offers: those of the entries read, sorted, once.
fn choices(entries: &[HistoryEntry], of: impl Fn(&HistoryEntry) -> String) -> Vec<String> {
    let mut values: Vec<String> = entries.iter().map(of).collect();
    // Equal strings are alike: the unstable sort gives the same list, with
    // less code than the stable one.
    values.sort_unstable();
    values.dedup();
    values
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
    let pages = Pages::<HistoryEntry>::new();
    let Pages {
        items: entries,
        next,
        error,
        read,
        busy,
    } = pages;
    let fetch = move |after: Option<String>| {
        let url = url(&ctx.name.get_value(), after.as_deref());
        pages.fetch(url, after, |body| page_of(body).map(|p| (p.items, p.next)));
    };
    let filters = RwSignal::new(Filters::default());
    // The entry the address names (`?entry=<id>`), opened and brought into
    // view once read.
    let linked = RwSignal::new(route::query_value(&route::search(), "entry"));
    let shown_linked = StoredValue::new(None::<String>);
    // Filters and a linked entry read older pages until they are done.
    Effect::new(move |_| {
        let wanted = linked.with(|l| {
            l.as_ref()
                .is_some_and(|id| entries.with(|e| !e.iter().any(|e| &e.id == id)))
        });
        if (wanted || filters.with(Filters::active))
            && !busy.get()
            && error.with(Option::is_none)
            && let Some(after) = next.get()
        {
            fetch(Some(after));
        }
    });
    Effect::new(move |_| {
        let Some(id) = linked.get() else { return };
        let found = entries.with(|e| e.iter().any(|e| e.id == id));
        if found && shown_linked.get_value().as_ref() != Some(&id) {
            shown_linked.set_value(Some(id.clone()));
            request_animation_frame(move || {
                crate::browser::bring_into_view(&entry_element_id(&id))
            });
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
    let link_to = Callback::new(move |id: String| {
        let path = window().location().pathname().unwrap_or_default();
        route::replace_url(&format!(
            "{path}?tab=history&entry={}",
            gco_api::route::encode_segment(&id)
        ));
        shown_linked.set_value(None);
        linked.set(Some(id));
    });
    let list = move || {
        let gone = gone();
        let now = current.get_untracked().flatten();
        let linked = linked.get();
        filters.with(|f| {
            entries.with(|e| {
                e.iter()
                    .filter(|e| f.admits(e))
                    .map(|e| {
                        let is_linked = linked.as_deref() == Some(e.id.as_str());
                        entry(ctx, e, gone, now.as_ref(), is_linked, link_to)
                    })
                    .collect_view()
            })
        })
    };
    let hidden_by_filters = move || {
        filters.with(|f| {
            let shown = entries.with(|e| e.iter().filter(|e| f.admits(e)).count());
            (f.active() && read.get()).then(|| {
                let total = entries.with(Vec::len);
                let more = if next.with(Option::is_some) {
                    ", reading older ones…"
                } else {
                    ""
                };
                format!("{shown} of {total} changes match{more}")
            })
        })
    };
    view! {
        <section class="history" aria-labelledby="history-title">
            <h2 id="history-title">"History"</h2>
            <HistoryFilters filters=filters entries=entries/>
            {move || hidden_by_filters().map(|t| view! { <p class="muted" role="status">{t}</p> })}
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

/// The filters: who, operation, and a range of local days.
#[component]
fn HistoryFilters(
    filters: RwSignal<Filters>,
    entries: RwSignal<Vec<HistoryEntry>>,
) -> impl IntoView {
    let set = move |f: fn(&mut Filters, String)| {
        move |ev: leptos::ev::Event| filters.update(|filters| f(filters, event_target_value(&ev)))
    };
    let whos = move || {
        entries.with(|e| choices(e, |e| e.who.clone().unwrap_or_else(|| OUTSIDE.to_owned())))
    };
    // Every operation an entry can name, whether read yet or not.
    let ops = || {
        operation::RECORDED
            .iter()
            .chain([&operation::EXTERNAL])
            .map(|op| op.to_string())
            .collect::<Vec<_>>()
    };
    let options = |values: Vec<String>| {
        values
            .into_iter()
            .map(|v| {
                let label = v.clone();
                view! { <option value=v>{label}</option> }
            })
            .collect_view()
    };
    view! {
        <form class="filters history-filters" role="search" aria-label="Filter the history" on:submit=|ev| ev.prevent_default()>
            <div class="field">
                <label for="history-who">"Who"</label>
                <select id="history-who" prop:value=move || filters.with(|f| f.who.clone()) on:change=set(|f, v| f.who = v)>
                    <option value="">"anyone"</option>
                    {move || options(whos())}
                </select>
            </div>
            <div class="field">
                <label for="history-operation">"Operation"</label>
                <select id="history-operation" prop:value=move || filters.with(|f| f.operation.clone()) on:change=set(|f, v| f.operation = v)>
                    <option value="">"any"</option>
                    {move || options(ops())}
                </select>
            </div>
            <div class="field">
                <label for="history-from">"From"</label>
                <input id="history-from" type="date" prop:value=move || filters.with(|f| f.from.clone()) on:change=set(|f, v| f.from = v)/>
            </div>
            <div class="field">
                <label for="history-to">"To"</label>
                <input id="history-to" type="date" prop:value=move || filters.with(|f| f.to.clone()) on:change=set(|f, v| f.to = v)/>
            </div>
            <button type="button" class="link-button" hidden=move || !filters.with(Filters::active)
                on:click=move |_| filters.set(Filters::default())>"Clear filters"</button>
        </form>
    }
}

/// The element id of an entry's item.
fn entry_element_id(id: &str) -> String {
    format!("entry-{id}")
}

/// One change: what, when, who, its diff (open when it is the linked
/// entry), a link to it, and the way back to it. `now`: the record's
/// content (None when the endpoint is gone).
fn entry(
    ctx: EndpointCtx,
    entry: &HistoryEntry,
    gone: bool,
    now: Option<&Record>,
    linked: bool,
    link_to: Callback<String>,
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
            format!("{} to {}", utc(since), utc(&entry.at)),
        ),
        _ => (local(&entry.at), utc(&entry.at)),
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
    let id = entry.id.clone();
    let href = format!("?tab=history&entry={}", gco_api::route::encode_segment(&id));
    view! {
        <li class="entry" class:linked=linked tabindex="-1" id=entry_element_id(&entry.id) data-operation=entry.operation.clone()>
            <p class="entry-head">
                <strong class="what">{what(entry)}</strong>
                {op.map(|op| view! { <code class="op">{op}</code> })}
                <time class="when" datetime=entry.at.clone() title=iso>{when}</time>
                <span class="by">{by}</span>
                <span class="muted request-id" title="The request's id (x-request-id), as the server logged it">{entry.request_id.clone()}</span>
                <a class="entry-link" href=href title="A link to this change" on:click=move |ev: leptos::ev::MouseEvent| {
                    ev.prevent_default();
                    link_to.run(id.clone());
                }>"Link"</a>
                <span class="entry-action">{action}</span>
            </p>
            <details class="entry-diff" open=linked>
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
