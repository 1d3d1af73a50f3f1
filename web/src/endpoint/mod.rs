//! One endpoint: its record, each region's status as GCO's monitors write
//! it, and its actions. The page keeps itself current (a conditional GET
//! every few seconds); a change made elsewhere shows, with a notice when
//! the user has unsent edits. Every change is reviewed first (old against
//! new, computed by the core's own operation) and sent with the version it
//! was computed from; a 412 offers to reload and re-apply.

mod actions;
mod apply;
mod history;
mod resume;
mod review;
mod status;

use gco_spec::json::Value;
use gco_spec::{Change, DesiredState, Diagnostic, Framework, Frameworks, Record};
use leptos::prelude::*;

use crate::api::Reply;
use crate::live::{ConnectionNotice, Load, StoreNotice, Watcher};
use crate::paths;
use crate::preview::CliCommands;
use crate::route::{self, Link, Page, Router};
use crate::time::Time;
use crate::topology::{Picture, Shape};
use apply::{Applied, Apply};
use review::{Pending, Review};

/// The record on screen and the version it was read at.
#[derive(Clone, PartialEq)]
pub struct Loaded {
    pub record: Record,
    pub etag: Option<String>,
}

/// What a record's content is, leaving out what GCO's monitors write on
/// every pass: a change of this is a change by someone.
fn content(r: &Record) -> Record {
    let mut r = r.clone();
    r.region_status = Default::default();
    r.updated_at.clear();
    r
}

/// The page's shared state, handed to each part of it.
#[derive(Clone, Copy)]
pub struct EndpointCtx {
    name: StoredValue<String>,
    load: RwSignal<Load<Box<Loaded>>>,
    pub pending: RwSignal<Option<Pending>>,
    /// Sends the change under review.
    pub apply: Apply,
    /// Why the core refused a change, shown at the form's field: (form, error).
    refused: RwSignal<Option<(&'static str, Diagnostic)>>,
    /// Whether a form holds edits not yet sent.
    pub editing: RwSignal<bool>,
    /// Someone else changed the endpoint while the user had unsent edits.
    pub changed_elsewhere: RwSignal<bool>,
    pub watcher: StoredValue<Option<Watcher>, LocalStorage>,
    /// The frameworks the team's GCO accepts (the server's `--frameworks`).
    pub frameworks: Memo<Frameworks>,
    /// The regions the console knows a monitor in (the server's
    /// `--regions`); empty until it says.
    pub regions: Memo<Vec<String>>,
    /// Who is signed in: who a change is written by.
    pub session: crate::team::Session,
}

impl EndpointCtx {
    /// The record on screen.
    pub fn loaded(&self) -> Option<Loaded> {
        self.load.with(|l| l.ready().map(|l| Loaded::clone(l)))
    }

    pub fn loaded_untracked(&self) -> Option<Loaded> {
        self.load
            .with_untracked(|l| l.ready().map(|l| Loaded::clone(l)))
    }

    /// Takes an answer carrying the record (a read, or a change's reply).
    fn take(&self, reply: Reply) {
        if reply.status == 404 {
            self.load.set(Load::Missing);
            return;
        }
        if !reply.ok() {
            // A failed refresh keeps what is on screen.
            if self.loaded_untracked().is_none() {
                self.load.set(Load::Failed(reply.summary()));
            }
            return;
        }
        let record = match Record::from_value(&reply.body) {
            Ok(r) => r,
            Err(e) => {
                self.load.set(Load::Failed(e.to_string()));
                return;
            }
        };
        let changed = self
            .loaded_untracked()
            .is_some_and(|before| content(&before.record) != content(&record));
        if changed && (self.editing.get_untracked() || self.pending.with_untracked(Option::is_some))
        {
            self.changed_elsewhere.set(true);
            // An open review was computed on the old version: Apply would
            // be a 412. It is outdated, and offers to review again.
            self.pending.update(|p| {
                if let Some(p) = p.as_mut().filter(|p| !p.reloading) {
                    p.stale.get_or_insert(review::Outdated::ChangedWhileOpen);
                }
            });
        }
        // A review open on the old version is redone on the new one.
        review::refresh(self, &record, reply.etag.clone());
        self.load.set(Load::Ready(Box::new(Loaded {
            record,
            etag: reply.etag,
        })));
    }

    /// What became of the last change sent, once its answer is in:
    /// (done, text).
    fn outcome(&self) -> Option<(bool, String)> {
        self.apply.applied()?.outcome()
    }

    /// Why a change from `form` was refused, at its field: in the core's
    /// words when it was reviewed, else in the server's when applied.
    pub fn refusal(&self, form: &str) -> Option<Diagnostic> {
        let core = self.refused.with(|r| {
            r.as_ref()
                .filter(|(f, _)| *f == form)
                .map(|(_, d)| d.clone())
        });
        core.or_else(|| match self.apply.applied() {
            Some(Applied::Refused(f, d)) if f == form => Some(d),
            _ => None,
        })
    }

