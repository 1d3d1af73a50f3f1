//! The endpoint editor: the form and the JSON view over one state, the
//! topology picture, every diagnostic at its field and in a summary, share
//! links, and Deploy.

mod deploy;
mod draft;
pub mod fields;
pub mod state;
mod undo;

pub use fields::size_note;

/// Whether this tab holds an unsent draft.
pub fn has_draft() -> bool {
    draft::load().is_some()
}

/// Ends this tab's draft (the user chose to start over).
pub fn discard_draft() {
    draft::clear();
    share::set_fragment("");
}

/// Opens the editor on a copy of `record` (Clone): a new draft for this
/// tab, which the editor restores and names.
pub fn open_clone(record: &gco_spec::Record) {
    draft::save(&gco_spec::deploy::request_of_record(record));
    draft::note_origin(&format!(
        "Cloned from {}: change what differs, then deploy.",
        record.endpoint_name
    ));
}

/// Opens the editor on `record` moved onto SGLang ("Clone with sglang"):
/// for endpoints whose framework GCO no longer serves.
pub fn open_clone_on_sglang(record: &gco_spec::Record) {
    draft::save(&gco_spec::framework::request_on_sglang(record));
    draft::note_origin(&format!(
        "Cloned from {} with framework sglang: the model moved to the MODEL env entry and the image is SGLang's ({}). Check the image tag and the extra arguments, then deploy.",
        record.endpoint_name,
        gco_spec::framework::SGLANG_IMAGE
    ));
}

use gco_api::Role;
use gco_spec::Severity;
use gco_spec::json::{Object, Value};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::preview::PreviewPanel;
use crate::route::Router;
use crate::share;
use crate::team::Guard;
use crate::topology::Topology;
use deploy::{DEPLOYING, Deploy, DeployAnswer};
use fields::{
    AUTOSCALING, ENDPOINT, MOONCAKE, PROXY, STORE, Section, TRANSFER, field_for, field_id,
};
use state::{Editor, JsonDraft, empty_request};

/// How long edits wait before the URL follows them.
const LINK_THROTTLE_MS: i32 = 400;

