//! The Preview panel: what GCO's monitor will create in each target region,
//! and the `gco inference` commands for the same deploy, both from the
//! core and both following every edit.

use gco_spec::DeployCheck;
use gco_spec::commands::{Commands, deploy_commands};
use gco_spec::json::{Object, Value};
use gco_spec::plan::{Action as PlanAction, Plan, PlanError, plan_deployment};
use leptos::prelude::*;
use leptos::task::spawn_local;

/// Settings shown as the exact text the pods get, not as a value.
const CONFIG_TEXTS: [&str; 2] = ["kv_transfer_config", "mooncake.json"];

type Preview = Option<(Result<Vec<Plan>, PlanError>, Commands)>;

#[component]
pub fn PreviewPanel(request: RwSignal<Value>, check: Memo<DeployCheck>) -> impl IntoView {
    let preview = Memo::new(move |_| -> Preview {
        check.with(|c| {
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
                            <RegionPlan request=request plan=p open=i == 0/>
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
    // No command does it (regions: GCO's CLI has no add-region): the box
    // says so, with why, rather than stand empty.
    let none = (count == 0).then(|| {
        let why: Vec<&str> = commands.notes.iter().map(|n| n.message.as_str()).collect();
        if why.is_empty() {
            "# no gco inference command makes this change".to_owned()
        } else {
            format!(
                "# no gco inference command makes this change: {}",
                why.join("; ")
            )
        }
    });
    let sizes = size_notes(&commands.lines);
    let copy = {
        let text = text.clone();
        move |_| {
            let text = text.clone();
            spawn_local(async move {
                let note = if crate::browser::copy(&text).await {
                    format!(
                        "Copied {count} command{}.",
                        if count == 1 { "" } else { "s" }
                    )
                } else {
                    "The browser did not allow copying; select the commands instead.".to_owned()
                };
                let _ = copied.try_set(Some(note));
            });
        }
    };
    view! {
        <div class="cli">
            <div class="cli-head">
                <h3>"GCO CLI"</h3>
                <button type="button" on:click=copy disabled=none.is_some()>"Copy as CLI"</button>
                <span role="status" class="muted">{move || copied.get()}</span>
            </div>
            <pre class="commands" class:no-command=none.is_some() aria-label="gco inference commands">{none.clone().unwrap_or(text)}</pre>
            <ul class="messages size-notes">{sizes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
            <ul class="messages">
                {commands.notes.into_iter().map(|n| view! {
                    <li class="warning"><code>{n.path}</code>" "{n.message}</li>
                }).collect_view()}
            </ul>
        </div>
    }
}

/// The Kubernetes objects GCO's monitor applies in one region, as YAML to
/// copy or download. The backend renders them (`POST /api/manifests`,
/// typed Kubernetes objects that the console's wasm need not carry).
#[component]
fn Manifests(request: RwSignal<Value>, region: String) -> impl IntoView {
    let note = RwSignal::new(None::<String>);
    // The backend's answer; the last one stays on screen while another
    // loads.
    let manifests = Action::new_local(|body: &Value| {
        let body = body.clone();
        async move {
            crate::api::call(
                crate::api::Method::POST,
                gco_api::route::MANIFESTS,
                Some(&body),
                crate::api::Condition::None,
            )
            .await
        }
    });
    let region_for_load = region.clone();
    let load = move |_| {
        let mut body = Object::new();
        body.insert("document", request.get_untracked());
        body.insert("region", region_for_load.as_str());
        manifests.dispatch(Value::Object(body));
    };
    let file = format!(
        "{}-{region}.yaml",
        crate::paths::display(
            request
                .with_untracked(|s| crate::paths::get(s, &["endpoint_name"]).cloned())
                .as_ref()
        )
    );
    view! {
        <div class="manifests">
            <button type="button" on:click=load>"Manifests (YAML)"</button>
            {move || manifests.value().get().map(|a| match a.and_then(yaml_of) {
                Err(e) => view! { <p class="error" role="alert">{format!("No manifests: {e}")}</p> }.into_any(),
                Ok((yaml, notes)) => {
                    let copy_text = yaml.clone();
                    let href = format!("data:application/yaml;charset=utf-8,{}", gco_api::route::encode_segment(&yaml));
                    view! {
                        <div class="row">
                            <button type="button" on:click=move |_| {
                                let text = copy_text.clone();
                                spawn_local(async move {
                                    let copied = crate::browser::copy(&text).await;
                                    let _ = note.try_set(Some(if copied { "Copied." } else { "The browser did not allow copying." }.to_owned()));
                                });
                            }>"Copy YAML"</button>
                            <a class="button" href=href download=file.clone()>"Download"</a>
                            <span class="muted" role="status">{move || note.get()}</span>
                        </div>
                        <ul class="messages">{notes.into_iter().map(|n| view! { <li class="warning">{n}</li> }).collect_view()}</ul>
                        <pre class="config yaml" aria-label="Kubernetes manifests">{yaml}</pre>
                    }.into_any()
                }
            })}
        </div>
    }
}

/// The YAML and notes in a `POST /api/manifests` answer, or why not.
fn yaml_of(r: crate::api::Reply) -> Result<(String, Vec<String>), String> {
    if !r.ok() {
        return Err(r
            .diagnostics()
            .first()
            .map_or_else(|| r.summary(), |d| d.to_string()));
    }
    let yaml = crate::paths::display(crate::paths::get(&r.body, &["yaml"]));
    let notes = match crate::paths::get(&r.body, &["notes"]) {
        Some(Value::List(items)) => items
            .iter()
            .map(|n| crate::paths::display(Some(n)))
            .collect(),
        _ => Vec::new(),
    };
    Ok((yaml, notes))
}

/// Byte sizes in the commands, in human units (`--global-segment-size
/// 8589934592 = 8 GiB`): the flags take bytes only.
fn size_notes(lines: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0].ends_with("-size")
                && let Some(human) = gco_spec::format_byte_size(pair[1].trim_matches('\''))
            {
                notes.push(format!("{} {} = {human}", pair[0], pair[1]));
            }
        }
    }
    notes
}

#[component]
fn RegionPlan(request: RwSignal<Value>, plan: Plan, open: bool) -> impl IntoView {
    let count = plan.objects.len();
    let region = plan.region.clone();
    view! {
        <details class="region-plan" open=open data-region=plan.region.clone()>
            <summary>
                <strong>{plan.region.clone()}</strong>
                {format!(" · namespace {} · {count} objects", plan.namespace)}
            </summary>
            <Manifests request=request region=region/>
            <ul class="tree">
                {plan.objects.into_iter().map(|o| {
                    let action = (o.action != PlanAction::Apply).then(|| o.action.as_str().replace('_', " "));
                    view! {
                        <li class="object">
                            <span class="kind">{o.kind.as_str()}</span>" "<code class="name">{o.name}</code>
                            {action.map(|a| view! { <span class="badge">{a}</span> })}
                            {o.shared.then(|| view! { <span class="badge">"shared"</span> })}
                            {o.base_pass.then(|| view! {
                                <span class="badge" title="GCO's base pass keeps it in the namespace; the monitor never changes it">"base pass"</span>
                            })}
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
