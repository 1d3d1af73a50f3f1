//! One endpoint: its record and its actions. Every change is previewed
//! (old against new, field by field, computed by the core's own operation)
//! before it is sent with the version it was computed from; a 412 offers to
//! reload and re-apply.

use gco_spec::diff::diff;
use gco_spec::json::{Object, Value};
use gco_spec::{
    Change, DesiredState, Record, apply, change_commands, parse_byte_size, spec::spec_mode,
};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::paths;
use crate::preview::CliCommands;
use crate::route::{Link, Page};

#[derive(Clone)]
struct Loaded {
    record: Record,
    etag: Option<String>,
}

/// A change under review: what it does, and its preview.
#[derive(Clone)]
struct Pending {
    title: String,
    change: Change,
    lines: Vec<(String, String, String)>,
}

fn request_for(name: &str, change: &Change) -> (gloo_net::http::Method, String, Option<Value>) {
    let base = format!("/api/endpoints/{}", api::segment(name));
    let body = |pairs: &[(&str, Value)]| {
        let mut o = Object::new();
        for (k, v) in pairs {
            o.insert(k, v.clone());
        }
        Some(Value::Object(o))
    };
    match change {
        Change::SetTopology { prefill, decode } => (
            gloo_net::http::Method::PUT,
            format!("{base}/topology"),
            body(&[("prefill", prefill.clone()), ("decode", decode.clone())]),
        ),
        Change::ConfigureStore { store } => (
            gloo_net::http::Method::PUT,
            format!("{base}/store"),
            Some(store.clone()),
        ),
        Change::UpdateImage { image } => (
            gloo_net::http::Method::PUT,
            format!("{base}/image"),
            body(&[("image", image.clone())]),
        ),
        Change::Scale { replicas } => (
            gloo_net::http::Method::PUT,
            format!("{base}/replicas"),
            body(&[("replicas", replicas.clone())]),
        ),
        Change::AddRegion { region, .. } => (
            gloo_net::http::Method::POST,
            format!("{base}/regions"),
            body(&[("region", region.clone())]),
        ),
        Change::RemoveRegion { region } => (
            gloo_net::http::Method::DELETE,
            format!(
                "{base}/regions/{}",
                api::segment(&paths::display(Some(region)))
            ),
            None,
        ),
        Change::Stop => (gloo_net::http::Method::POST, format!("{base}/stop"), None),
        Change::Start => (gloo_net::http::Method::POST, format!("{base}/start"), None),
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            let mut url = base;
            if let (Some((key, value)), Some(id)) = (expected_owner_label, expected_lifecycle_id) {
                url.push_str(&format!(
                    "?owner_label={}&lifecycle_id={}",
                    api::segment(&format!("{key}={value}")),
                    api::segment(id)
                ));
            }
            (gloo_net::http::Method::DELETE, url, None)
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => {
            let mut o = Object::new();
            o.insert("image", image.clone());
            if let Some(weight) = weight {
                o.insert("weight", weight.clone());
            }
            if let Some(replicas) = replicas {
                o.insert("replicas", replicas.clone());
            }
            (
                gloo_net::http::Method::POST,
                format!("{base}/canary"),
                Some(Value::Object(o)),
            )
        }
        Change::PromoteCanary => (
            gloo_net::http::Method::POST,
            format!("{base}/canary/promote"),
            None,
        ),
        Change::RollbackCanary => (
            gloo_net::http::Method::POST,
            format!("{base}/canary/rollback"),
            None,
        ),
    }
}

/// The change as the core would apply it: the preview lines, or why not.
fn preview(record: &Record, change: &Change) -> Result<Vec<(String, String, String)>, String> {
    // Placeholder tokens: the server mints the real ones.
    let next =
        apply(record, change, &record.updated_at, &mut || "0".repeat(64)).map_err(|e| e.message)?;
    let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "—".to_owned(), Value::to_json);
    Ok(diff(&record.to_value(), &next.to_value())
        .into_iter()
        .filter(|d| d.path != "updated_at" && !d.path.starts_with("region_generations"))
        .map(|d| (d.path, show(&d.old), show(&d.new)))
        .collect())
}

fn number(text: &str) -> Value {
    paths::typed_number(text).unwrap_or(Value::Null)
}

