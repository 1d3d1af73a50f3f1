//! The form: one definition per field of a deploy request, and the input
//! that edits it. Every input has a visible label and shows the messages of
//! its diagnostic path next to it.

use gco_spec::Mode;
use gco_spec::bytesize::BYTE_SIZE_FORMS;
use gco_spec::json::{Object, Value};
use gco_spec::limits::MOONCAKE_PROXY_SCHEDULING;
use gco_spec::spec::CAPACITY_TYPES;
use gco_spec::{
    MetricKind, OffloadTier, Severity, TransferProtocol, describe_byte_size, format_byte_size,
    parse_byte_size,
};
use leptos::prelude::*;

use super::state::{Editor, is_under};
use crate::paths;

#[derive(Clone, Copy)]
pub enum Kind {
    Text,
    /// Integers, kept as typed when they are not numbers (the rules say why).
    Number,
    /// An instance count: as [`Kind::Number`], but an emptied box is kept as
    /// empty text (an error at the field), never the default of one.
    Count,
    /// A byte size typed with a unit (`4 GiB`), stored as the decimal string.
    ByteSize,
    Check,
    Select(Choices),
    /// A list of strings, one per line.
    Lines,
    /// A list of strings, comma-separated.
    Csv,
    /// A string map, `KEY=VALUE` per line.
    Pairs,
    /// One part (`type` or `target`) of an autoscaling role's first metric.
    Metric(&'static str),
}

pub struct FieldDef {
    pub label: &'static str,
    /// Where the value lives in the deploy request.
    pub path: &'static [&'static str],
    /// The diagnostic path whose messages belong to this field.
    pub diag: &'static str,
    pub kind: Kind,
    pub hint: &'static str,
}

/// A select's options: what its empty choice means, and the core's
/// vocabulary (each defined once, in the core), or what the server accepts.
#[derive(Clone, Copy)]
pub struct Choices {
    pub none: fn() -> String,
    pub values: fn(&Editor) -> Vec<&'static str>,
}

const MODES: Choices = Choices {
    none: || "none (plain endpoint)".into(),
    values: |_| Mode::ALL.iter().map(|m| m.as_str()).collect(),
};
const PROTOCOLS: Choices = Choices {
    none: || format!("default ({})", TransferProtocol::DEFAULT),
    values: |_| TransferProtocol::NAMES.to_vec(),
};
const OFFLOAD: Choices = Choices {
    none: || "not set".into(),
    values: |_| OffloadTier::NAMES.to_vec(),
};
const SCHEDULING: Choices = Choices {
    none: || "not set".into(),
    values: |_| MOONCAKE_PROXY_SCHEDULING.to_vec(),
};
const CAPACITY: Choices = Choices {
    none: || "not set".into(),
    values: |_| CAPACITY_TYPES.to_vec(),
};
/// The frameworks the team's GCO accepts (the server's `--frameworks`).
const FRAMEWORK_CHOICES: Choices = Choices {
    none: || "default".into(),
    values: |ed| ed.frameworks.get().names(),
};
const METRICS: Choices = Choices {
    none: || {
        let (metric, target) = MetricKind::DEFAULT_TARGET;
        format!("default ({metric} {target})")
    },
    values: |_| MetricKind::NAMES.to_vec(),
};

macro_rules! field {
    ($label:expr, [$($p:expr),+], $diag:expr, $kind:expr) => {
        FieldDef { label: $label, path: &[$($p),+], diag: $diag, kind: $kind, hint: "" }
    };
    ($label:expr, [$($p:expr),+], $diag:expr, $kind:expr, $hint:expr) => {
        FieldDef { label: $label, path: &[$($p),+], diag: $diag, kind: $kind, hint: $hint }
    };
}

