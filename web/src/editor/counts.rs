//! The editor's topology picture (`topology.rs` draws it) and its count
//! boxes, which step the request's prefill and decode counts.

use gco_spec::json::Value;
use gco_spec::limits::{MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN};
use leptos::prelude::*;

use super::state::Editor;
use crate::paths;
use crate::topology::{Picture, Shape};

/// The picture of the request, its counts stepped here.
#[component]
pub fn Topology(ed: Editor) -> impl IntoView {
    let shape = Memo::new(move |_| ed.state.with(Shape::of_request));
    // A block given as is has no count fields to step.
    let fields = Memo::new(move |_| {
        ed.state.with(|s| {
            paths::get(s, &["mooncake_mode"]).is_some() || paths::get(s, &["mooncake"]).is_none()
        })
    });
    let stepper = move |role: &'static str, key: &'static str, label: &'static str| -> ViewFn {
        (move || view! { <CountBox ed=ed role=role key=key label=label/> }).into()
    };
    move || {
        if fields.get() {
            let steppers = (
                stepper("prefill", "prefill_replicas", "Prefill count"),
                stepper("decode", "decode_replicas", "Decode count"),
            );
            view! { <Picture shape=shape.into() steppers=steppers/> }.into_any()
        } else {
            view! { <Picture shape=shape.into()/> }.into_any()
        }
    }
}

/// A count box that keeps what was typed: clearing it and typing 8 gives
/// 8; an empty or invalid box is an error at the box (its messages below
/// it), never replaced by a default.
#[component]
fn CountBox(
    ed: Editor,
    role: &'static str,
    key: &'static str,
    label: &'static str,
) -> impl IntoView {
    let diag = if role == "prefill" {
        "mooncake.topology.prefill"
    } else {
        "mooncake.topology.decode"
    };
    let current = move || ed.state.with(|s| paths::get(s, &[key]).cloned());
    let shown = |v: Option<Value>| v.map_or_else(|| "1".to_owned(), |v| paths::display(Some(&v)));
    let text = RwSignal::new(shown(current()));
    let written = StoredValue::new(current());
    Effect::new(move |_| {
        let now = current();
        if now != written.get_value() {
            written.set_value(now.clone());
            text.set(shown(now));
        }
    });
    let write = move |v: Option<Value>| {
        written.set_value(v.clone());
        ed.set_field(&[key], v);
    };
    let typed = move |t: String| {
        text.set(t.clone());
        write(Some(paths::count_text(&t)));
    };
    let step = move |by: i64| {
        let now = current()
            .as_ref()
            .map_or(Some(1), |v| v.as_int().and_then(|i| i.as_i64()))
            .unwrap_or(1);
        let next = (now + by).clamp(MOONCAKE_TOPOLOGY_MIN, MOONCAKE_TOPOLOGY_MAX);
        text.set(next.to_string());
        write(Some(Value::int(next)));
    };
    let messages = move || ed.messages(diag);
    let invalid = move || messages().iter().any(|d| d.is_error());
    // At a bound the step that would pass it is disabled, not a no-op.
    let count = move || current().map_or(Some(1), |v| v.as_int().and_then(|i| i.as_i64()));
    let at_min = move || count().is_some_and(|n| n <= MOONCAKE_TOPOLOGY_MIN);
    let at_max = move || count().is_some_and(|n| n >= MOONCAKE_TOPOLOGY_MAX);
    let input_id = format!("topo-{role}");
    let msg_id = format!("{input_id}-msg");
    view! {
        <div class="stepper" class:invalid=invalid>
            <button type="button" aria-label=format!("Remove a {role} instance") disabled=at_min on:click=move |_| step(-1)>"−"</button>
            <label for=input_id.clone()>{label}</label>
            <input id=input_id type="text" inputmode="numeric" autocomplete="off" aria-describedby=msg_id.clone()
                aria-invalid=move || invalid().to_string()
                prop:value=move || text.get() on:input=move |ev| typed(event_target_value(&ev))/>
            <button type="button" aria-label=format!("Add a {role} instance") disabled=at_max on:click=move |_| step(1)>"+"</button>
        </div>
        <ul class="messages" id=msg_id aria-live="polite">
            {move || messages().into_iter().filter(|d| d.is_error()).map(|d| view! { <li class="error">{d.message}</li> }).collect_view()}
        </ul>
    }
}