#[component]
pub fn EndpointPage(name: String) -> impl IntoView {
    let loaded = RwSignal::new(None::<Loaded>);
    let load_error = RwSignal::new(None::<String>);
    let pending = RwSignal::new(None::<Pending>);
    let outcome = RwSignal::new(None::<(bool, String)>);
    let stale = RwSignal::new(false);
    let sending = RwSignal::new(false);
    let name = StoredValue::new(name);

    let reload = move |then: Option<Change>| {
        let n = name.get_value();
        spawn_local(async move {
            match api::get(&format!("/api/endpoints/{}", api::segment(&n))).await {
                Ok(r) if r.ok() => match Record::from_value(&r.body) {
                    Ok(record) => {
                        if let Some(change) = then {
                            match preview(&record, &change) {
                                Ok(lines) => {
                                    let _ = pending.try_update(|p| {
                                        if let Some(p) = p {
                                            p.lines = lines;
                                        }
                                    });
                                }
                                Err(e) => {
                                    let _ = pending.try_set(None);
                                    let _ = outcome.try_set(Some((false, e)));
                                }
                            }
                        }
                        let _ = loaded.try_set(Some(Loaded {
                            record,
                            etag: r.etag,
                        }));
                        let _ = load_error.try_set(None);
                    }
                    Err(e) => {
                        let _ = load_error.try_set(Some(e.to_string()));
                    }
                },
                Ok(r) => {
                    let _ = load_error.try_set(Some(r.summary()));
                }
                Err(e) => {
                    let _ = load_error.try_set(Some(e));
                }
            }
        });
    };
    reload(None);

    let review = move |title: &str, change: Change| {
        outcome.set(None);
        stale.set(false);
        let Some(l) = loaded.get_untracked() else {
            return;
        };
        match preview(&l.record, &change) {
            Ok(lines) => {
                pending.set(Some(Pending {
                    title: title.to_owned(),
                    change,
                    lines,
                }));
                // The review opens at the top: bring it to where the user is.
                request_animation_frame(|| {
                    if let Some(el) = document().get_element_by_id("review-title") {
                        el.scroll_into_view();
                    }
                });
            }
            Err(e) => {
                pending.set(None);
                outcome.set(Some((false, e)));
            }
        }
    };

    let send = move |_| {
        let (Some(p), Some(l)) = (pending.get_untracked(), loaded.get_untracked()) else {
            return;
        };
        let (method, path, body) = request_for(&l.record.endpoint_name, &p.change);
        let _ = sending.try_set(true);
        spawn_local(async move {
            let condition = l
                .etag
                .as_deref()
                .map_or(api::Condition::None, api::Condition::IfMatch);
            match api::call(method, &path, body.as_ref(), condition).await {
                Ok(r) if r.ok() => {
                    let _ = pending.try_set(None);
                    let _ = outcome.try_set(Some((true, format!("{}: done.", p.title))));
                    if let Ok(record) = Record::from_value(&r.body) {
                        let _ = loaded.try_set(Some(Loaded {
                            record,
                            etag: r.etag,
                        }));
                    }
                }
                Ok(r) if r.status == 412 => {
                    let _ = stale.try_set(true);
                }
                Ok(r) => {
                    let detail: Vec<String> =
                        r.diagnostics().into_iter().map(|d| d.to_string()).collect();
                    let text = if detail.is_empty() {
                        r.summary()
                    } else {
                        detail.join("; ")
                    };
                    let _ = outcome.try_set(Some((false, text)));
                }
                Err(e) => {
                    let _ = outcome.try_set(Some((false, e)));
                }
            }
            let _ = sending.try_set(false);
        });
    };

    let topo_p = RwSignal::new(String::new());
    let topo_d = RwSignal::new(String::new());
    let image = RwSignal::new(String::new());
    let replicas = RwSignal::new(String::new());
    let region = RwSignal::new(String::new());
    let store_enabled = RwSignal::new(true);
    let store_cold = RwSignal::new(false);
    let store_gss = RwSignal::new(String::new());
    let store_lbs = RwSignal::new(String::new());
    let store_offload = RwSignal::new(String::new());

    // Action inputs start from the endpoint's current values.
    Effect::new(move |_| {
        let Some(l) = loaded.get() else { return };
        let spec = &l.record.spec;
        let at = |path: &[&str]| {
            paths::display(
                path.split_first()
                    .and_then(|(k, rest)| paths::get(spec.get(k)?, rest)),
            )
        };
        topo_p.set(at(&["mooncake", "topology", "prefill"]));
        topo_d.set(at(&["mooncake", "topology", "decode"]));
        image.set(at(&["image"]));
        replicas.set(at(&["replicas"]));
        let store = |k: &str| {
            spec.get("mooncake")
                .and_then(|m| paths::get(m, &["store", k]))
                .cloned()
        };
        store_enabled.set(store("enabled").is_some_and(|v| v.is_true()));
        store_cold.set(store("cold_tier_enabled").is_some_and(|v| v.is_true()));
        let size = |k: &str| {
            let text = paths::display(store(k).as_ref());
            gco_spec::format_byte_size(&text).unwrap_or(text)
        };
        store_gss.set(size("global_segment_size"));
        store_lbs.set(size("local_buffer_size"));
        store_offload.set(paths::display(store("offload").as_ref()));
    });

    let store_settings = move || {
        let mut o = Object::new();
        if store_enabled.get_untracked() {
            o.insert("enabled", true);
        }
        for (key, text) in [
            ("global_segment_size", store_gss.get_untracked()),
            ("local_buffer_size", store_lbs.get_untracked()),
        ] {
            if !text.trim().is_empty() {
                o.insert(key, parse_byte_size(&text).unwrap_or(text));
            }
        }
        if store_cold.get_untracked() {
            o.insert("cold_tier_enabled", true);
        }
        let offload = store_offload.get_untracked();
        if !offload.is_empty() {
            o.insert("offload", offload);
        }
        Value::Object(o)
    };

    let text_input = |id: &'static str, label: &'static str, sig: RwSignal<String>| {
        view! {
            <div class="field">
                <label for=id>{label}</label>
                <input id=id type="text" autocomplete="off" prop:value=move || sig.get() on:input=move |ev| sig.set(event_target_value(&ev))/>
            </div>
        }
    };

    view! {
        <div class="endpoint">
            <header class="page-head">
                <h1>{move || name.get_value()}</h1>
                <div class="toolbar">
                    <Link to=Page::List><span class="button">"All endpoints"</span></Link>
                    <button type="button" on:click=move |_| reload(None)>"Reload"</button>
                </div>
            </header>
            {move || load_error.get().map(|e| view! { <p class="banner error" role="alert">{format!("Could not load the endpoint: {e}")}</p> })}
            {move || outcome.get().map(|(ok, text)| view! { <p class=if ok { "banner ok" } else { "banner error" } role="status">{text}</p> })}
            {move || pending.get().map(|p| view! {
                <section class="review" aria-labelledby="review-title">
                    <h2 id="review-title">{format!("Review: {}", p.title)}</h2>
                    {if p.lines.is_empty() {
                        view! { <p class="muted">"This change leaves the record as it is."</p> }.into_any()
                    } else {
                        view! {
                            <table class="diff">
                                <thead><tr><th>"Field"</th><th>"Now"</th><th>"After"</th></tr></thead>
                                <tbody>{p.lines.iter().map(|(f, o, n)| view! {
                                    <tr><td><code>{f.clone()}</code></td><td class="old">{o.clone()}</td><td class="new">{n.clone()}</td></tr>
                                }).collect_view()}</tbody>
                            </table>
                        }.into_any()
                    }}
                    {loaded.get_untracked().map(|l| view! { <CliCommands commands=change_commands(&l.record, &p.change)/> })}
                    <Show when=move || stale.get()>
                        <p class="banner error" role="alert">"Someone changed this endpoint since you loaded it; nothing was applied."</p>
                    </Show>
                    <div class="row">
                        <Show when=move || stale.get() fallback=move || view! {
                            <button type="button" class="primary" on:click=send disabled=move || sending.get()>"Apply"</button>
                        }>
                            <button type="button" class="primary" on:click=move |_| {
                                stale.set(false);
                                reload(pending.get_untracked().map(|p| p.change));
                            }>"Reload and re-apply"</button>
                        </Show>
                        <button type="button" on:click=move |_| { pending.set(None); stale.set(false); }>"Cancel"</button>
                    </div>
                </section>
            })}
            {move || match loaded.get() {
                None => view! { <p class="muted" role="status">"Loading…"</p> }.into_any(),
                Some(l) => {
                    let r = l.record.clone();
                    let split = spec_mode(&r.spec).is_some_and(|m| m.is_split());
                    let plain = !r.spec.contains_key("mooncake");
                    let stopped = r.desired_state == DesiredState::Stopped;
                    let deleted = r.desired_state == DesiredState::Deleted;
                    view! {
                        <div class="columns">
                            <section class="record">
                                <dl>
                                    <dt>"State"</dt><dd><span class=format!("state {}", r.desired_state)>{r.desired_state.to_string()}</span></dd>
                                    <dt>"Topology"</dt><dd>{r.topology_label().unwrap_or_else(|| "—".into())}</dd>
                                    <dt>"Image"</dt><dd><code>{paths::display(r.spec.get("image"))}</code></dd>
                                    <dt>"Regions"</dt><dd>{r.target_regions.iter().map(|g| {
                                        let g2 = g.clone();
                                        view! { <span class="chip">{g.clone()}
                                            <button type="button" class="link" aria-label=format!("Remove region {g}")
                                                on:click=move |_| review(&format!("remove region {g2}"), Change::RemoveRegion { region: Value::str(&g2) })>"×"</button>
                                        </span> }
                                    }).collect_view()}</dd>
                                    <dt>"Updated"</dt><dd>{r.updated_at.clone()}</dd>
                                </dl>
                                <h2>"Spec"</h2>
                                <pre class="spec">{Value::Object(r.spec.clone()).to_json_pretty()}</pre>
                            </section>
                            <aside class="actions">
                                <Show when=move || deleted>
                                    <p class="banner">"This endpoint is deleted: GCO's monitors are removing it. Redeploy it under its name once they are done."</p>
                                </Show>
                                <Show when=move || !deleted>
                                <Show when=move || split>
                                    <form class="action" on:submit=move |ev| { ev.prevent_default();
                                        review("set topology", Change::SetTopology { prefill: number(&topo_p.get_untracked()), decode: number(&topo_d.get_untracked()) }); }>
                                        <h3>"Set topology"</h3>
                                        {text_input("new-prefill", "New prefill count", topo_p)}
                                        {text_input("new-decode", "New decode count", topo_d)}
                                        <button type="submit">"Review topology"</button>
                                    </form>
                                </Show>
                                <Show when=move || !plain>
                                    <form class="action" on:submit=move |ev| { ev.prevent_default(); review("configure store", Change::ConfigureStore { store: store_settings() }); }>
                                        <h3>"Configure store"</h3>
                                        <div class="field check"><input id="store-enabled" type="checkbox" prop:checked=move || store_enabled.get()
                                            on:change=move |ev| store_enabled.set(event_target_checked(&ev))/><label for="store-enabled">"Store enabled"</label></div>
                                        {text_input("store-gss", "Global segment size", store_gss)}
                                        {text_input("store-lbs", "Local buffer size", store_lbs)}
                                        <div class="field check"><input id="store-cold" type="checkbox" prop:checked=move || store_cold.get()
                                            on:change=move |ev| store_cold.set(event_target_checked(&ev))/><label for="store-cold">"Cold tier"</label></div>
                                        <div class="field">
                                            <label for="store-offload">"Offload"</label>
                                            <select id="store-offload" prop:value=move || store_offload.get() on:change=move |ev| store_offload.set(event_target_value(&ev))>
                                                <option value="">"not set"</option><option value="cpu">"cpu"</option>
                                                <option value="disk">"disk"</option><option value="none">"none"</option>
                                            </select>
                                        </div>
                                        <button type="submit">"Review store"</button>
                                    </form>
                                </Show>
                                <form class="action" on:submit=move |ev| { ev.prevent_default(); review("update image", Change::UpdateImage { image: Value::from(image.get_untracked()) }); }>
                                    <h3>"Update image"</h3>
                                    {text_input("new-image", "New image", image)}
                                    <button type="submit">"Review image"</button>
                                </form>
                                <Show when=move || plain>
                                    <form class="action" on:submit=move |ev| { ev.prevent_default(); review("scale", Change::Scale { replicas: number(&replicas.get_untracked()) }); }>
                                        <h3>"Scale"</h3>
                                        {text_input("new-replicas", "Replicas", replicas)}
                                        <button type="submit">"Review scale"</button>
                                    </form>
                                </Show>
                                <form class="action" on:submit=move |ev| { ev.prevent_default();
                                    review("add region", Change::AddRegion { region: Value::from(region.get_untracked().trim().to_owned()) }); }>
                                    <h3>"Add region"</h3>
                                    {text_input("new-region", "Region", region)}
                                    <button type="submit">"Review region"</button>
                                </form>
                                <div class="action">
                                    <h3>"Lifecycle"</h3>
                                    <div class="row">
                                        {if stopped {
                                            view! { <button type="button" on:click=move |_| review("start", Change::Start)>"Start…"</button> }.into_any()
                                        } else {
                                            view! { <button type="button" on:click=move |_| review("stop", Change::Stop)>"Stop…"</button> }.into_any()
                                        }}
                                        <button type="button" class="danger" on:click=move |_| review("delete", Change::DELETE)>"Delete…"</button>
                                    </div>
                                </div>
                                </Show>
                            </aside>
                        </div>
                    }.into_any()
                }
            }}
        </div>
    }
}