pub static ENDPOINT: &[FieldDef] = &[
    field!(
        "Endpoint name",
        ["endpoint_name"],
        "endpoint_name",
        Kind::Text,
        "a DNS label, e.g. llama-3-pd"
    ),
    field!(
        "Image",
        ["image"],
        "image",
        Kind::Text,
        "defaults to the Mooncake vLLM image when a mode is set"
    ),
    field!(
        "Target regions",
        ["target_regions"],
        "target_regions",
        Kind::Csv,
        "comma-separated; empty: every deployed region"
    ),
    field!("Replicas", ["replicas"], "replicas", Kind::Number),
    field!("GPU count", ["gpu_count"], "gpu_count", Kind::Number),
    field!(
        "GPU type",
        ["gpu_type"],
        "gpu_type",
        Kind::Text,
        "instance type hint, e.g. g5.12xlarge"
    ),
    field!("Port", ["port"], "port", Kind::Number),
    field!(
        "Health check path",
        ["health_check_path"],
        "health_check_path",
        Kind::Text
    ),
    field!(
        "Framework",
        ["framework"],
        "framework",
        Kind::Select(FRAMEWORK_CHOICES)
    ),
    field!("Model path", ["model_path"], "model_path", Kind::Text),
    field!("Model source", ["model_source"], "model_source", Kind::Text),
    field!(
        "Capacity type",
        ["capacity_type"],
        "capacity_type",
        Kind::Select(CAPACITY)
    ),
    field!(
        "Accelerator",
        ["accelerator"],
        "accelerator",
        Kind::Text,
        "nvidia unless set, e.g. neuron"
    ),
    field!("Namespace", ["namespace"], "namespace", Kind::Text),
    field!(
        "Environment",
        ["env"],
        "env",
        Kind::Pairs,
        "KEY=VALUE per line"
    ),
    field!(
        "Labels",
        ["labels"],
        "labels",
        Kind::Pairs,
        "key=value per line"
    ),
    field!(
        "Node selector",
        ["node_selector"],
        "node_selector",
        Kind::Pairs,
        "key=value per line"
    ),
    field!(
        "Extra args",
        ["extra_args"],
        "extra_args",
        Kind::Lines,
        "one argument per line"
    ),
];

pub static MOONCAKE: &[FieldDef] = &[
    field!(
        "Mooncake mode",
        ["mooncake_mode"],
        "mooncake.mode",
        Kind::Select(MODES)
    ),
    field!(
        "Prefill instances",
        ["prefill_replicas"],
        "mooncake.topology.prefill",
        Kind::Count,
        "X in XpYd, 1 to 1000"
    ),
    field!(
        "Decode instances",
        ["decode_replicas"],
        "mooncake.topology.decode",
        Kind::Count,
        "Y in XpYd, 1 to 1000"
    ),
];

pub static STORE: &[FieldDef] = &[
    field!(
        "Store enabled",
        ["mooncake_store", "enabled"],
        "mooncake.store.enabled",
        Kind::Check
    ),
    field!(
        "Global segment size",
        ["mooncake_store", "global_segment_size"],
        "mooncake.store.global_segment_size",
        Kind::ByteSize,
        "e.g. 4 GiB"
    ),
    field!(
        "Local buffer size",
        ["mooncake_store", "local_buffer_size"],
        "mooncake.store.local_buffer_size",
        Kind::ByteSize,
        "e.g. 2 GiB"
    ),
    field!(
        "Cold tier",
        ["mooncake_store", "cold_tier_enabled"],
        "mooncake.store.cold_tier_enabled",
        Kind::Check,
        "object-store tier; needs the store enabled"
    ),
    field!(
        "Offload",
        ["mooncake_store", "offload"],
        "mooncake.store.offload",
        Kind::Select(OFFLOAD)
    ),
    field!(
        "Master image",
        ["mooncake_store", "master_image"],
        "mooncake.store.master_image",
        Kind::Text,
        "the shared mooncake-master's; empty: each region's monitor setting (GCO has no default)"
    ),
];

pub static TRANSFER: &[FieldDef] = &[
    field!(
        "Transfer protocol",
        ["mooncake_transfer", "protocol"],
        "mooncake.transfer.protocol",
        Kind::Select(PROTOCOLS)
    ),
    field!(
        "Transfer device",
        ["mooncake_transfer", "device_name"],
        "mooncake.transfer.device_name",
        Kind::Text,
        "empty: detected"
    ),
];

pub static PROXY: &[FieldDef] = &[
    field!(
        "Proxy image",
        ["mooncake_proxy", "image"],
        "mooncake.proxy.image",
        Kind::Text,
        "defaults to the endpoint image"
    ),
    field!(
        "Proxy scheduling",
        ["mooncake_proxy", "scheduling"],
        "mooncake.proxy.scheduling",
        Kind::Select(SCHEDULING)
    ),
    field!(
        "Admin key Secret",
        ["mooncake_proxy", "admin_api_key_secret"],
        "mooncake.proxy.admin_api_key_secret",
        Kind::Text,
        "name of a Kubernetes Secret; never the key"
    ),
];

