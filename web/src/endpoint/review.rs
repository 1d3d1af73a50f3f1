//! The review of a change before it is sent: what the core's operation
//! makes of the record (field by field, sizes in human units beside their
//! bytes), what GCO's monitors then do (the objects a delete removes per
//! region; what an image update leaves running), the `gco inference`
//! commands, and Apply with the version it was computed from.

use gco_spec::diff::diff;
use gco_spec::json::Value;
use gco_spec::limits::MOONCAKE_STORE_BYTE_SIZE_FIELDS;
use gco_spec::plan::{Action as PlanAction, plan};
use gco_spec::spec::spec_mode;
use gco_spec::{Change, DesiredState, Record, apply, change_commands, describe_byte_size};
use leptos::prelude::*;

use super::{EndpointCtx, Loaded, ctx};
use crate::api::{self, Reply};
use crate::paths;
use crate::preview::CliCommands;

/// A change under review.
#[derive(Clone, PartialEq)]
pub struct Pending {
    /// The form it came from (where a refusal is shown).
    pub form: &'static str,
    pub title: String,
    pub change: Change,
    /// Field, now, after.
    pub lines: Vec<(String, String, String)>,
    /// What GCO does with the change beyond the record.
    pub notes: Vec<String>,
    /// The version the review was computed from.
    pub etag: Option<String>,
    /// The server refused it: the endpoint changed since (412).
    pub stale: bool,
    /// The user asked to review it again on the current record, which the
    /// next read brings.
    pub reloading: bool,
}

/// Tokens the server draws; a review shows none.
const PREVIEW_TOKEN: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A stored value as the review shows it: byte sizes with their human
/// size beside them.
fn shown(path: &str, v: &Option<Value>) -> String {
    let Some(v) = v else { return "—".to_owned() };
    let text = v.to_json();
    let is_size = MOONCAKE_STORE_BYTE_SIZE_FIELDS
        .iter()
        .any(|f| path.ends_with(&format!("store.{f}")));
    match (is_size, v.as_str().and_then(describe_byte_size)) {
        (true, Some(human)) => format!("{text} ({human})"),
        _ => text,
    }
}

/// A line of the review's table: the field, its value now and after.
type DiffLine = (String, String, String);

/// The record after `change`, the lines that differ, and what GCO's
/// monitors do about it; or the core's refusal.
fn compute(
    record: &Record,
    change: &Change,
) -> Result<(Vec<DiffLine>, Vec<String>), gco_spec::OpError> {
    let next = apply(record, change, &record.updated_at, &mut || {
        PREVIEW_TOKEN.to_owned()
    })?;
    let hidden = |path: &str| {
        path == "updated_at"
            || path.starts_with("region_generations")
            || path.starts_with("deletion_generation")
    };
    let lines = diff(&record.to_value(), &next.to_value())
        .into_iter()
        .filter(|d| !hidden(&d.path))
        .map(|d| {
            let (old, new) = (shown(&d.path, &d.old), shown(&d.path, &d.new));
            (d.path, old, new)
        })
        .collect();
    Ok((lines, notes(record, &next, change)))
}

/// What a change sets off in GCO beyond the record.
fn notes(record: &Record, next: &Record, change: &Change) -> Vec<String> {
    let mut notes = Vec::new();
    if record.desired_state == DesiredState::Stopped
        && next.desired_state == DesiredState::Deploying
    {
        notes.push(
            "This endpoint is stopped: GCO writes a spec change with the state deploying, so this change starts it again.".to_owned(),
        );
    }
    match change {
        Change::UpdateImage { image, with_proxy } if spec_mode(&record.spec).is_some() => {
            let proxy = record
                .spec
                .get("mooncake")
                .and_then(|m| paths::get(m, &["proxy", "image"]))
                .map(|v| paths::display(Some(v)));
            let image = paths::display(Some(image));
            match proxy {
                Some(_) if with_proxy.is_true() => notes.push(format!(
                    "The PD proxy moves to {image} too (spec.mooncake.proxy.image): GCO's monitor patches the proxy's Deployment on its next pass. GCO's own update-image would leave it."
                )),
                Some(proxy) => notes.push(format!(
                    "The PD proxy keeps its own image, {proxy}: deploy stored it apart (spec.mooncake.proxy.image), and update-image changes only spec.image. Tick \"Also update the PD proxy image\" to move it too."
                )),
                None => {}
            }
            notes.push(
                "GCO's monitor only scales existing prefill and decode Deployments (as read from its code): running pods keep their image until their Deployments are recreated, e.g. by stopping and starting the endpoint or redeploying it.".to_owned(),
            );
        }
        Change::Delete { .. } => {
            let regions: Vec<String> = next
                .cleanup_regions
                .clone()
                .unwrap_or_else(|| next.target_regions.clone());
            for region in regions {
                let Ok(p) = plan(next, &region) else { continue };
                let removed: Vec<String> = p
                    .objects
                    .iter()
                    .filter(|o| o.action == PlanAction::Delete)
                    .map(|o| format!("{} {}", o.kind.as_str(), o.name))
                    .collect();
                let kept: Vec<String> = p
                    .objects
                    .iter()
                    .filter(|o| o.shared)
                    .map(|o| format!("{} {}", o.kind.as_str(), o.name))
                    .collect();
                let mut note = format!(
                    "In {region}, GCO's monitor removes: {}.",
                    removed.join(", ")
                );
                if !kept.is_empty() {
                    note.push_str(&format!(
                        " Shared with the namespace's other endpoints, it keeps: {}.",
                        kept.join(", ")
                    ));
                }
                notes.push(note);
            }
            notes.push("The record stays, as deleted, until every region has reported its objects gone; then GCO purges it.".to_owned());
        }
        _ => {}
    }
    notes
}

