//! The endpoint editor: the form and the JSON view over one state, the
//! topology picture, every diagnostic at its field and in a summary, share
//! links, and Deploy.

mod counts;
mod deploy;
mod draft;
pub mod fields;
mod json;
mod link;
mod name_check;
mod other;
pub mod state;
mod summary;
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
    draft::save(&gco_spec::deploy::request_on_sglang(record));
    draft::note_origin(&format!(
        "Cloned from {} with framework sglang: the model moved to the MODEL env entry and the image is SGLang's ({}). Check the image tag and the extra arguments, then deploy.",
        record.endpoint_name,
        gco_spec::framework::SGLANG_IMAGE
    ));
}

use gco_api::Role;
use leptos::prelude::*;

use crate::preview::PreviewPanel;
use crate::route::Router;
use crate::share;
use crate::team::Guard;
use counts::Topology;
pub use deploy::DEPLOYING;
use deploy::{Deploy, DeployAnswer};
use fields::{AUTOSCALING, ENDPOINT, MOONCAKE, PROXY, STORE, Section, TRANSFER};
use json::JsonView;
use other::{OtherFields, block_as_is};
use state::{Editor, empty_request};
use summary::{ErrorsButton, Summary};

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
    let json_view = RwSignal::new(false);
    // What the page says besides the deploy's answer: a link that cannot be
    // opened, and news (the address, Copy link).
    let banner = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let restored = RwSignal::new(None::<String>);
    let ready = link::open(ed, banner, restored);
    link::follow(ed, ready, status);
    name_check::follow(ed);
    deploy.retry_after_sign_in(ed);

    let start_over = move |_| {
        draft::clear();
        share::set_fragment("");
        restored.set(None);
        ed.json_draft.set(None);
        ed.replace(empty_request());
    };
    // Deploy from anywhere in the form: Ctrl+Enter (Cmd+Enter on a Mac).
    let shortcut = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
            ev.prevent_default();
            deploy.start(ed);
        }
    };

    view! {
        <div class="editor" on:keydown=shortcut>
            <header class="page-head">
                <h1>"New endpoint"</h1>
                <Toolbar ed=ed json_view=json_view deploy=deploy status=status/>
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
                    <Show when=move || json_view.get() fallback=move || view! { <Form ed=ed json_view=json_view/> }>
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
                    <PreviewPanel request=ed.state check=ed.check/>
                </aside>
            </div>
        </div>
    }
}

#[component]
fn Toolbar(
    ed: Editor,
    json_view: RwSignal<bool>,
    deploy: Deploy,
    status: RwSignal<Option<String>>,
) -> impl IntoView {
    view! {
        <div class="toolbar" role="toolbar" aria-label="Editor">
            <button type="button" on:click=move |_| ed.undo() disabled=move || !ed.can_undo()>"Undo"</button>
            <button type="button" on:click=move |_| ed.redo() disabled=move || !ed.can_redo()>"Redo"</button>
            <button type="button" aria-pressed=move || (!json_view.get()).to_string() on:click=move |_| json_view.set(false)>"Form"</button>
            <button type="button" aria-pressed=move || json_view.get().to_string() on:click=move |_| json_view.set(true)>"JSON"</button>
            <button type="button" on:click=move |_| link::copy(ed, status) disabled=move || ed.json_draft.with(Option::is_some)
                title="A link that opens this editor's state">"Copy link"</button>
            <ErrorsButton ed=ed/>
            // The reason shows beside the button, not only at the form's end.
            <Guard needed=Role::Operator doing=DEPLOYING id="deploy-reason".to_owned()>
                <button type="button" class="primary" on:click=move |_| deploy.start(ed)
                    aria-keyshortcuts="Control+Enter" title=move || deploy.refused.with(Option::is_none).then_some("Deploy (Ctrl+Enter)")
                    disabled=move || deploy.disabled(ed)>"Deploy"</button>
            </Guard>
        </div>
    }
}

/// The form view: a section per part of the request, then what no field
/// shows.
#[component]
fn Form(ed: Editor, json_view: RwSignal<bool>) -> impl IntoView {
    view! {
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
    }
}