pub static AUTOSCALING: &[FieldDef] = &[
    field!(
        "Autoscaling enabled",
        ["mooncake_autoscaling", "enabled"],
        "mooncake.autoscaling.enabled",
        Kind::Check
    ),
    field!(
        "Prefill min",
        ["mooncake_autoscaling", "prefill", "min_replicas"],
        "mooncake.autoscaling.prefill.min_replicas",
        Kind::Number
    ),
    field!(
        "Prefill max",
        ["mooncake_autoscaling", "prefill", "max_replicas"],
        "mooncake.autoscaling.prefill.max_replicas",
        Kind::Number
    ),
    field!(
        "Prefill metric",
        ["mooncake_autoscaling", "prefill", "metrics"],
        "mooncake.autoscaling.prefill.metrics",
        Kind::Metric("type")
    ),
    field!(
        "Prefill metric target",
        ["mooncake_autoscaling", "prefill", "metrics"],
        "mooncake.autoscaling.prefill.metrics[0].target",
        Kind::Metric("target"),
        "e.g. 70 (percent)"
    ),
    field!(
        "Decode min",
        ["mooncake_autoscaling", "decode", "min_replicas"],
        "mooncake.autoscaling.decode.min_replicas",
        Kind::Number
    ),
    field!(
        "Decode max",
        ["mooncake_autoscaling", "decode", "max_replicas"],
        "mooncake.autoscaling.decode.max_replicas",
        Kind::Number
    ),
    field!(
        "Decode metric",
        ["mooncake_autoscaling", "decode", "metrics"],
        "mooncake.autoscaling.decode.metrics",
        Kind::Metric("type")
    ),
    field!(
        "Decode metric target",
        ["mooncake_autoscaling", "decode", "metrics"],
        "mooncake.autoscaling.decode.metrics[0].target",
        Kind::Metric("target"),
        "e.g. 70 (percent)"
    ),
];

pub fn all_fields() -> impl Iterator<Item = &'static FieldDef> {
    [ENDPOINT, MOONCAKE, STORE, TRANSFER, PROXY, AUTOSCALING]
        .into_iter()
        .flatten()
}

/// The element id of the field showing diagnostic `diag`.
pub fn field_id(diag: &str) -> String {
    let mut id = String::from("f-");
    id.extend(
        diag.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }),
    );
    id
}

/// The field a diagnostic belongs to: the one whose path holds it (the most
/// specific), or the mode for block-level messages.
pub fn field_for(path: &str) -> Option<&'static FieldDef> {
    let path = match path {
        "mooncake" => "mooncake.mode",
        "mooncake.topology" => "mooncake.topology.prefill",
        p => p,
    };
    all_fields()
        .filter(|f| is_under(path, f.diag))
        .max_by_key(|f| f.diag.len())
}

/// The first metric of a role's `metrics` list, as an object.
fn first_metric(v: Option<&Value>) -> Object {
    match v {
        Some(Value::List(items)) => items
            .first()
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        _ => Object::new(),
    }
}

/// `metrics` with one part of its first metric set (or removed); the
/// metrics after the first stay as they are.
fn with_metric(current: Option<&Value>, part: &str, value: Option<Value>) -> Option<Value> {
    let mut metric = first_metric(current);
    match value {
        Some(v) => metric.insert(part, v),
        None => {
            metric.remove(part);
        }
    }
    let rest = match current {
        Some(Value::List(items)) => items.iter().skip(1).cloned().collect(),
        _ => Vec::new(),
    };
    let first = (!metric.is_empty()).then_some(Value::Object(metric));
    let list: Vec<Value> = first.into_iter().chain(rest).collect();
    (!list.is_empty()).then_some(Value::List(list))
}

fn render(kind: Kind, v: Option<&Value>) -> String {
    match kind {
        Kind::ByteSize => match v {
            Some(Value::Str(s)) => s
                .as_str()
                .and_then(format_byte_size)
                .unwrap_or_else(|| s.to_string_lossy()),
            other => paths::display(other),
        },
        Kind::Lines | Kind::Csv => match v {
            Some(Value::List(items)) => items
                .iter()
                .map(|i| paths::display(Some(i)))
                .collect::<Vec<_>>()
                .join(if matches!(kind, Kind::Csv) {
                    ", "
                } else {
                    "\n"
                }),
            other => paths::display(other),
        },
        Kind::Pairs => match v {
            Some(Value::Object(o)) => o
                .str_entries()
                .map(|(k, v)| format!("{}={}", k.to_string_lossy(), paths::display(Some(v))))
                .collect::<Vec<_>>()
                .join("\n"),
            other => paths::display(other),
        },
        Kind::Metric(part) => paths::display(first_metric(v).get(part)),
        _ => paths::display(v),
    }
}