pub fn open(ctx: &EndpointCtx, form: &'static str, title: &str, change: Change) {
    ctx.outcome.set(None);
    ctx.refused.set(None);
    let Some(Loaded { record, etag }) = ctx.loaded_untracked() else {
        return;
    };
    match compute(&record, &change) {
        Ok((lines, notes)) => {
            ctx.pending.set(Some(Pending {
                form,
                title: title.to_owned(),
                change,
                lines,
                notes,
                etag,
                stale: false,
                reloading: false,
            }));
            // The review opens at the top: focus moves into it (which
            // brings its heading into view and has it read out), and comes
            // back to what opened it when it closes.
            remember_opener();
            request_animation_frame(|| focus_id("review-title"));
        }
        Err(e) => {
            ctx.pending.set(None);
            ctx.refused.set(Some((form, e.diagnostic())));
        }
    }
}

/// Redoes a review the user asked to review again (after a refusal) on
/// the record just read, at its version. A review left alone keeps what
/// it showed and the version it was computed from, whatever arrives: what
/// was reviewed is what Apply sends, and a change made meanwhile is a 412.
pub fn refresh(ctx: &EndpointCtx, record: &Record, etag: Option<String>) {
    let Some(p) = ctx.pending.get_untracked().filter(|p| p.reloading) else {
        return;
    };
    match compute(record, &p.change) {
        Ok((lines, notes)) => ctx.pending.set(Some(Pending {
            lines,
            notes,
            etag,
            stale: false,
            reloading: false,
            ..p
        })),
        Err(e) => {
            ctx.pending.set(None);
            ctx.refused.set(Some((p.form, e.diagnostic())));
        }
    }
}

/// Why a change would do nothing the user asked for, so Apply is withheld:
/// the record stays as it is, or the image is the one it runs (GCO's
/// update-image would still write it, moving the endpoint to deploying).
fn no_op(record: &Record, p: &Pending) -> Option<String> {
    if let Change::UpdateImage { image, with_proxy } = &p.change {
        let image = image.as_str().map(str::trim);
        let proxy = record
            .spec
            .get("mooncake")
            .and_then(|m| paths::get(m, &["proxy", "image"]))
            .and_then(Value::as_str);
        if image.is_some()
            && image == record.spec.get("image").and_then(Value::as_str)
            && (!with_proxy.is_true() || proxy.is_none() || proxy == image)
        {
            return Some(format!(
                "Nothing to apply: the endpoint already runs {}.",
                image.unwrap_or_default()
            ));
        }
    }
    p.lines
        .is_empty()
        .then(|| "Nothing to apply: this change leaves the record as it is.".to_owned())
}

thread_local! {
    /// What had focus when the review opened (its form's button).
    static OPENER: std::cell::RefCell<Option<web_sys::HtmlElement>> = const { std::cell::RefCell::new(None) };
}

fn remember_opener() {
    use wasm_bindgen::JsCast;
    let el = document()
        .active_element()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    OPENER.with(|o| *o.borrow_mut() = el);
}