#[component]
fn Summary(ed: Editor, json_view: RwSignal<bool>) -> impl IntoView {
    let all = move || ed.all();
    let counts = move || {
        let all = all();
        let errors = all.iter().filter(|d| d.severity == Severity::Error).count();
        (errors, all.len() - errors)
    };
    view! {
        <section class="summary" aria-labelledby="summary-title">
            <h2 id="summary-title">
                {move || match counts() {
                    (0, 0) => "No problems".to_owned(),
                    (e, w) => format!("{e} error{}, {w} warning{}", if e == 1 { "" } else { "s" }, if w == 1 { "" } else { "s" }),
                }}
            </h2>
            <ul>
                {move || all().into_iter().map(|d| {
                    let class = if d.severity == Severity::Error { "error" } else { "warning" };
                    let target = if d.path.is_empty() {
                        Some("#json-editor".to_owned())
                    } else {
                        field_for(&d.path).map(|f| format!("#{}", field_id(f.diag)))
                    };
                    let in_json = d.path.is_empty();
                    let path = if d.path.is_empty() { "request".to_owned() } else { d.path.clone() };
                    view! {
                        <li class=class>
                            <button type="button" class="link" on:click=move |_| {
                                if let Some(t) = &target {
                                    json_view.set(in_json);
                                    let t = t.clone();
                                    request_animation_frame(move || crate::browser::focus(&t));
                                }
                            }>
                                <code>{path}</code>" "{d.message}
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}

/// The request as JSON text. Text that does not parse stays in the view
/// (and in the editor, so it survives a switch to the form) as a
/// [`JsonDraft`]: an error that blocks Deploy and Copy link until it parses.
#[component]
fn JsonView(ed: Editor) -> impl IntoView {
    let shown = move || ed.state.with(Value::to_json_pretty);
    let text = RwSignal::new(
        ed.json_draft
            .with_untracked(|d| d.as_ref().map(|d| d.text.clone()))
            .unwrap_or_else(shown),
    );
    let written = StoredValue::new(ed.state.get_untracked());
    Effect::new(move |_| {
        let now = ed.state.get();
        if now != written.get_value() {
            written.set_value(now.clone());
            text.set(now.to_json_pretty());
            ed.json_draft.set(None);
        }
    });
    let error = move || ed.json_draft.with(|d| d.as_ref().map(|d| d.error.clone()));
    view! {
        <div class="field json" class:invalid=move || error().is_some()>
            <label for="json-editor">"Deploy request (JSON)"</label>
            <textarea id="json-editor" rows="24" spellcheck="false" aria-describedby="json-editor-msg"
                aria-invalid=move || error().is_some().to_string()
                prop:value=move || text.get()
                on:input=move |ev| {
                    let t = event_target_value(&ev);
                    text.set(t.clone());
                    let problem = match gco_spec::json::parse_limited(&t, 32) {
                        Ok(v @ Value::Object(_)) => {
                            written.set_value(v.clone());
                            ed.json_draft.set(None);
                            ed.replace(v);
                            return;
                        }
                        Ok(_) => "a deploy request is a JSON object".to_owned(),
                        Err(e) => format!("invalid JSON: {e}"),
                    };
                    ed.json_draft.set(Some(JsonDraft { text: t, error: problem }));
                }></textarea>
            <ul class="messages" id="json-editor-msg" aria-live="polite">{move || error().map(|e| view! { <li class="error">{e}</li> })}</ul>
        </div>
    }
}

/// Whether a request gives the `mooncake` block as is (no
/// `mooncake_mode`): the form's Mooncake fields cannot show it
/// (`deploy::block_as_fields` splits every block they can), so it is shown
/// among the other fields.
fn block_as_is(request: &Value) -> bool {
    request
        .as_object()
        .is_some_and(|o| !o.contains_key("mooncake_mode") && o.contains_key("mooncake"))
}

/// Request values no form field shows (`autoscaling`, `rewrite_image`,
/// `mooncake_transfer.bootstrap_base_port`, a second metric, a block given
/// as is, unknown keys), by path: the form hides nothing that is sent.
fn hidden_values(request: &Value) -> Object {
    fn walk(v: &Value, path: &mut Vec<String>, out: &mut Object) {
        let Some(o) = v.as_object() else { return };
        for (k, child) in o.str_entries() {
            path.push(k.to_string_lossy());
            let covers = |f: &&fields::FieldDef| {
                f.path.len() >= path.len() && f.path.iter().zip(path.iter()).all(|(a, b)| a == b)
            };
            let shown = match fields::all_fields().find(covers) {
                // A metric field shows the first metric only.
                Some(f) if f.path.len() == path.len() => {
                    !matches!((f.kind, child), (fields::Kind::Metric(_), Value::List(l)) if l.len() > 1)
                }
                Some(_) if child.as_object().is_some() => {
                    walk(child, path, out);
                    true
                }
                _ => false,
            };
            if !shown {
                out.insert(&path.join("."), child.clone());
            }
            path.pop();
        }
    }
    let mut out = Object::new();
    let mut request = request.clone();
    // A block beside mooncake_mode is ignored, with a warning at it.
    if !block_as_is(&request)
        && let Some(o) = request.as_object_mut()
    {
        o.remove("mooncake");
    }
    walk(&request, &mut Vec::new(), &mut out);
    out
}

#[component]
fn OtherFields(ed: Editor) -> impl IntoView {
    let others = Memo::new(move |_| ed.state.with(hidden_values));
    move || {
        others.with(|o| {
            (!o.is_empty()).then(|| {
                view! {
                    <fieldset class="section other-fields" data-path="mooncake">
                        <legend>"Other fields"</legend>
                        <p class="hint">"No form field edits these; they are sent as shown. Change them in the JSON view. (A mooncake block is here when the form's fields would build another one from it: a split mode without proxy.image, a store mode without store.enabled, keys in another order, ...)"</p>
                        <pre>{Value::Object(o.clone()).to_json_pretty()}</pre>
                    </fieldset>
                }
            })
        })
    }
}

/// Where the editor starts: a link opened on purpose, else this tab's
/// draft (the link in the URL may be an older copy of it, written before
/// the user left), else an empty request.
enum Start {
    Link(String),
    Draft(Value),
    Empty,
}

fn start() -> Start {
    let fragment = share::current_fragment();
    let link = fragment.starts_with(share::PREFIX);
    match draft::load() {
        Some(d) if !link || draft::is_own_fragment(&fragment) => Start::Draft(d),
        _ if link => Start::Link(fragment),
        _ => Start::Empty,
    }
}

#[component]
pub fn EditorPage() -> impl IntoView {
    let deploy = Deploy::new(Router::get());
    // Until the server's deploy defaults arrive, the editor checks as a
    // file check does (no regions assumed).
    let ed = Editor::new(
        empty_request(),
        crate::settings::Settings::get(),
        move |request| deploy.diagnostics_of(request),
    );
    deploy.retry_after_sign_in(ed);
    let json_view = RwSignal::new(false);
    let banner = RwSignal::new(None::<String>);
    let restored = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let ready = RwSignal::new(false);

    match start() {
        Start::Link(fragment) => spawn_local(async move {
            match share::decode(&fragment).await {
                Ok(v) => ed.replace(gco_spec::deploy::block_as_fields(v)),
                Err(e) => {
                    let _ = banner.try_set(Some(format!(
                        "This link could not be opened: {e}. The editor starts empty."
                    )));
                    share::set_fragment("");
                }
            }
            let _ = ready.try_set(true);
        }),
        Start::Draft(d) => {
            ed.replace(gco_spec::deploy::block_as_fields(d));
            restored.set(Some(draft::take_origin().unwrap_or_else(|| {
                "Restored the draft you were editing in this tab.".to_owned()
            })));
            ready.set(true);
        }
        Start::Empty => ready.set(true),
    }

    // The draft follows every edit at once; the link follows after a pause.
    Effect::new(move |_| ed.state.with(draft::save));
    let generation = StoredValue::new(0u32);
    Effect::new(move |_| {
        let state = ed.state.get();
        if !ready.get() {
            return;
        }
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        set_timeout(
            move || {
                // The page may be gone by now (after Deploy, say).
                if generation.try_get_value() != Some(mine) {
                    return;
                }
                spawn_local(async move {
                    if draft::is_empty(&state) {
                        share::set_fragment("");
                        return;
                    }
                    match share::encode(&state).await {
                        Ok(f) => {
                            share::set_fragment(&f);
                            draft::note_fragment(&f);
                        }
                        // Never leave an older state in the URL: a reload
                        // would bring it back and drop these edits.
                        Err(e) => {
                            share::set_fragment("");
                            let _ = status.try_set(Some(format!(
                                "The address no longer follows the editor: {e}."
                            )));
                        }
                    }
                });
            },
            std::time::Duration::from_millis(LINK_THROTTLE_MS as u64),
        );
    });

    let start_over = move |_| {
        draft::clear();
        share::set_fragment("");
        restored.set(None);
        ed.json_draft.set(None);
        ed.replace(empty_request());
    };

    let copy_link = move |_| {
        let state = ed.state.get_untracked();
        spawn_local(async move {
            let note = match share::encode(&state).await {
                Ok(f) => {
                    share::set_fragment(&f);
                    draft::note_fragment(&f);
                    let href = window().location().href().unwrap_or_default();
                    if crate::browser::copy(&href).await {
                        "Link copied: it holds this editor's state, never a token.".to_owned()
                    } else {
                        "The browser did not allow copying; the address bar holds the link."
                            .to_owned()
                    }
                }
                Err(e) => e,
            };
            let _ = status.try_set(Some(note));
        });
    };

    // Deploy from anywhere in the form: Ctrl+Enter (Cmd+Enter on a Mac).
    let shortcut = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
            ev.prevent_default();
            deploy.start(ed);
        }
    };
    // The problems panel sits beside the form, or below it on a narrow
    // screen: this brings it into view from the toolbar.
    let show_problems = move || {
        if let Some(el) = document().get_element_by_id("summary-title") {
            el.scroll_into_view();
        }
        crate::browser::focus(".summary li button");
    };
    let error_count = move || {
        ed.all()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    };

    view! {
        <div class="editor" on:keydown=shortcut>
            <header class="page-head">
                <h1>"New endpoint"</h1>
                <div class="toolbar" role="toolbar" aria-label="Editor">
                    <button type="button" on:click=move |_| ed.undo() disabled=move || !ed.can_undo()>"Undo"</button>
                    <button type="button" on:click=move |_| ed.redo() disabled=move || !ed.can_redo()>"Redo"</button>
                    <button type="button" aria-pressed=move || (!json_view.get()).to_string() on:click=move |_| json_view.set(false)>"Form"</button>
                    <button type="button" aria-pressed=move || json_view.get().to_string() on:click=move |_| json_view.set(true)>"JSON"</button>
                    <button type="button" on:click=copy_link disabled=move || ed.json_draft.with(Option::is_some)
                        title="A link that opens this editor's state">"Copy link"</button>
                    <Show when=move || { error_count() > 0 }>
                        <button type="button" class="problems-link" on:click=move |_| show_problems()>
                            {move || match error_count() { 1 => "1 error".to_owned(), n => format!("{n} errors") }}
                        </button>
                    </Show>
                    <Guard needed=Role::Operator doing=DEPLOYING id="deploy-reason".to_owned() quiet=true>
                        <button type="button" class="primary" on:click=move |_| deploy.start(ed)
                            aria-keyshortcuts="Control+Enter" title=move || deploy.refused.with(Option::is_none).then_some("Deploy (Ctrl+Enter)")
                            disabled=move || deploy.disabled(ed)>"Deploy"</button>
                    </Guard>
                </div>
            </header>
            {move || banner.get().map(|b| view! { <p class="banner error" role="alert">{b}</p> })}
            <DeployAnswer deploy=deploy/>
            {move || restored.get().map(|text| view! {
                <p class="banner" role="status">{text}" "
                    <button type="button" class="link-button" on:click=start_over>"Start over"</button>
                </p>
            })}
            {move || status.get().map(|s| view! { <p class="banner" role="status">{s}</p> })}
            <div class="columns">
                <div class="form">
                    <Show when=move || json_view.get() fallback=move || view! {
                        <Show when=move || ed.json_draft.with(Option::is_some)>
                            <p class="banner error" role="status">
                                "The JSON view holds text that does not parse; the form shows the last request that did. "
                                <button type="button" class="link-button" on:click=move |_| json_view.set(true)>"Back to the JSON"</button>
                            </p>
                        </Show>
                        <Section ed=ed title="Endpoint" fields=ENDPOINT/>
                        <Show when=move || !ed.state.with(block_as_is)>
                            <Section ed=ed title="Mooncake" fields=MOONCAKE/>
                            <Section ed=ed title="KV store" fields=STORE/>
                            <Section ed=ed title="Transfer" fields=TRANSFER/>
                            <Section ed=ed title="PD proxy" fields=PROXY/>
                            <Section ed=ed title="Autoscaling" fields=AUTOSCALING/>
                        </Show>
                        <OtherFields ed=ed/>
                    }>
                        <JsonView ed=ed/>
                    </Show>
                    <div class="form-end">
                        <Guard needed=Role::Operator doing=DEPLOYING id="deploy-reason-end".to_owned()>
                            <button type="button" class="primary" on:click=move |_| deploy.start(ed)
                                aria-label="Deploy, from the end of the form"
                                disabled=move || deploy.disabled(ed)>"Deploy"</button>
                            <span class="hint">" or Ctrl+Enter from any field"</span>
                        </Guard>
                    </div>
                </div>
                <aside class="side">
                    <Topology ed=ed/>
                    <Summary ed=ed json_view=json_view/>
                    <PreviewPanel ed=ed/>
                </aside>
            </div>
        </div>
    }
}
