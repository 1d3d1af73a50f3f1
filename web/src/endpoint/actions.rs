//! The endpoint's actions, one component each. Inputs start from the
//! record and follow it while untouched; what the user typed stays when a
//! monitor's write (or anyone's) brings a newer record. A change the core
//! refuses is marked at its field, in the core's words.

use gco_api::CHANGES;
use gco_spec::json::{Object, Value};
use gco_spec::spec::spec_mode;
use gco_spec::{Change, DesiredState, Record, parse_byte_size};
use gco_spec::{ChangeKind, OffloadTier};
use leptos::prelude::*;

use super::{EndpointCtx, ctx};
use crate::editor::size_note;
use crate::paths;
use crate::team::Guard;

/// `spec` at `path`, as an input shows it.
fn text_at(record: &Record, path: &[&str]) -> String {
    let Some((first, rest)) = path.split_first() else {
        return String::new();
    };
    paths::display(record.spec.get(first).and_then(|v| paths::get(v, rest)))
}

/// A text input of a form: it starts from the record, follows it while the
/// user has not changed it, and shows the core's refusal at its paths.
#[component]
fn ActionField(
    form: &'static str,
    id: &'static str,
    label: &'static str,
    /// What the record holds for this field, as text.
    from_record: fn(&Record) -> String,
    value: RwSignal<String>,
    /// Diagnostic paths whose refusals belong here.
    paths: &'static [&'static str],
    #[prop(optional)] hint: Option<&'static str>,
    /// A line under the input describing what was typed (byte sizes).
    #[prop(optional)]
    describe: Option<fn(&str) -> Option<String>>,
) -> impl IntoView {
    let ctx = ctx();
    let synced = StoredValue::new(String::new());
    Effect::new(move |_| {
        let Some(now) = ctx.loaded().map(|l| from_record(&l.record)) else {
            return;
        };
        let untouched = value.get_untracked() == synced.get_value();
        synced.set_value(now.clone());
        if untouched {
            value.set(now);
        }
    });
    let message = move || {
        ctx.refusal(form)
            .filter(|d| paths.contains(&d.path.as_str()))
            .map(|d| d.message)
    };
    let msg_id = format!("{id}-msg");
    view! {
        <div class="field" class:invalid=move || message().is_some()>
            <label for=id>{label}</label>
            <input id=id type="text" autocomplete="off" spellcheck="false" aria-describedby=msg_id.clone()
                aria-invalid=move || message().is_some().to_string()
                prop:value=move || value.get()
                on:input=move |ev| {
                    value.set(event_target_value(&ev));
                    ctx.editing.set(true);
                }/>
            {hint.map(|h| view! { <p class="hint">{h}</p> })}
            {describe.map(|d| view! { <p class="hint size-note">{move || d(&value.get())}</p> })}
            <ul class="messages" id=msg_id aria-live="polite">
                {move || message().map(|m| view! { <li class="error">{m}</li> })}
            </ul>
        </div>
    }
}

fn number(text: &str) -> Value {
    paths::typed_number(text).unwrap_or_else(|| Value::from(text.to_owned()))
}

fn record() -> impl Fn() -> Option<Record> + Copy {
    let ctx = ctx();
    move || ctx.loaded().map(|l| l.record)
}

#[component]
fn TopologyForm() -> impl IntoView {
    let ctx = ctx();
    let (prefill, decode) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    view! {
        <form class="action" on:submit=move |ev| {
            ev.prevent_default();
            ctx.review("topology", "set topology", Change::SetTopology {
                prefill: number(&prefill.get_untracked()),
                decode: number(&decode.get_untracked()),
            });
        }>
            <h3>"Set topology"</h3>
            <ActionField form="topology" id="new-prefill" label="New prefill count" value=prefill
                from_record=|r| text_at(r, &["mooncake", "topology", "prefill"])
                paths=&["prefill", "mooncake.topology.prefill", "mooncake.topology"]/>
            <ActionField form="topology" id="new-decode" label="New decode count" value=decode
                from_record=|r| text_at(r, &["mooncake", "topology", "decode"])
                paths=&["decode", "mooncake.topology.decode"]/>
            <button type="submit">"Review topology"</button>
        </form>
    }
}