    /// Opens the review of `change`, or says at the form why the core
    /// refuses it.
    pub fn review(&self, form: &'static str, title: &str, change: Change) {
        review::open(self, form, title, review::Act::Change(change));
    }
}

#[component]
pub fn EndpointPage(name: String) -> impl IntoView {
    let settings = crate::settings::Settings::get();
    let frameworks = settings.frameworks;
    let regions = Memo::new(move |_| {
        settings
            .with_defaults(|d| d.map(|d| d.regions.clone()))
            .unwrap_or_default()
    });
    let apply = Apply::new();
    let ctx = EndpointCtx {
        name: StoredValue::new(name.clone()),
        load: RwSignal::new(Load::Loading),
        pending: RwSignal::new(None),
        apply,
        refused: RwSignal::new(None),
        editing: RwSignal::new(false),
        changed_elsewhere: RwSignal::new(false),
        watcher: StoredValue::new_local(None),
        frameworks,
        regions,
        session: crate::team::Session::get(),
    };
    let url = gco_api::route::fill(
        gco_api::route::ENDPOINT,
        &[(gco_api::route::NAME_PARAMETER, &name)],
    );
    let watcher = Watcher::new(
        move || url.clone(),
        move |reply| match reply {
            Ok(r) => ctx.take(r),
            Err(e) => {
                if ctx.loaded_untracked().is_none() {
                    ctx.load.set(Load::Failed(e));
                }
            }
        },
    );
    ctx.watcher.set_value(Some(watcher));
    provide_context(ctx);
    apply::retry_after_sign_in(ctx);
    let phase = Memo::new(move |_| {
        ctx.load.with(|l| match l {
            Load::Loading => Phase::Loading,
            Load::Missing => Phase::Missing,
            Load::Failed(e) => Phase::Failed(e.clone()),
            Load::Ready(_) => Phase::Ready,
        })
    });

    let router = Router::get();
    let clone = move |_| {
        if let Some(l) = ctx.loaded_untracked() {
            crate::editor::open_clone(&l.record);
            router.navigate(Page::New);
        }
    };

    view! {
        <div class="endpoint">
            <header class="page-head">
                <h1 id="endpoint-title" tabindex="-1">{name.clone()}</h1>
                <div class="toolbar">
                    <Link to=Page::List><span class="button">"All endpoints"</span></Link>
                    <button type="button" on:click=move |_| watcher.refresh()>"Reload"</button>
                    <button type="button" on:click=clone disabled=move || ctx.loaded().is_none()
                        title="Open a copy of this endpoint in the editor">"Clone"</button>
                </div>
            </header>
            <ConnectionNotice watcher=watcher/>
            <StoreNotice watcher=watcher/>
            <resume::Resume/>
            <Show when=move || ctx.changed_elsewhere.get()>
                <p class="banner warning-banner" role="alert">
                    "This endpoint was changed elsewhere (another tab or GCO's CLI); the page shows the new version. Your unsent edits are kept: review them again before applying. "
                    <button type="button" class="link-button" on:click=move |_| ctx.changed_elsewhere.set(false)>"Dismiss"</button>
                </p>
            </Show>
            {move || ctx.outcome().map(|(ok, text)| view! {
                <p id="outcome" tabindex="-1" class=if ok { "banner ok" } else { "banner error" } role="status">{text}</p>
            })}
            <Review/>
            {move || match phase.get() {
                Phase::Loading => view! { <p class="muted" role="status">"Loading…"</p> }.into_any(),
                // A purged endpoint's history stays: it shows below, and an
                // admin can deploy the endpoint again from it.
                Phase::Missing => view! {
                    <div class="banner error" role="alert">
                        <p>{format!("There is no endpoint named {:?}. It may never have existed, or GCO purged it after its deletion completed. Its recorded changes, if any, are below.", ctx.name.get_value())}</p>
                        <p><Link to=Page::List>"Back to all endpoints"</Link>" · "<Link to=Page::New>"New endpoint"</Link></p>
                    </div>
                    <history::History/>
                }.into_any(),
                Phase::Failed(e) => view! {
                    <p class="banner error" role="alert">{format!("Could not load the endpoint: {e}")}</p>
                }.into_any(),
                Phase::Ready => view! { <Tabs/> }.into_any(),
            }}
        </div>
    }
}

/// The page's two views: the record with its actions, and its history.
/// The one shown is in the address (`?tab=history`), so a link or a reload
/// opens it; both stay mounted once seen, so unsent edits survive a look
/// at the history.
#[component]
fn Tabs() -> impl IntoView {
    let history =
        RwSignal::new(route::query_value(&route::search(), "tab").as_deref() == Some("history"));
    let seen = RwSignal::new(history.get_untracked());
    let show = move |on_history: bool| {
        history.set(on_history);
        seen.set(seen.get_untracked() || on_history);
        let path = window().location().pathname().unwrap_or_default();
        route::replace_url(&format!(
            "{path}{}",
            if on_history { "?tab=history" } else { "" }
        ));
    };
    // Arrow keys move between the tabs (the tab pattern of WAI-ARIA).
    let keys = move |ev: leptos::ev::KeyboardEvent| {
        if matches!(ev.key().as_str(), "ArrowLeft" | "ArrowRight") {
            ev.prevent_default();
            let to = !history.get_untracked();
            show(to);
            crate::browser::focus(if to { "#tab-history" } else { "#tab-overview" });
        }
    };
    let tab = move |id: &'static str, label: &'static str, on_history: bool| {
        let selected = move || history.get() == on_history;
        view! {
            <button type="button" role="tab" id=id aria-controls="endpoint-panel"
                aria-selected=move || selected().to_string() tabindex=move || if selected() { "0" } else { "-1" }
                on:click=move |_| show(on_history)>{label}</button>
        }
    };
    view! {
        <div class="tabs" role="tablist" aria-label="Endpoint" on:keydown=keys>
            {tab("tab-overview", "Overview", false)}
            {tab("tab-history", "History", true)}
        </div>
        <div id="endpoint-panel" role="tabpanel"
            aria-labelledby=move || if history.get() { "tab-history" } else { "tab-overview" }>
            <div hidden=move || history.get()><Overview/></div>
            <Show when=move || seen.get()>
                <div hidden=move || !history.get()><history::History/></div>
            </Show>
        </div>
    }
}

/// Where the page is, without the record: the parts below follow the
/// record themselves, so a monitor's write does not rebuild the forms.
#[derive(Clone, PartialEq)]
enum Phase {
    Loading,
    Missing,
    Failed(String),
    Ready,
}

/// The record, its picture and status, and the actions it allows.
#[component]
fn Overview() -> impl IntoView {
    let ctx = ctx();
    let record = move || ctx.loaded().map(|l| l.record);
    let deleted = move || record().is_some_and(|r| r.desired_state == DesiredState::Deleted);
    let shape = Memo::new(move |_| {
        record().map_or_else(Shape::default, |r| Shape::of_spec(&Value::Object(r.spec)))
    });
    // A name GCO's rules refuse (a record written before they did, or by
    // another writer): the page still opens, says so, and can delete it.
    let name_errors = move || {
        record()
            .map(|r| {
                let mode = gco_spec::spec::spec_mode(&r.spec);
                gco_spec::names::endpoint_name_issues(&r.endpoint_name, mode)
                    .into_iter()
                    .filter(|i| i.is_error())
                    .map(|i| i.message(&r.endpoint_name))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    view! {
        <UnservedFramework/>
        {move || name_errors().into_iter().map(|m| view! {
            <p class="banner error" role="alert" data-path="endpoint_name">{m}". Delete it, and deploy it again under a name GCO accepts."</p>
        }).collect_view()}
        <div class="columns">
            <section class="record">
                {move || record().map(|r| view! {
                    <dl>
                        <dt>"Desired state"</dt><dd><span class=format!("state {}", r.desired_state)>{r.desired_state.to_string()}</span>
                            <span class="muted">" (what GCO's monitors work towards; each region's own state is below)"</span></dd>
                        <dt>"Topology"</dt><dd>{r.topology_label().unwrap_or_else(|| "—".into())}</dd>
                        {r.topology_label().is_none().then(|| view! {
                            <dt>"Replicas"</dt><dd>{paths::display(r.spec.get("replicas"))}</dd>
                        })}
                        <dt>"Image"</dt><dd><code>{paths::display(r.spec.get("image"))}</code></dd>
                        <dt>"Framework"</dt><dd data-field="framework">{framework_label(&r)}</dd>
                        <dt>"Model"</dt><dd data-field="model">{match gco_spec::framework::named_model(&r.spec) {
                            Some((model, at)) => view! { <code>{model}</code><span class="muted">{format!(" ({at})")}</span> }.into_any(),
                            None => view! { <span class="muted">"not named in the spec"</span> }.into_any(),
                        }}</dd>
                        {r.canary().map(|c| view! {
                            <dt>"Canary"</dt><dd data-field="canary"><code>{c.image.unwrap_or_default()}</code>
                                {format!(" · {}% of traffic · {} replica(s)", c.weight.map_or_else(|| "?".to_owned(), |w| w.to_string()), c.replicas.map_or_else(|| "?".to_owned(), |n| n.to_string()))}</dd>
                        })}
                        <dt>"Ingress path"</dt><dd><code>{r.ingress_path.clone()}</code></dd>
                        <dt>"Namespace"</dt><dd><code>{r.namespace.clone()}</code></dd>
                        <dt>"Labels"</dt><dd data-field="labels">{if r.labels.is_empty() { "—".to_owned() } else {
                            r.labels.str_entries().map(|(k, v)| format!("{}={}", k.to_string_lossy(), paths::display(Some(v)))).collect::<Vec<_>>().join(", ")
                        }}</dd>
                        <dt>"Created"</dt><dd><Time iso=r.created_at.clone()/></dd>
                        <dt>"Updated"</dt><dd><Time iso=r.updated_at.clone()/></dd>
                    </dl>
                    <status::RegionStatuses record=r.clone()/>
                })}
                <Picture shape=shape.into()/>
                <TryIt/>
                <details class="spec-details">
                    <summary><h2>"Spec"</h2></summary>
                    <pre class="spec">{move || record().map(|r| Value::Object(r.spec).to_json_pretty())}</pre>
                </details>
            </section>
            <aside class="actions">
                <Show when=deleted fallback=|| view! { <actions::Actions/> }>
                    <p class="banner">"This endpoint is deleted: GCO's monitors are removing it. Redeploy it under its name once they are done."</p>
                </Show>
            </aside>
        </div>
    }
}

/// The framework a record is served with: the stored one, else what GCO's
/// monitor picks by the image's name, said so.
fn framework_label(record: &Record) -> String {
    match record.spec.get("framework").filter(|f| !f.is_null()) {
        Some(stored) => paths::display(Some(stored)),
        None => {
            let image = record
                .spec
                .get("image")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match gco_spec::framework::runtime_framework(&record.spec, image) {
                Some(f) => format!("not set: GCO's monitor serves it as {f}, by the image's name"),
                None => "not set, and the image names none GCO's monitor knows".to_owned(),
            }
        }
    }
}

/// The framework a record names when the team's GCO does not accept it
/// (a `tgi` record after GCO's SGLang release): GCO's renderer passes it by.
pub fn unserved_framework(record: &Record, frameworks: &Frameworks) -> Option<String> {
    frameworks
        .unserved(&record.spec)
        .map(|given| paths::display(Some(given)))
}

/// A warning for a record GCO does not render, with the way out: the same
/// endpoint again on SGLang, through the editor and its review.
#[component]
fn UnservedFramework() -> impl IntoView {
    let ctx = ctx();
    let router = Router::get();
    let unserved = move || {
        let record = ctx.loaded()?.record;
        let framework = unserved_framework(&record, &ctx.frameworks.get())?;
        Some((record, framework))
    };
    move || {
        unserved().map(|(record, framework)| {
            let accepted = ctx.frameworks.get();
            let to_sglang = accepted.accepts(Framework::Sglang.as_str());
            let clone = move |_| {
                crate::editor::open_clone_on_sglang(&record);
                router.navigate(Page::New);
            };
            view! {
                <div class="banner warning-banner unserved" role="alert">
                    <p>
                        <strong>"GCO does not serve this endpoint. "</strong>
                        {format!(
                            "Its framework '{framework}' is not one this GCO accepts ({}): GCO's monitors do not render it, so it never starts, and GCO's invoke and models commands do not recognise it. Deploy it again with an accepted framework.",
                            accepted.names().join(", ")
                        )}
                    </p>
                    {to_sglang.then(|| view! {
                        <p><button type="button" on:click=clone
                            title="Open this endpoint in the editor with framework sglang and its model carried over">
                            "Clone with sglang"
                        </button></p>
                    })}
                </div>
            }
        })
    }
}

/// The `gco inference` commands that ask the endpoint for its models and
/// send it a first request, per target region.
#[component]
fn TryIt() -> impl IntoView {
    let ctx = ctx();
    // Nothing to try for a deleted endpoint, or one GCO does not serve
    // (its warning says so).
    let commands = move || {
        let record = ctx.loaded()?.record;
        (record.desired_state != DesiredState::Deleted)
            .then(|| gco_spec::try_it_commands(&record, &ctx.frameworks.get()))
            .filter(|c| !c.lines.is_empty())
    };
    move || {
        commands().map(|commands| {
            view! {
                <section class="try-it">
                    <h2>"Try it"</h2>
                    <p class="muted">"With GCO's CLI, once a region is running:"</p>
                    <CliCommands commands/>
                </section>
            }
        })
    }
}

/// The page's context, for its parts.
pub fn ctx() -> EndpointCtx {
    expect_context::<EndpointCtx>()
}
