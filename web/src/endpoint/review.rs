//! The review of a change before it is sent: what the core's operation
//! makes of the record (field by field, sizes in human units beside their
//! bytes), what GCO's monitors then do (the objects a delete removes per
//! region; what an image update leaves running), the `gco inference`
//! commands, and Apply with the version it was computed from.

use gco_spec::diff::diff;
use gco_spec::json::Value;
use gco_spec::limits::MOONCAKE_STORE_BYTE_SIZE_FIELDS;
use gco_spec::ops::{Reverted, revert};
use gco_spec::plan::{Action as PlanAction, plan};
use gco_spec::record::CREATED_BY;
use gco_spec::spec::spec_mode;
use gco_spec::{Change, DesiredState, Record, apply, change_commands, describe_byte_size};
use leptos::prelude::*;

use super::{EndpointCtx, ctx};
use crate::browser::{element, focus};
use crate::paths;
use crate::preview::CliCommands;

/// What a review sends.
#[derive(Clone, PartialEq)]
pub enum Act {
    /// One of the core's operations.
    Change(Change),
    /// The endpoint put back as a history entry left it: the entry's id,
    /// and its `after` as a record.
    Revert { to: String, after: Box<Record> },
}

impl Act {
    /// The request that does it to endpoint `name`.
    pub fn request(&self, name: &str) -> gco_api::ChangeRequest {
        match self {
            Act::Change(change) => gco_api::change_request(name, change),
            Act::Revert { to, .. } => {
                let mut body = gco_spec::json::Object::new();
                body.insert("to", to.as_str());
                gco_api::ChangeRequest {
                    method: gco_api::Method::Post,
                    path: gco_api::route::fill(
                        gco_api::route::REVERT,
                        &[(gco_api::route::NAME_PARAMETER, name)],
                    ),
                    body: Some(Value::Object(body)),
                }
            }
        }
    }
}

/// A change under review.
#[derive(Clone, PartialEq)]
pub struct Pending {
    /// The form it came from (where a refusal is shown).
    pub form: &'static str,
    pub title: String,
    pub act: Act,
    /// Field, now, after.
    pub lines: Vec<DiffLine>,
    /// What GCO does with the change beyond the record.
    pub notes: Vec<String>,
    /// The version the review was computed from.
    pub etag: Option<String>,
    /// The endpoint changed since the review was computed: Apply would not
    /// (or did not) apply it.
    pub stale: Option<Outdated>,
    /// The user asked to review it again on the current record, which the
    /// next read brings.
    pub reloading: bool,
}

/// How a review came to be outdated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outdated {
    /// The endpoint changed while the review was open, before Apply: Apply
    /// would be refused.
    ChangedWhileOpen,
    /// Apply was refused (412): the endpoint changed since the review was
    /// computed, and nothing was applied.
    Refused,
}

impl Outdated {
    /// The review's notice.
    fn notice(self) -> &'static str {
        match self {
            Outdated::ChangedWhileOpen => {
                "This endpoint changed while this review was open: Apply would be refused. \"Now\" shows what is stored now; review the change again on it."
            }
            Outdated::Refused => {
                "Someone changed this endpoint since you loaded it; nothing was applied."
            }
        }
    }
}