#[component]
fn StoreForm() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let store = move |k: &str| {
        record().and_then(|r| {
            r.spec
                .get("mooncake")
                .and_then(|m| paths::get(m, &["store", k]))
                .cloned()
        })
    };
    let enabled = RwSignal::new(store("enabled").is_some_and(|v| v.is_true()));
    let cold = RwSignal::new(store("cold_tier_enabled").is_some_and(|v| v.is_true()));
    let offload = RwSignal::new(paths::display(store("offload").as_ref()));
    let (gss, lbs) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    fn size(r: &Record, key: &str) -> String {
        let text = text_at(r, &["mooncake", "store", key]);
        gco_spec::format_byte_size(&text).unwrap_or(text)
    }
    let settings = move || {
        let mut o = Object::new();
        if enabled.get_untracked() {
            o.insert("enabled", true);
        }
        for (key, text) in [
            ("global_segment_size", gss.get_untracked()),
            ("local_buffer_size", lbs.get_untracked()),
        ] {
            if !text.trim().is_empty() {
                o.insert(key, parse_byte_size(&text).unwrap_or(text));
            }
        }
        if cold.get_untracked() {
            o.insert("cold_tier_enabled", true);
        }
        let offload = offload.get_untracked();
        if !offload.is_empty() {
            o.insert("offload", offload);
        }
        Value::Object(o)
    };
    let touched = move || ctx.editing.set(true);
    view! {
        <form class="action" on:submit=move |ev| {
            ev.prevent_default();
            ctx.review("store", "configure store", Change::ConfigureStore { store: settings() });
        }>
            <h3>"Configure store"</h3>
            <div class="field check"><input id="store-enabled" type="checkbox" prop:checked=move || enabled.get()
                on:change=move |ev| { enabled.set(event_target_checked(&ev)); touched(); }/><label for="store-enabled">"Store enabled"</label></div>
            <ActionField form="store" id="store-gss" label="Global segment size" value=gss
                from_record=|r| size(r, "global_segment_size")
                paths=&["mooncake.store.global_segment_size"] hint="e.g. 4 GiB, 8 GB or 4294967296" describe=size_note/>
            <ActionField form="store" id="store-lbs" label="Local buffer size" value=lbs
                from_record=|r| size(r, "local_buffer_size")
                paths=&["mooncake.store.local_buffer_size"] hint="e.g. 2 GiB" describe=size_note/>
            <div class="field check"><input id="store-cold" type="checkbox" prop:checked=move || cold.get()
                on:change=move |ev| { cold.set(event_target_checked(&ev)); touched(); }/><label for="store-cold">"Cold tier"</label></div>
            <div class="field">
                <label for="store-offload">"Offload"</label>
                <select id="store-offload" prop:value=move || offload.get() on:change=move |ev| { offload.set(event_target_value(&ev)); touched(); }>
                    <option value="">"not set"</option>
                    {OffloadTier::NAMES.iter().map(|t| view! { <option value=*t>{*t}</option> }).collect_view()}
                </select>
            </div>
            {move || ctx.refusal("store").filter(|d| !d.path.contains("_size")).map(|d| view! {
                <p class="error" role="alert"><code>{d.path}</code>" "{d.message}</p>
            })}
            <button type="submit">"Review store"</button>
        </form>
    }
}

#[component]
fn ImageForm() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let image = RwSignal::new(String::new());
    let with_proxy = RwSignal::new(false);
    let split = move || record().is_some_and(|r| spec_mode(&r.spec).is_some_and(|m| m.is_split()));
    view! {
        <form class="action" on:submit=move |ev| {
            ev.prevent_default();
            ctx.review("image", "update image", Change::UpdateImage {
                image: Value::from(image.get_untracked()),
                with_proxy: Value::Bool(split() && with_proxy.get_untracked()),
            });
        }>
            <h3>"Update image"</h3>
            <ActionField form="image" id="new-image" label="New image" value=image
                from_record=|r| text_at(r, &["image"]) paths=&["image", "spec.image"]/>
            <Show when=split>
                <div class="field check">
                    <input id="image-proxy" type="checkbox" prop:checked=move || with_proxy.get()
                        on:change=move |ev| { with_proxy.set(event_target_checked(&ev)); ctx.editing.set(true); }/>
                    <label for="image-proxy">"Also update the PD proxy image"</label>
                </div>
            </Show>
            <button type="submit">"Review image"</button>
        </form>
    }
}

