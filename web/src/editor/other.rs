//! "Other fields": every value the request sends that no form field shows,
//! so the form hides nothing that is sent.

use gco_spec::json::{Object, Value};
use leptos::prelude::*;

use super::fields;
use super::state::Editor;

/// Whether a request gives the `mooncake` block as is (no
/// `mooncake_mode`): the form's Mooncake fields cannot show it
/// (`deploy::block_as_fields` splits every block they can), so it is shown
/// among the other fields.
pub fn block_as_is(request: &Value) -> bool {
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
pub fn OtherFields(ed: Editor) -> impl IntoView {
    let others = Memo::new(move |_| ed.state.with(hidden_values));
    move || {
        others.with(|o| {
            (!o.is_empty()).then(|| {
                view! {
                    <fieldset class="section other-fields" data-path="mooncake">
                        <legend>"Other fields"</legend>
                        <p class="hint">"No form field edits these; they are sent as shown. Change them in the JSON view. (A mooncake block is here when the form's fields would build another one from it: a split mode without proxy.image, a store mode without store.enabled, ...)"</p>
                        <pre>{Value::Object(o.clone()).to_json_pretty()}</pre>
                    </fieldset>
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    fn hidden(request: &str) -> String {
        Value::Object(hidden_values(&parse(request).unwrap())).to_json()
    }

    #[test]
    fn values_a_field_shows_are_not_other_fields() {
        assert_eq!(
            hidden(
                r#"{"endpoint_name": "x", "image": "i", "mooncake_mode": "both", "prefill_replicas": 2}"#
            ),
            "{}"
        );
    }

    #[test]
    fn every_value_no_field_shows_is_listed_by_its_path() {
        assert_eq!(
            hidden(
                r#"{"endpoint_name": "x", "prefil": 2, "mooncake_transfer": {"protocol": "tcp", "bootstrap_base_port": 9000}}"#
            ),
            r#"{"prefil": 2, "mooncake_transfer.bootstrap_base_port": 9000}"#
        );
    }

    #[test]
    fn a_block_given_as_is_is_listed_and_one_beside_a_mode_is_not() {
        let block = r#""mooncake": {"mode": "both", "topology": {"prefill": 1, "decode": 1}}"#;
        assert!(block_as_is(&parse(&format!("{{{block}}}")).unwrap()));
        assert_eq!(
            hidden(&format!("{{{block}}}")),
            r#"{"mooncake": {"mode": "both", "topology": {"prefill": 1, "decode": 1}}}"#
        );
        // The mode wins; deploy warns at the block it ignores.
        assert_eq!(
            hidden(&format!(r#"{{"mooncake_mode": "both", {block}}}"#)),
            "{}"
        );
    }
}
