//! The topology picture: X prefill -> PD proxy -> Y decode, and the KV store
//! with its tiers, editable in place. Large counts are drawn as groups, so
//! 1000 x 1000 costs the same as 2 x 2.

use gco_spec::json::Value;
use gco_spec::limits::{MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN};
use gco_spec::{Mode, format_byte_size};
use leptos::prelude::*;

use crate::editor::state::Editor;
use crate::paths;

/// Instances drawn one by one; beyond this a group shows a few and a count.
const DRAWN: i64 = 6;

fn count(ed: &Editor, key: &'static str) -> Option<i64> {
    ed.state.with(|s| match paths::get(s, &[key]) {
        None => Some(1),
        Some(v) => v.as_int().and_then(|i| i.as_i64()),
    })
}

fn text_at(ed: &Editor, path: &[&str]) -> String {
    ed.state.with(|s| paths::display(paths::get(s, path)))
}

#[component]
fn Group(ed: Editor, role: &'static str, key: &'static str, label: &'static str) -> impl IntoView {
    let n = move || count(&ed, key);
    let set = move |v: i64| {
        ed.set_field(
            &[key],
            Some(Value::int(
                v.clamp(MOONCAKE_TOPOLOGY_MIN, MOONCAKE_TOPOLOGY_MAX),
            )),
        )
    };
    let range = move || {
        let enabled = ed.state.with(|s| {
            paths::get(s, &["mooncake_autoscaling", "enabled"]).is_some_and(Value::is_true)
        });
        let min = text_at(&ed, &["mooncake_autoscaling", role, "min_replicas"]);
        let max = text_at(&ed, &["mooncake_autoscaling", role, "max_replicas"]);
        (enabled && !(min.is_empty() && max.is_empty())).then(|| {
            let min = if min.is_empty() { "1".into() } else { min };
            let max = if max.is_empty() { "?".into() } else { max };
            format!("autoscales {min} to {max}")
        })
    };
    let input_id = format!("topo-{role}");
    view! {
        <div class=format!("group {role}")>
            <div class="nodes" aria-hidden="true">
                {move || {
                    let n = n().unwrap_or(0).max(0);
                    let shown = if n > DRAWN { DRAWN - 2 } else { n };
                    let mut boxes: Vec<_> = (0..shown).map(|_| view! { <span class="node"></span> }.into_any()).collect();
                    if n > DRAWN {
                        boxes.push(view! { <span class="more">{format!("… {n} in all")}</span> }.into_any());
                    }
                    boxes
                }}
            </div>
            <div class="stepper">
                <button type="button" aria-label=format!("Remove a {role} instance")
                    on:click=move |_| set(n().unwrap_or(1) - 1)>"−"</button>
                <label for=input_id.clone()>{label}</label>
                <input id=input_id type="number" min="1" max="1000"
                    prop:value=move || n().map(|v| v.to_string()).unwrap_or_default()
                    on:input=move |ev| ed.set_field(&[key], paths::typed_number(&event_target_value(&ev)))/>
                <button type="button" aria-label=format!("Add a {role} instance")
                    on:click=move |_| set(n().unwrap_or(0) + 1)>"+"</button>
            </div>
            {move || range().map(|r| view! { <p class="range">{r}</p> })}
        </div>
    }
}

#[component]
pub fn Topology(ed: Editor) -> impl IntoView {
    let mode = move || {
        ed.state.with(|s| {
            paths::get(s, &["mooncake_mode"])
                .and_then(Value::as_str)
                .and_then(Mode::parse)
        })
    };
    let store_on = move || {
        mode().is_some_and(Mode::has_store)
            || ed
                .state
                .with(|s| paths::get(s, &["mooncake_store", "enabled"]).is_some_and(Value::is_true))
    };
    let size = move |field: &'static str, default: &'static str| {
        let text = text_at(&ed, &["mooncake_store", field]);
        format_byte_size(if text.is_empty() { default } else { &text }).unwrap_or(text)
    };
    let tiers = move || {
        let mut tiers = vec![format!(
            "memory: {} segment, {} buffer",
            size(
                "global_segment_size",
                gco_spec::limits::MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE
            ),
            size(
                "local_buffer_size",
                gco_spec::limits::MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE
            )
        )];
        let offload = text_at(&ed, &["mooncake_store", "offload"]);
        if !offload.is_empty() && offload != "none" {
            tiers.push(format!("offload: {offload}"));
        }
        if ed.state.with(|s| {
            paths::get(s, &["mooncake_store", "cold_tier_enabled"]).is_some_and(Value::is_true)
        }) {
            tiers.push("cold tier: object store".into());
        }
        tiers
    };
    let label = move || match (
        mode(),
        count(&ed, "prefill_replicas"),
        count(&ed, "decode_replicas"),
    ) {
        (Some(m), Some(p), Some(d))
            if m.is_split()
                && [p, d]
                    .iter()
                    .all(|n| (MOONCAKE_TOPOLOGY_MIN..=MOONCAKE_TOPOLOGY_MAX).contains(n)) =>
        {
            format!("{p}p{d}d")
        }
        (Some(Mode::Store), ..) => "single store instance".into(),
        (Some(_), ..) => "invalid counts".into(),
        (None, ..) => "plain endpoint".into(),
    };
    view! {
        <section class="topology" aria-labelledby="topology-title">
            <h2 id="topology-title">"Topology " <span class="badge">{label}</span></h2>
            {move || match mode() {
                None => view! { <p class="muted">"Choose a Mooncake mode to serve with disaggregated prefill and decode or a KV store."</p> }.into_any(),
                Some(Mode::Store) => view! {
                    <div class="flow"><div class="group store-role"><div class="nodes"><span class="node"></span></div><p>"store instance"</p></div></div>
                }.into_any(),
                Some(_) => view! {
                    <div class="flow">
                        <Group ed=ed role="prefill" key="prefill_replicas" label="Prefill count"/>
                        <div class="proxy" aria-label="PD proxy"><span>"PD proxy"</span></div>
                        <Group ed=ed role="decode" key="decode_replicas" label="Decode count"/>
                    </div>
                }.into_any(),
            }}
            <Show when=store_on>
                <div class="kv">
                    <strong>"KV store"</strong>
                    <ul>{move || tiers().into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
                </div>
            </Show>
        </section>
    }
}
