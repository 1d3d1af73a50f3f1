//! The endpoint editor: the form and the JSON view over one state, the
//! topology picture, every diagnostic at its field and in a summary, share
//! links, and Deploy.

pub mod fields;
pub mod state;

use gco_spec::Severity;
use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::preview::PreviewPanel;
use crate::route::{Page, navigate};
use crate::share;
use crate::topology::Topology;
use fields::{
    AUTOSCALING, ENDPOINT, MOONCAKE, PROXY, STORE, Section, TRANSFER, field_for, field_id,
};
use state::{Editor, empty_request, load_defaults};

/// How long edits wait before the URL follows them.
const LINK_THROTTLE_MS: i32 = 400;

fn focus(id: &str) {
    if let Some(el) = document().get_element_by_id(id) {
        use wasm_bindgen::JsCast;
        if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = el.focus();
        }
    }
}

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
                    let target = field_for(&d.path).map(|f| field_id(f.diag));
                    let path = if d.path.is_empty() { "request".to_owned() } else { d.path.clone() };
                    view! {
                        <li class=class>
                            <button type="button" class="link" on:click=move |_| {
                                if let Some(t) = &target {
                                    json_view.set(false);
                                    let t = t.clone();
                                    request_animation_frame(move || focus(&t));
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

#[component]
fn JsonView(ed: Editor) -> impl IntoView {
    let text = RwSignal::new(ed.state.with_untracked(Value::to_json_pretty));
    let error = RwSignal::new(None::<String>);
    let written = StoredValue::new(ed.state.get_untracked());
    Effect::new(move |_| {
        let now = ed.state.get();
        if now != written.get_value() {
            written.set_value(now.clone());
            text.set(now.to_json_pretty());
            error.set(None);
        }
    });
    view! {
        <div class="field json">
            <label for="json-editor">"Deploy request (JSON)"</label>
            <textarea id="json-editor" rows="24" spellcheck="false" prop:value=move || text.get()
                on:input=move |ev| {
                    let t = event_target_value(&ev);
                    text.set(t.clone());
                    match gco_spec::json::parse_limited(&t, 32) {
                        Ok(v @ Value::Object(_)) => {
                            error.set(None);
                            written.set_value(v.clone());
                            ed.replace(v);
                        }
                        Ok(_) => error.set(Some("a deploy request is a JSON object".into())),
                        Err(e) => error.set(Some(format!("invalid JSON: {e}"))),
                    }
                }></textarea>
            <ul class="messages">{move || error.get().map(|e| view! { <li class="error">{e}</li> })}</ul>
        </div>
    }
}

#[component]
pub fn EditorPage() -> impl IntoView {
    let ed = Editor::new(empty_request());
    spawn_local(load_defaults(ed.defaults));
    let json_view = RwSignal::new(false);
    let banner = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let ready = RwSignal::new(false);

    // Open a shared link once, then let the URL follow edits.
    let fragment = share::current_fragment();
    if fragment.starts_with(share::PREFIX) {
        spawn_local(async move {
            match share::decode(&fragment).await {
                Ok(v) => ed.replace(v),
                Err(e) => {
                    let _ = banner.try_set(Some(format!(
                        "This link could not be opened: {e}. The editor starts empty."
                    )));
                    share::set_fragment("");
                }
            }
            let _ = ready.try_set(true);
        });
    } else {
        ready.set(true);
    }
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
                    if state.as_object().is_some_and(|o| o.is_empty()) {
                        share::set_fragment("");
                        return;
                    }
                    match share::encode(&state).await {
                        Ok(f) => share::set_fragment(&f),
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

    let copy_link = move |_| {
        let state = ed.state.get_untracked();
        spawn_local(async move {
            match share::encode(&state).await {
                Ok(f) => {
                    share::set_fragment(&f);
                    let href = window().location().href().unwrap_or_default();
                    let _ = wasm_bindgen_futures::JsFuture::from(
                        window().navigator().clipboard().write_text(&href),
                    )
                    .await;
                    let _ = status.try_set(Some(
                        "Link copied: it holds this editor's state, never a token.".into(),
                    ));
                }
                Err(e) => {
                    let _ = status.try_set(Some(e));
                }
            }
        });
    };

    let deploy = move |_| {
        let body = ed.state.get_untracked();
        busy.set(true);
        status.set(Some("Deploying…".into()));
        spawn_local(async move {
            match crate::api::call("POST", "/api/endpoints", Some(&body), None).await {
                Ok(r) if r.ok() => {
                    let name =
                        crate::paths::display(crate::paths::get(&r.body, &["endpoint_name"]));
                    share::set_fragment("");
                    navigate(Page::Endpoint(name));
                    return;
                }
                Ok(r) => {
                    let _ = ed.server.try_set(r.diagnostics());
                    let _ = status.try_set(Some(format!("Not deployed: {}", r.summary())));
                }
                Err(e) => {
                    let _ = status.try_set(Some(format!("Not deployed: {e}")));
                }
            }
            let _ = busy.try_set(false);
        });
    };

    view! {
        <div class="editor">
            <header class="page-head">
                <h1>"New endpoint"</h1>
                <div class="toolbar" role="toolbar" aria-label="Editor">
                    <button type="button" on:click=move |_| ed.undo() disabled=move || !ed.can_undo()>"Undo"</button>
                    <button type="button" on:click=move |_| ed.redo() disabled=move || !ed.can_redo()>"Redo"</button>
                    <button type="button" aria-pressed=move || (!json_view.get()).to_string() on:click=move |_| json_view.set(false)>"Form"</button>
                    <button type="button" aria-pressed=move || json_view.get().to_string() on:click=move |_| json_view.set(true)>"JSON"</button>
                    <button type="button" on:click=copy_link>"Copy link"</button>
                    <button type="button" class="primary" on:click=deploy
                        disabled=move || ed.has_errors() || busy.get()>"Deploy"</button>
                </div>
            </header>
            {move || banner.get().map(|b| view! { <p class="banner error" role="alert">{b}</p> })}
            {move || status.get().map(|s| view! { <p class="banner" role="status">{s}</p> })}
            <div class="columns">
                <div class="form">
                    <Show when=move || json_view.get() fallback=move || view! {
                        <Section ed=ed title="Endpoint" fields=ENDPOINT/>
                        <Section ed=ed title="Mooncake" fields=MOONCAKE/>
                        <Section ed=ed title="KV store" fields=STORE/>
                        <Section ed=ed title="Transfer" fields=TRANSFER/>
                        <Section ed=ed title="PD proxy" fields=PROXY/>
                        <Section ed=ed title="Autoscaling" fields=AUTOSCALING/>
                    }>
                        <JsonView ed=ed/>
                    </Show>
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