/// Tokens the server draws; a review shows none.
const PREVIEW_TOKEN: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A stored value as the review shows it: byte sizes with their human
/// size beside them.
fn shown(path: &str, v: Option<&Value>) -> String {
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

/// A line of a diff: the field, its value before and after.
pub type DiffLine = (String, String, String);

/// The fields that differ between two record contents, as the review and
/// the history show them: ids and tokens the server draws, the time of the
/// write, and what GCO's monitors write, left out.
pub fn diff_lines(old: &Value, new: &Value) -> Vec<DiffLine> {
    let hidden = |path: &str| {
        path == "updated_at"
            || path == "lifecycle_id"
            || path.starts_with("region_status")
            || path.starts_with("region_generations")
            || path.starts_with("deletion_generation")
    };
    let mut lines = Vec::new();
    for d in diff(old, new) {
        leaves(d.path, d.old.as_ref(), d.new.as_ref(), &mut lines);
    }
    lines.retain(|(path, ..)| !hidden(path));
    lines
}

/// A field that appears or goes as a whole object (a deploy's `spec`),
/// field by field, as every other change shows.
fn leaves(path: String, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<DiffLine>) {
    match (old, new) {
        (None, Some(Value::Object(o))) | (Some(Value::Object(o)), None) if !o.is_empty() => {
            for (k, v) in o.str_entries() {
                let path = format!("{path}.{}", k.to_string_lossy());
                let (a, b) = if old.is_some() {
                    (Some(v), None)
                } else {
                    (None, Some(v))
                };
                leaves(path, a, b, out);
            }
        }
        _ => {
            let (a, b) = (shown(&path, old), shown(&path, new));
            out.push((path, a, b));
        }
    }
}

/// `lines` with their first value column read from `current` (a record's
/// content) at each line's path: `—` where it holds none.
fn now_column(lines: &[DiffLine], current: &Value) -> Vec<DiffLine> {
    lines
        .iter()
        .map(|(path, _, after)| {
            let now = shown(path, value_at(current, path));
            (path.clone(), now, after.clone())
        })
        .collect()
}

/// The value at a diff's dotted `path` in `v`; a key may hold dots itself
/// (a label's `app.kubernetes.io/name`), so each key is matched whole.
fn value_at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    v.as_object()?.str_entries().find_map(|(key, child)| {
        let rest = path.strip_prefix(key.as_str()?)?;
        match rest.strip_prefix('.') {
            _ if rest.is_empty() => Some(child),
            Some(rest) => value_at(child, rest),
            None => None,
        }
    })
}