#[component]
fn ScaleForm() -> impl IntoView {
    let ctx = ctx();
    let replicas = RwSignal::new(String::new());
    view! {
        <form class="action" on:submit=move |ev| {
            ev.prevent_default();
            ctx.review("scale", "scale", Change::Scale { replicas: number(&replicas.get_untracked()) });
        }>
            <h3>"Scale"</h3>
            <ActionField form="scale" id="new-replicas" label="Replicas" value=replicas
                from_record=|r| text_at(r, &["replicas"]) paths=&["replicas"]/>
            <button type="submit">"Review scale"</button>
        </form>
    }
}

/// A canary of a plain endpoint; promote and rollback while one runs
/// (rollback on a Mooncake endpoint too, to repair an older record).
#[component]
fn CanaryForm() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let mooncake = move || record().is_some_and(|r| r.spec.contains_key("mooncake"));
    let active = move || record().is_some_and(|r| r.spec.contains_key("canary"));
    let (image, weight, replicas) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let optional = |text: String| (!text.trim().is_empty()).then(|| number(&text));
    view! {
        <div class="action">
            <h3>"Canary"</h3>
            <Show when=move || !mooncake()>
                <form class="canary" on:submit=move |ev| {
                    ev.prevent_default();
                    ctx.review("canary", "start a canary", Change::CanaryDeploy {
                        image: Value::from(image.get_untracked()),
                        weight: optional(weight.get_untracked()),
                        replicas: optional(replicas.get_untracked()),
                    });
                }>
                    <ActionField form="canary" id="canary-image" label="Canary image" value=image
                        from_record=|r| text_at(r, &["canary", "image"]) paths=&["image", "canary.image"]/>
                    <ActionField form="canary" id="canary-weight" label="Traffic weight (%)" value=weight
                        from_record=|r| text_at(r, &["canary", "weight"]) paths=&["weight"] hint="1 to 99; 10 unless given"/>
                    <ActionField form="canary" id="canary-replicas" label="Canary replicas" value=replicas
                        from_record=|r| text_at(r, &["canary", "replicas"]) paths=&["replicas"] hint="1 unless given"/>
                    <button type="submit">"Review canary"</button>
                </form>
            </Show>
            <Show when=move || mooncake() && !active()>
                <p class="muted">"GCO does not run canaries of Mooncake endpoints."</p>
            </Show>
            <Show when=active>
                <div class="row">
                    <Show when=move || !mooncake()>
                        <button type="button" on:click=move |_| ctx.review("canary", "promote the canary", Change::PromoteCanary)>"Promote…"</button>
                    </Show>
                    <button type="button" on:click=move |_| ctx.review("canary", "roll back the canary", Change::RollbackCanary)>"Roll back…"</button>
                </div>
            </Show>
            {move || ctx.refusal("canary").filter(|d| !["image", "weight", "replicas"].contains(&d.path.as_str())).map(|d| view! {
                <p class="error" role="alert">{d.message}</p>
            })}
        </div>
    }
}

#[component]
fn RegionsForm() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let region = RwSignal::new(String::new());
    view! {
        <form class="action" on:submit=move |ev| {
            ev.prevent_default();
            ctx.review("regions", "add region", Change::AddRegion { region: Value::from(region.get_untracked().trim().to_owned()) });
        }>
            <h3>"Regions"</h3>
            <ul class="region-list">
                {move || record().map(|r| r.target_regions.into_iter().map(|g| {
                    let label = format!("Remove region {g}");
                    let region = g.clone();
                    view! { <li><span class="chip">{g}</span>
                        <button type="button" class="link-button" aria-label=label
                            on:click=move |_| ctx.review("regions", &format!("remove region {region}"), Change::RemoveRegion { region: Value::str(&region) })>"Remove…"</button></li> }
                }).collect_view())}
            </ul>
            <ActionField form="regions" id="new-region" label="Add a region" value=region
                from_record=|_| String::new() paths=&["region"] hint="e.g. eu-west-1"/>
            {move || super::review::unmonitored_region(&region.get(), &ctx.regions.get()).map(|note| view! {
                <p class="warning unmonitored-region" role="note">{note}</p>
            })}
            <button type="submit">"Review region"</button>
        </form>
    }
}

