//! Every problem with the request in one list beside the form, each a
//! button to the field that shows it (in the JSON view, to its range in
//! the text); and the toolbar's way there.

use gco_spec::Severity;
use leptos::prelude::*;

use super::fields::{field_for, field_id};
use super::state::Editor;

#[component]
pub fn Summary(ed: Editor, json_view: RwSignal<bool>) -> impl IntoView {
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
                    let target = field_for(&d.path).map(|f| format!("#{}", field_id(f.diag)));
                    let path = if d.path.is_empty() { "request".to_owned() } else { d.path.clone() };
                    let message = d.message.clone();
                    view! {
                        <li class=class>
                            <button type="button" class="link" on:click=move |_| {
                                // In the JSON view (or for what no form field
                                // shows), the cursor goes to the message's
                                // range, as in Ruff's and Biome's playgrounds.
                                match &target {
                                    Some(t) if !json_view.get_untracked() && !d.path.is_empty() => {
                                        let t = t.clone();
                                        request_animation_frame(move || crate::browser::focus(&t));
                                    }
                                    _ => {
                                        json_view.set(true);
                                        let d = d.clone();
                                        request_animation_frame(move || super::json::reveal(&d));
                                    }
                                }
                            }>
                                <code>{path}</code>" "{message}
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}

/// "N errors" in the toolbar: the summary sits beside the form, or below
/// it on a narrow screen, and this brings it into view.
#[component]
pub fn ErrorsButton(ed: Editor) -> impl IntoView {
    let errors = move || {
        ed.all()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    };
    let show = move |_| {
        if let Some(el) = document().get_element_by_id("summary-title") {
            el.scroll_into_view();
        }
        crate::browser::focus(".summary li button");
    };
    view! {
        <Show when=move || { errors() > 0 }>
            <button type="button" class="problems-link" on:click=show>
                {move || match errors() { 1 => "1 error".to_owned(), n => format!("{n} errors") }}
            </button>
        </Show>
    }
}
