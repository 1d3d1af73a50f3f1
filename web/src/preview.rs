//! The Preview panel: what GCO's monitor will create in each target region,
//! and the `gco inference` commands for the same deploy, both from the
//! core and both following every edit.

use gco_spec::commands::{Commands, deploy_commands};
use gco_spec::json::{Object, Value};
use gco_spec::plan::{Action, Plan, PlanError, plan_deployment};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::editor::state::Editor;

/// Settings shown as the exact text the pods get, not as a value.
const CONFIG_TEXTS: [&str; 2] = ["kv_transfer_config", "mooncake.json"];

type Preview = Option<(Result<Vec<Plan>, PlanError>, Commands)>;

#[component]
pub fn PreviewPanel(ed: Editor) -> impl IntoView {
    let preview = Memo::new(move |_| -> Preview {
        ed.check.with(|c| {
            c.deployment
                .as_ref()
                .map(|d| (plan_deployment(d), deploy_commands(d)))
        })
    });
    // Open beside the form; on a narrow screen, where it would push the
    // form down, closed until asked for.
    let wide = window()
        .match_media("(min-width: 901px)")
        .ok()
        .flatten()
        .is_some_and(|m| m.matches());
    view! {
        <details class="preview" open=wide>
            <summary><h2 id="preview-title">"Preview"</h2></summary>
            {move || match preview.get() {
                None => view! {
                    <p class="muted">"Fix the errors to see what GCO will create."</p>
                }.into_any(),
                Some((plans, commands)) => view! {
                    <CliCommands commands/>
                    {match plans {
                        Err(e) => view! { <p class="error"><code>{e.path}</code>" "{e.message}</p> }.into_any(),
                        Ok(plans) if plans.is_empty() => view! {
                            <p class="muted">"Name target regions to see each region's objects."</p>
                        }.into_any(),
                        Ok(plans) => plans.into_iter().enumerate().map(|(i, p)| view! {
                            <RegionPlan plan=p open=i == 0/>
                        }).collect_view().into_any(),
                    }}
                }.into_any(),
            }}
        </details>
    }
}

/// Commands with their notes and a copy button.
#[component]
pub fn CliCommands(commands: Commands) -> impl IntoView {
    let copied = RwSignal::new(None::<String>);
    let text = commands.lines.join("\n");
    let count = commands.lines.len();
    let copy = {
        let text = text.clone();
        move |_| {
            let text = text.clone();
            spawn_local(async move {
                let written = window().navigator().clipboard().write_text(&text);
                let note = match wasm_bindgen_futures::JsFuture::from(written).await {
                    Ok(_) => format!(
                        "Copied {count} command{}.",
                        if count == 1 { "" } else { "s" }
                    ),
                    Err(_) => {
                        "The browser did not allow copying; select the commands instead.".to_owned()
                    }
                };
                let _ = copied.try_set(Some(note));
            });
        }
    };
    view! {
        <div class="cli">
            <div class="cli-head">
                <h3>"GCO CLI"</h3>
                <button type="button" on:click=copy>"Copy as CLI"</button>
                <span role="status" class="muted">{move || copied.get()}</span>
            </div>
            <pre class="commands" aria-label="gco inference commands">{text}</pre>
            <ul class="messages">
                {commands.notes.into_iter().map(|n| view! {
                    <li class="warning"><code>{n.path}</code>" "{n.message}</li>
                }).collect_view()}
            </ul>
        </div>
    }
}

#[component]
fn RegionPlan(plan: Plan, open: bool) -> impl IntoView {
    let count = plan.objects.len();
    view! {
        <details class="region-plan" open=open data-region=plan.region.clone()>
            <summary>
                <strong>{plan.region.clone()}</strong>
                {format!(" · namespace {} · {count} objects", plan.namespace)}
            </summary>
            <ul class="tree">
                {plan.objects.into_iter().map(|o| {
                    let action = (o.action != Action::Apply).then(|| o.action.as_str().replace('_', " "));
                    view! {
                        <li class="object">
                            <span class="kind">{o.kind.as_str()}</span>" "<code class="name">{o.name}</code>
                            {action.map(|a| view! { <span class="badge">{a}</span> })}
                            {o.shared.then(|| view! { <span class="badge">"shared"</span> })}
                            {settings(o.settings)}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </details>
    }
}

/// Settings as one definition list: nested values under dotted keys, so
/// the narrow panel never nests grids; the config texts verbatim.
fn settings(settings: Object) -> impl IntoView {
    let mut rows = Vec::new();
    flatten(String::new(), &Value::Object(settings), &mut rows);
    view! {
        <dl class="settings">
            {rows.into_iter().map(|(key, value)| match value {
                Row::Config(text) => view! {
                    <dt class="wide">{key.clone()}</dt>
                    <dd class="wide"><pre class="config" data-setting=key>{text}</pre></dd>
                }.into_any(),
                Row::Text(text) => view! { <dt>{key}</dt><dd><code>{text}</code></dd> }.into_any(),
            }).collect_view()}
        </dl>
    }
}

enum Row {
    Text(String),
    /// A config file or flag value, shown as the exact text.
    Config(String),
}

fn flatten(key: String, value: &Value, rows: &mut Vec<(String, Row)>) {
    let join = |k: &str| {
        if key.is_empty() {
            k.to_owned()
        } else {
            format!("{key}.{k}")
        }
    };
    match value {
        Value::Object(o) if !o.is_empty() => {
            for (k, v) in o.str_entries() {
                let k = k.to_string_lossy();
                match v {
                    Value::Str(s) if CONFIG_TEXTS.contains(&k.as_str()) => {
                        rows.push((join(&k), Row::Config(s.to_string_lossy())));
                    }
                    other => flatten(join(&k), other, rows),
                }
            }
        }
        Value::List(items)
            if items
                .iter()
                .any(|i| matches!(i, Value::Object(_) | Value::List(_))) =>
        {
            for (i, item) in items.iter().enumerate() {
                flatten(format!("{key}[{i}]"), item, rows);
            }
        }
        Value::List(items) => rows.push((
            key,
            Row::Text(items.iter().map(scalar).collect::<Vec<_>>().join(" ")),
        )),
        other => rows.push((key, Row::Text(scalar(other)))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string_lossy(),
        other => other.to_json(),
    }
}
