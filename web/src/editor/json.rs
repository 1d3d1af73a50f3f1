//! The JSON view: the request as text, edited as text.

use gco_spec::json::Value;
use leptos::prelude::*;

use super::state::{Editor, JsonDraft};

/// The request as JSON text. Text that does not parse stays in the view
/// (and in the editor, so it survives a switch to the form) as a
/// [`JsonDraft`]: an error that blocks Deploy and Copy link until it parses.
#[component]
pub fn JsonView(ed: Editor) -> impl IntoView {
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