fn parse(kind: Kind, text: &str) -> Option<Value> {
    let blank = text.trim().is_empty();
    match kind {
        Kind::Text | Kind::Select(_) => (!text.is_empty()).then(|| Value::from(text.to_owned())),
        Kind::Number => paths::typed_number(text),
        Kind::Count => Some(paths::count_text(text)),
        Kind::ByteSize if blank => None,
        Kind::ByteSize => Some(Value::from(
            parse_byte_size(text).unwrap_or_else(|_| text.to_owned()),
        )),
        Kind::Check | Kind::Metric(_) => None,
        Kind::Lines | Kind::Csv if blank => None,
        Kind::Lines => Some(Value::List(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| Value::from(l.to_owned()))
                .collect(),
        )),
        Kind::Csv => Some(Value::List(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::from(s.to_owned()))
                .collect(),
        )),
        Kind::Pairs if blank => None,
        // As GCO's CLI reads -e and -l: a line without '=' is dropped (and
        // said so at the field, `pairs_note`).
        Kind::Pairs => Some(Value::Object(gco_spec::names::parse_pairs(text).0)),
    }
}

/// What a typed size comes to (`= 8,000,000,000 bytes = 7.45 GiB = 8 GB`),
/// or the forms a size may take; the stored value keeps the reference's
/// rule and message, at the field.
pub fn size_note(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    use gco_spec::bytesize::HumanSizeError;
    Some(match parse_byte_size(text) {
        Ok(bytes) => format!("= {}", describe_byte_size(&bytes)?),
        // One message, naming the accepted forms once.
        Err(HumanSizeError::BadNumber(_) | HumanSizeError::UnknownUnit(_)) => format!(
            "{} is not a size: a size is {BYTE_SIZE_FORMS}.",
            gco_spec::pyrepr::repr_text(text.trim())
        ),
        Err(e) => format!("{e}."),
    })
}

