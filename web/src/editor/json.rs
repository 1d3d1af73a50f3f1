//! The JSON view: the request as text, edited as text, each message
//! underlined at its range (the core's places, as the CLI and the package
//! give them); a message in the summary moves the cursor to its range.

use gco_spec::document::{self, Located};
use gco_spec::json::Value;
use gco_spec::{Diagnostic, Report, Severity};
use leptos::html::Pre;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::state::{Editor, JsonDraft};

const EDITOR_ID: &str = "json-editor";

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
    // The underlines: a layer over the text, in the same font and box, whose
    // text is transparent and whose marked pieces are underlined; it scrolls
    // with the text.
    let marks = NodeRef::<Pre>::new();
    let pieces = move || text.with(|t| pieces(t, &places(t, ed.all())));
    view! {
        <div class="field json" class:invalid=move || error().is_some()>
            <label for=EDITOR_ID>"Deploy request (JSON)"</label>
            <div class="json-area">
                <textarea id=EDITOR_ID rows="24" spellcheck="false" aria-describedby="json-editor-msg"
                    aria-invalid=move || error().is_some().to_string()
                    prop:value=move || text.get()
                    on:scroll=move |ev| {
                        let area = event_target::<web_sys::HtmlTextAreaElement>(&ev);
                        if let Some(layer) = marks.get() {
                            layer.set_scroll_top(area.scroll_top());
                            layer.set_scroll_left(area.scroll_left());
                        }
                    }
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
                <pre class="json-marks" aria-hidden="true" node_ref=marks>
                    {move || pieces().into_iter().map(|(piece, worst)| {
                        let class = match worst {
                            Some(Severity::Error) => "mark-error",
                            Some(Severity::Warning) => "mark-warning",
                            None => "",
                        };
                        view! { <span class=class>{piece}</span> }
                    }).collect_view()}
                    // A textarea's last line break still makes a line.
                    "\n"
                </pre>
            </div>
            <ul class="messages" id="json-editor-msg" aria-live="polite">{move || error().map(|e| view! { <li class="error">{e}</li> })}</ul>
        </div>
    }
}

/// Where each diagnostic is in the view's text: the core's places, or the
/// one place where the text stops being a document.
fn places(text: &str, diagnostics: Vec<Diagnostic>) -> Vec<Located> {
    match document::read_text(text) {
        Err(refusal) => vec![refusal],
        Ok(_) => document::locate(text, Report { diagnostics }),
    }
}

/// The text cut wherever a mark starts or ends, each piece with the worst
/// severity of the marks that cover it (`None`: unmarked).
fn pieces(text: &str, marks: &[Located]) -> Vec<(String, Option<Severity>)> {
    let mut cuts = vec![0, text.len()];
    for r in marks.iter().filter_map(|m| m.range) {
        for at in [r.start.offset, r.end.offset] {
            // Kept sorted as it is built: a handful of marks needs no sort.
            let i = cuts.partition_point(|&c| c < at);
            if cuts.get(i) != Some(&at) {
                cuts.insert(i, at);
            }
        }
    }
    cuts.windows(2)
        .map(|w| {
            let worst = marks
                .iter()
                .filter(|m| {
                    m.range
                        .is_some_and(|r| r.start.offset <= w[0] && w[1] <= r.end.offset)
                })
                .map(|m| m.diagnostic.severity)
                .min();
            (text[w[0]..w[1]].to_owned(), worst)
        })
        .collect()
}

/// Selects a diagnostic's range in the JSON view's text and focuses it, as
/// a playground moves its editor to a message.
pub fn reveal(d: &Diagnostic) {
    let Some(area) = document()
        .get_element_by_id(EDITOR_ID)
        .and_then(|el| el.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
    else {
        return;
    };
    let text = area.value();
    let Some(range) = places(&text, vec![d.clone()]).pop().and_then(|l| l.range) else {
        return;
    };
    // The textarea counts UTF-16 code units from the start of its value.
    let units = |offset: usize| text[..offset].encode_utf16().count() as u32;
    let _ = area.focus();
    let _ = area.set_selection_range(units(range.start.offset), units(range.end.offset));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_take_the_worst_severity_of_overlapping_marks() {
        let text = r#"{"mode": "x", "topology": {"decode": 1}}"#;
        let marks = places(
            text,
            vec![
                Diagnostic::warning("topology", "w"),
                Diagnostic::error("mode", "e"),
                Diagnostic::error("topology.prefill", "missing"),
            ],
        );
        let pieces = pieces(text, &marks);
        let marked: Vec<(&str, Option<Severity>)> = pieces
            .iter()
            .filter(|(_, s)| s.is_some())
            .map(|(t, s)| (t.as_str(), *s))
            .collect();
        assert_eq!(
            marked,
            [
                ("\"x\"", Some(Severity::Error)),
                ("{\"decode\": 1}", Some(Severity::Error)),
            ]
        );
        assert_eq!(
            pieces.iter().map(|(t, _)| t.as_str()).collect::<String>(),
            text
        );
    }
}