/// Delete is deliberate: the name typed in full enables the review, which
/// says what GCO removes in each region.
#[component]
fn DeleteForm() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let typed = RwSignal::new(String::new());
    let owner = RwSignal::new(String::new());
    let name = move || record().map(|r| r.endpoint_name).unwrap_or_default();
    let confirmed = move || !typed.get().is_empty() && typed.get() == name();
    let change = move || {
        let label = owner.get_untracked();
        match label.split_once('=') {
            Some((k, v)) => Change::Delete {
                expected_owner_label: Some((k.trim().to_owned(), v.trim().to_owned())),
                expected_lifecycle_id: record().and_then(|r| r.lifecycle_id),
            },
            None => Change::DELETE,
        }
    };
    view! {
        <form class="action danger-zone" on:submit=move |ev| {
            ev.prevent_default();
            if confirmed() {
                ctx.review("delete", "delete", change());
            }
        }>
            <h3>"Delete"</h3>
            <div class="field">
                <label for="delete-confirm">"Type the endpoint name to confirm"</label>
                <input id="delete-confirm" type="text" autocomplete="off" spellcheck="false"
                    prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))/>
            </div>
            <div class="field">
                <label for="delete-owner">"Only if it carries the label (optional)"</label>
                <input id="delete-owner" type="text" autocomplete="off" spellcheck="false" placeholder="KEY=VALUE"
                    prop:value=move || owner.get() on:input=move |ev| owner.set(event_target_value(&ev))/>
                <p class="hint">"Deletes only this lifecycle of the endpoint, and only while it carries the label (GCO's --expected-owner-label)."</p>
            </div>
            {move || ctx.refusal("delete").map(|d| view! {
                <p class="error" role="alert">{d.message}</p>
            })}
            <button type="submit" class="danger" disabled=move || !confirmed()>"Review delete…"</button>
        </form>
    }
}

#[component]
fn Lifecycle() -> impl IntoView {
    let ctx = ctx();
    let record = record();
    let stopped = move || record().is_some_and(|r| r.desired_state == DesiredState::Stopped);
    view! {
        <div class="action">
            <h3>"Lifecycle"</h3>
            <div class="row">
                <Show when=stopped fallback=move || view! {
                    <button type="button" on:click=move |_| ctx.review("lifecycle", "stop", Change::Stop)>"Stop…"</button>
                }>
                    <button type="button" on:click=move |_| ctx.review("lifecycle", "start", Change::Start)>"Start…"</button>
                </Show>
            </div>
            {move || ctx.refusal("lifecycle").map(|d| view! {
                <p class="error" role="alert">{d.message}</p>
            })}
        </div>
    }
}

/// The role the changes `which` admits need, as the server's table of
/// changes says (the most any of them needs).
fn needs(which: impl Fn(ChangeKind) -> bool) -> gco_api::Role {
    let roles = CHANGES
        .iter()
        .filter(|row| which(row.kind))
        .map(|row| row.needs);
    roles.max().unwrap_or(gco_api::Role::Viewer)
}

/// The actions the record allows, each closed to a role the table of
/// changes says may not make it.
#[component]
pub fn Actions() -> impl IntoView {
    let record = record();
    let split = move || record().is_some_and(|r| spec_mode(&r.spec).is_some_and(|m| m.is_split()));
    let mooncake = move || record().is_some_and(|r| r.spec.contains_key("mooncake"));
    let _: Option<EndpointCtx> = use_context();
    view! {
        <Guard needed=needs(|kind| kind != ChangeKind::Delete) doing="Changing this endpoint" id="actions-reason".to_owned()>
            <Show when=split><TopologyForm/></Show>
            <Show when=mooncake><StoreForm/></Show>
            <ImageForm/>
            <Show when=move || !mooncake()><ScaleForm/></Show>
            <CanaryForm/>
            <RegionsForm/>
            <Lifecycle/>
        </Guard>
        <Guard needed=needs(|kind| kind == ChangeKind::Delete) doing="Deleting this endpoint" id="delete-reason".to_owned()>
            <DeleteForm/>
        </Guard>
    }
}