/// The lines of a `KEY=VALUE` field that are not sent: GCO's CLI drops an
/// entry without `=`, and so does the form.
pub fn pairs_note(text: &str) -> Option<String> {
    let (_, dropped) = gco_spec::names::parse_pairs(text);
    (!dropped.is_empty()).then(|| {
        dropped
            .iter()
            .map(|(n, line)| {
                format!("line {n}: {} has no '=', so it is not sent: GCO's CLI drops such an entry. Write {}= for an empty value.", gco_spec::pyrepr::repr_text(line), line.trim())
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// One field: label, input, hint, and its messages.
#[component]
pub fn Field(ed: Editor, def: &'static FieldDef) -> impl IntoView {
    let id = field_id(def.diag);
    let msg_id = format!("{id}-msg");
    let path = def.path;
    let kind = def.kind;
    let current = move || ed.state.with(|s| paths::get(s, path).cloned());
    // The input keeps what was typed; it follows the state only when the
    // state changes elsewhere (undo, the JSON view, a link).
    let text = RwSignal::new(render(kind, current().as_ref()));
    let written = StoredValue::new(current());
    Effect::new(move |_| {
        let now = current();
        if now != written.get_value() {
            written.set_value(now.clone());
            text.set(render(kind, now.as_ref()));
        }
    });
    let write = move |t: String| {
        text.set(t.clone());
        let v = match kind {
            Kind::Metric(part) => {
                let typed = if part == "type" {
                    (!t.is_empty()).then(|| Value::from(t.clone()))
                } else {
                    paths::typed_number(&t)
                };
                with_metric(current().as_ref(), part, typed)
            }
            _ => parse(kind, &t),
        };
        written.set_value(v.clone());
        ed.set_field(path, v);
    };
    let messages = move || ed.messages(def.diag);
    let has_error = move || messages().iter().any(|d| d.severity == Severity::Error);
    // A typed size that is none: its note says why, once; GCO's message
    // about the value stored stays in the summary.
    let bad_size = move || {
        matches!(kind, Kind::ByteSize)
            && text.with(|t| !t.trim().is_empty() && parse_byte_size(t).is_err())
    };
    let shown = move || {
        let mut m = messages();
        if bad_size() {
            m.retain(|d| d.severity != Severity::Error);
        }
        m
    };
    let describedby = msg_id.clone();
    let input = match kind {
        Kind::Check => {
            let checked = move || current().is_some_and(|v| v.is_true());
            view! {
                <input type="checkbox" id=id.clone() aria-describedby=describedby.clone()
                    prop:checked=checked
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        let v = on.then_some(Value::Bool(true));
                        written.set_value(v.clone());
                        ed.set_field(path, v);
                    }/>
            }
            .into_any()
        }
        Kind::Select(_) | Kind::Metric("type") => {
            let options = match kind {
                Kind::Select(options) => options,
                _ => METRICS,
            };
            let value = move || text.get();
            // A value the vocabulary lacks (a record's `tgi` where GCO
            // accepts `sglang`) is still shown as it is; its error says why.
            let choices = move || {
                let mut values: Vec<String> =
                    (options.values)(&ed).into_iter().map(String::from).collect();
                let current = text.get();
                if !current.is_empty() && !values.contains(&current) {
                    values.push(current);
                }
                values
            };
            view! {
                <select id=id.clone() aria-describedby=describedby.clone() aria-invalid=move || has_error().to_string()
                    prop:value=value on:change=move |ev| write(event_target_value(&ev))>
                    <option value="">{(options.none)()}</option>
                    {move || choices().into_iter().map(|v| {
                        // Options re-render when the server's list arrives;
                        // each keeps the selection itself.
                        let selected = v == text.get_untracked();
                        let label = v.clone();
                        view! { <option value=v selected=selected>{label}</option> }
                    }).collect_view()}
                </select>
            }
            .into_any()
        }
        Kind::Lines | Kind::Pairs => view! {
            <textarea id=id.clone() rows="3" aria-describedby=describedby.clone() aria-invalid=move || has_error().to_string()
                spellcheck="false" prop:value=move || text.get() on:input=move |ev| write(event_target_value(&ev))></textarea>
        }
        .into_any(),
        _ => view! {
            <input type="text" id=id.clone() aria-describedby=describedby.clone() aria-invalid=move || has_error().to_string()
                spellcheck="false" autocomplete="off" prop:value=move || text.get()
                on:input=move |ev| write(event_target_value(&ev))/>
        }
        .into_any(),
    };
    let hint = def.hint;
    view! {
        <div class="field" class:invalid=has_error data-path=def.diag>
            <label for=id.clone()>{def.label}</label>
            {input}
            {(!hint.is_empty()).then(|| view! { <p class="hint">{hint}</p> })}
            {(def.path == ["model_path"]).then(|| view! { <ModelPathNote ed=ed/> })}
            {matches!(kind, Kind::ByteSize).then(|| view! { <p class="hint size-note" class:error=bad_size>{move || size_note(&text.get())}</p> })}
            {matches!(kind, Kind::Pairs).then(|| view! { <p class="warning pairs-note">{move || pairs_note(&text.get())}</p> })}
            <ul class="messages" id=msg_id aria-live="polite">
                {move || shown().into_iter().map(|d| {
                    let class = if d.severity == Severity::Error { "error" } else { "warning" };
                    view! { <li class=class>{d.message}</li> }
                }).collect_view()}
            </ul>
        </div>
    }
}

/// The console's own note at "Model path" on SGLang: GCO hands the field
/// to no SGLang pod (its launcher takes the model from `MODEL`, or
/// `--model-path` among the extra arguments), and GCO's own refusal, at
/// `env.MODEL`, does not say so. One click moves the path into `MODEL`.
#[component]
fn ModelPathNote(ed: Editor) -> impl IntoView {
    let unread = move || {
        ed.state
            .with(gco_spec::framework::model_path_unread_by_sglang)
    };
    let use_it = move |_| {
        let moved = ed
            .state
            .with_untracked(gco_spec::framework::model_path_as_model);
        ed.replace(moved);
    };
    move || {
        unread().map(|_| {
            view! {
                <p class="warning model-path-note" role="note">
                    "GCO does not hand the model path to SGLang: its monitor starts SGLang with the model in the MODEL environment entry (or --model-path among the extra arguments), so this field serves nothing here."
                    <button type="button" on:click=use_it>"Use it as MODEL"</button>
                </p>
            }
        })
    }
}

/// A titled group of fields.
#[component]
pub fn Section(ed: Editor, title: &'static str, fields: &'static [FieldDef]) -> impl IntoView {
    view! {
        <fieldset class="section">
            <legend>{title}</legend>
            <div class="grid">
                {fields.iter().map(|def| view! { <Field ed=ed def=def/> }).collect_view()}
            </div>
        </fieldset>
    }
}