fn focus_id(id: &str) {
    use wasm_bindgen::JsCast;
    if let Some(el) = document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// After the review closes: back to what opened it while it is on the
/// page, else to `fallback` (the outcome, the page's heading).
fn return_focus(fallback: &'static str) {
    request_animation_frame(move || {
        let opener = OPENER.with(|o| o.borrow_mut().take());
        match opener.filter(|el| el.is_connected()) {
            Some(el) => {
                let _ = el.focus();
            }
            None => focus_id(fallback),
        }
    });
}

/// Closes the review without sending it.
fn close(ctx: &EndpointCtx) {
    ctx.pending.set(None);
    return_focus("endpoint-title");
}

#[component]
pub fn Review() -> impl IntoView {
    let ctx = ctx();
    let send = Action::new_local(move |(name, p): &(String, Pending)| {
        let request = gco_api::change_request(name, &p.change);
        let etag = p.etag.clone();
        async move { api::send(&request, etag.as_deref()).await }
    });
    // The answer to a send: the record as written, or why not.
    Effect::new(move |_| {
        let Some(result) = send.value().get() else {
            return;
        };
        let Some(p) = ctx.pending.get_untracked() else {
            return;
        };
        match result {
            Ok(r) if r.ok() => {
                ctx.pending.set(None);
                ctx.editing.set(false);
                ctx.outcome.set(Some((true, format!("{}: done.", p.title))));
                // The notice of a change elsewhere was about the review
                // just replaced by this outcome.
                ctx.changed_elsewhere.set(false);
                return_focus("outcome");
                if let Some(w) = ctx.watcher.get_value() {
                    w.seen(r.etag.clone());
                }
                ctx.take(r);
            }
            Ok(Reply { status: 412, .. }) => {
                ctx.pending.set(Some(Pending { stale: true, ..p }));
            }
            // No token: the prompt asks, and saving one sends it again.
            Ok(r) if r.status == 401 => {
                ctx.outcome.set(Some((
                    false,
                    format!(
                        "Not applied: {}. Saving the token sends the change again.",
                        r.summary()
                    ),
                )));
                let name = ctx.name.get_value();
                crate::auth::retry_after_token(move || {
                    let _ = ctx.outcome.try_set(None);
                    send.dispatch((name, p));
                });
            }
            Ok(r) => {
                let detail = r.diagnostics();
                match detail.first() {
                    Some(d) => ctx.refused.set(Some((p.form, d.clone()))),
                    None => ctx.outcome.set(Some((false, r.summary()))),
                }
                ctx.pending.set(None);
                // A conflict (a region change that lost to another change,
                // say) is about a record newer than the one on screen.
                if r.status == 409
                    && let Some(w) = ctx.watcher.get_value()
                {
                    w.refresh();
                }
            }
            Err(e) => ctx.outcome.set(Some((false, e))),
        }
    });
    // A fresh read redoes the review at the current version (`refresh`).
    let reapply = move |_| {
        ctx.pending.update(|p| {
            if let Some(p) = p {
                p.reloading = true;
            }
        });
        if let Some(w) = ctx.watcher.get_value() {
            w.refresh();
        }
    };
    view! {
        {move || ctx.pending.get().map(|p| {
            let commands = ctx.loaded_untracked().map(|l| change_commands(&l.record, &p.change));
            let nothing = ctx.loaded_untracked().and_then(|l| no_op(&l.record, &p));
            let idle = nothing.is_some();
            let name = ctx.name.get_value();
            let stale = p.stale && !p.reloading;
            let pending = p.clone();
            view! {
                <section class="review" role="dialog" aria-modal="false" aria-labelledby="review-title"
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Escape" { ev.prevent_default(); close(&ctx); }>
                    <h2 id="review-title" tabindex="-1">{format!("Review: {}", p.title)}</h2>
                    {if let Some(why) = nothing {
                        view! { <p class="muted no-op">{why}</p> }.into_any()
                    } else {
                        view! {
                            <table class="diff">
                                <thead><tr><th>"Field"</th><th>"Now"</th><th>"After"</th></tr></thead>
                                <tbody>{p.lines.iter().map(|(f, o, n)| view! {
                                    <tr><td><code>{f.clone()}</code></td><td class="old">{o.clone()}</td><td class="new">{n.clone()}</td></tr>
                                }).collect_view()}</tbody>
                            </table>
                        }.into_any()
                    }}
                    <ul class="notes">{p.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
                    {commands.map(|c| view! { <CliCommands commands=c/> })}
                    {stale.then(|| view! {
                        <p class="banner error" role="alert">"Someone changed this endpoint since you loaded it; nothing was applied."</p>
                    })}
                    <div class="row">
                        {if stale {
                            view! { <button type="button" class="primary" on:click=reapply>"Reload and re-apply"</button> }.into_any()
                        } else {
                            view! {
                                <button type="button" class="primary" disabled=move || idle || send.pending().get()
                                    on:click=move |_| { send.dispatch((name.clone(), pending.clone())); }>"Apply"</button>
                            }.into_any()
                        }}
                        <button type="button" on:click=move |_| close(&ctx) aria-keyshortcuts="Escape" title="Cancel (Escape)">"Cancel"</button>
                    </div>
                </section>
            }
        })}
    }
}