/// The fields of a diff, before and after (`labels`: the columns' names).
#[component]
pub fn DiffTable(lines: Vec<DiffLine>, labels: [&'static str; 2]) -> impl IntoView {
    view! {
        <table class="diff">
            <thead><tr><th>"Field"</th><th>{labels[0]}</th><th>{labels[1]}</th></tr></thead>
            <tbody>{lines.into_iter().map(|(f, o, n)| view! {
                <tr><td><code>{f}</code></td><td class="old">{o}</td><td class="new">{n}</td></tr>
            }).collect_view()}</tbody>
        </table>
    }
}

/// The record after `act` (`None` for a record that is gone), the lines
/// that differ, and what GCO's monitors do about it; or the core's refusal.
fn compute(
    ctx: &EndpointCtx,
    record: Option<&Record>,
    act: &Act,
) -> Result<(Vec<DiffLine>, Vec<String>), gco_spec::OpError> {
    let token = &mut || PREVIEW_TOKEN.to_owned();
    let now = record.map_or_else(
        || String::from(js_sys::Date::new_0().to_iso_string()),
        |r| r.updated_at.clone(),
    );
    let next = match (act, record) {
        (Act::Change(change), Some(record)) => apply(record, change, &now, token)?,
        (Act::Revert { after, .. }, _) => match revert(record, after, &now, token)? {
            Reverted::Updated(next) => next,
            // Deployed again: the server writes it as created by who
            // applies it, not by the old record's creator.
            Reverted::Created(mut next) => {
                if let Some(me) = ctx.session.name() {
                    next.extra.insert(CREATED_BY, me);
                }
                next
            }
        },
        (Act::Change(_), None) => return Ok((Vec::new(), Vec::new())),
    };
    let old = record.map_or_else(|| Value::Object(Default::default()), Record::to_value);
    let lines = diff_lines(&old, &next.to_value());
    let mut notes = notes(record, &next, act);
    if let Act::Change(Change::AddRegion { region }) = act
        && let Some(note) =
            unmonitored_region(&paths::display(Some(region)), &ctx.regions.get_untracked())
    {
        notes.insert(0, note);
    }
    Ok((lines, notes))
}

/// Why a region added to an endpoint may never run it: no monitor of GCO
/// is known there (it is not among the console's `--regions`, where GCO is
/// deployed), so nothing renders the endpoint and it stays pending. `None`
/// for a known region, or while the console's regions are not known.
pub fn unmonitored_region(region: &str, known: &[String]) -> Option<String> {
    let region = region.trim();
    if region.is_empty() || known.is_empty() || known.iter().any(|k| k == region) {
        return None;
    }
    Some(format!(
        "No GCO monitor is known in {region}: this console's regions (--regions) are {}. Unless GCO is deployed there too, nothing renders the endpoint in {region} and it stays pending.",
        known.join(", ")
    ))
}

/// What a change sets off in GCO beyond the record.
fn notes(record: Option<&Record>, next: &Record, act: &Act) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(record) = record else {
        notes.push("The endpoint is gone (GCO purged it after its deletion): this deploys it again as that change left it, as a new lifecycle.".to_owned());
        return notes;
    };
    if record.desired_state == DesiredState::Stopped
        && next.desired_state == DesiredState::Deploying
    {
        notes.push(
            "This endpoint is stopped: GCO writes a spec change with the state deploying, so this change starts it again.".to_owned(),
        );
    }
    let change = match act {
        Act::Change(change) => change,
        Act::Revert { .. } => {
            notes.push("A revert puts back the spec, the target regions and the desired state as that change left them; the namespace, labels and lifecycle stay. A region that joins or leaves is added or removed as GCO does.".to_owned());
            return notes;
        }
    };
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

/// The form whose reviews are docked to the window: the history's, far
/// down a long page.
pub const DOCKED_FORM: &str = "history";

/// Opens the review of `act` on the record on screen (a revert also on
/// none: the endpoint is gone), or says at `form` why the core refuses it.
pub fn open(ctx: &EndpointCtx, form: &'static str, title: &str, act: Act) {
    ctx.apply.clear();
    ctx.refused.set(None);
    let loaded = ctx.loaded_untracked();
    if loaded.is_none() && matches!(act, Act::Change(_)) {
        return;
    }
    let etag = loaded.as_ref().and_then(|l| l.etag.clone());
    match compute(ctx, loaded.as_ref().map(|l| &l.record), &act) {
        Ok((lines, notes)) => {
            ctx.pending.set(Some(Pending {
                form,
                title: title.to_owned(),
                act,
                lines,
                notes,
                etag,
                stale: None,
                reloading: false,
            }));
            // The review opens at the top: focus moves into it (which
            // brings its heading into view and has it read out), and comes
            // back to what opened it when it closes. One opened from the
            // history is docked to the window instead, so the page stays
            // where the user was among the entries.
            remember_opener();
            if form == DOCKED_FORM {
                request_animation_frame(|| crate::browser::focus_in_place("#review-title"));
            } else {
                request_animation_frame(|| focus("#review-title"));
            }
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
    match compute(ctx, Some(record), &p.act) {
        Ok((lines, notes)) => ctx.pending.set(Some(Pending {
            lines,
            notes,
            etag,
            stale: None,
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
fn no_op(record: Option<&Record>, p: &Pending) -> Option<String> {
    if let (Act::Change(Change::UpdateImage { image, with_proxy }), Some(record)) = (&p.act, record)
    {
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

/// Marks what had focus when the review opened (its form's button): the
/// page holds it, so a button re-rendered meanwhile is not focused.
const OPENER: &str = "data-review-opener";
const MARKED: &str = "[data-review-opener]";

fn remember_opener() {
    if let Some(el) = element(MARKED) {
        let _ = el.remove_attribute(OPENER);
    }
    if let Some(el) = document().active_element() {
        let _ = el.set_attribute(OPENER, "");
    }
}

/// After the review closes: back to what opened it while it is on the
/// page, else to `fallback` (the outcome, the page's heading: a selector).
pub fn return_focus(fallback: &'static str) {
    request_animation_frame(move || match element(MARKED) {
        Some(el) => {
            let _ = el.remove_attribute(OPENER);
            let _ = el.focus();
        }
        None => focus(fallback),
    });
}

/// Closes the review without sending it.
fn close(ctx: &EndpointCtx) {
    ctx.pending.set(None);
    return_focus("#endpoint-title");
}

#[component]
pub fn Review() -> impl IntoView {
    let ctx = ctx();
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
            let loaded = ctx.loaded_untracked();
            let commands = match (&loaded, &p.act) {
                (Some(l), Act::Change(change)) => Some(change_commands(&l.record, change)),
                _ => None,
            };
            let nothing = no_op(loaded.as_ref().map(|l| &l.record), &p);
            let idle = nothing.is_some();
            let name = ctx.name.get_value();
            let stale = p.stale.filter(|_| !p.reloading);
            // Outdated, "Now" is what is stored now (the page shows it),
            // not what the review was computed from.
            let lines = match (stale, &loaded) {
                (Some(_), Some(l)) => now_column(&p.lines, &l.record.to_value()),
                _ => p.lines.clone(),
            };
            let pending = p.clone();
            view! {
                <section class="review" class:docked=p.form == DOCKED_FORM role="dialog" aria-modal="false" aria-labelledby="review-title"
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Escape" { ev.prevent_default(); close(&ctx); }>
                    <h2 id="review-title" tabindex="-1">{format!("Review: {}", p.title)}</h2>
                    {if let Some(why) = nothing {
                        view! { <p class="muted no-op">{why}</p> }.into_any()
                    } else {
                        view! { <DiffTable lines=lines labels=["Now", "After"]/> }.into_any()
                    }}
                    <ul class="notes">{p.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
                    {commands.map(|c| view! { <CliCommands commands=c/> })}
                    {stale.map(|why| view! {
                        <p class="banner error" role="alert">{why.notice()}</p>
                    })}
                    <div class="row">
                        {if stale.is_some() {
                            view! { <button type="button" class="primary" on:click=reapply>"Reload and re-apply"</button> }.into_any()
                        } else {
                            view! {
                                <button type="button" class="primary" disabled=move || idle || ctx.apply.busy.get()
                                    on:click=move |_| ctx.apply.send(name.clone(), pending.clone())>"Apply"</button>
                            }.into_any()
                        }}
                        <button type="button" on:click=move |_| close(&ctx) aria-keyshortcuts="Escape" title="Cancel (Escape)">"Cancel"</button>
                    </div>
                </section>
            }
        })}
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn a_diff_shows_fields_and_leaves_out_what_the_server_draws() {
        let old = parse(r#"{"endpoint_name": "x", "updated_at": "t1", "lifecycle_id": "a", "spec": {"replicas": 1}}"#).unwrap();
        let new = parse(
            r#"{"endpoint_name": "x", "updated_at": "t2", "lifecycle_id": "b", "spec": {"replicas": 2, "store": {"global_segment_size": "4294967296", "offload": "cpu"}}}"#,
        )
        .unwrap();
        let line = |f: &str, o: &str, n: &str| (f.to_owned(), o.to_owned(), n.to_owned());
        assert_eq!(
            diff_lines(&old, &new),
            [
                line("spec.replicas", "1", "2"),
                line(
                    "spec.store.global_segment_size",
                    "—",
                    r#""4294967296" (4,294,967,296 bytes = 4 GiB = 4.29 GB)"#
                ),
                line("spec.store.offload", "—", r#""cpu""#),
            ]
        );
    }

    #[test]
    fn an_outdated_review_reads_now_from_what_is_stored() {
        let line = |f: &str, o: &str, n: &str| (f.to_owned(), o.to_owned(), n.to_owned());
        let reviewed = [
            line("spec.replicas", "3", "4"),
            line("labels.app.kubernetes.io/name", r#""a""#, r#""b""#),
            line("spec.canary", "—", "{}"),
        ];
        let stored =
            parse(r#"{"spec": {"replicas": 6}, "labels": {"app.kubernetes.io/name": "c"}}"#)
                .unwrap();
        assert_eq!(
            now_column(&reviewed, &stored),
            [
                line("spec.replicas", "6", "4"),
                line("labels.app.kubernetes.io/name", r#""c""#, r#""b""#),
                line("spec.canary", "—", "{}"),
            ]
        );
    }

    #[test]
    fn a_region_no_monitor_is_known_in_is_named() {
        let known = ["us-east-1".to_owned(), "eu-west-1".to_owned()];
        assert_eq!(unmonitored_region("eu-west-1", &known), None);
        assert_eq!(unmonitored_region("ap-south-1", &[]), None, "not known yet");
        assert!(
            unmonitored_region(" ap-south-1 ", &known)
                .unwrap()
                .starts_with("No GCO monitor is known in ap-south-1: this console's regions (--regions) are us-east-1, eu-west-1.")
        );
    }

    #[test]
    fn a_record_that_appears_or_goes_shows_field_by_field() {
        let empty = Value::Object(Default::default());
        let record =
            parse(r#"{"endpoint_name": "x", "spec": {"image": "a"}, "labels": {}}"#).unwrap();
        let appears: Vec<String> = diff_lines(&empty, &record)
            .into_iter()
            .map(|l| l.0)
            .collect();
        assert_eq!(appears, ["endpoint_name", "spec.image", "labels"]);
        let goes = diff_lines(&record, &empty);
        assert_eq!(
            goes[1],
            ("spec.image".to_owned(), r#""a""#.to_owned(), "—".to_owned())
        );
    }
}
