//! The `gco inference` command lines that produce the same record, for
//! teammates who work with GCO's CLI (GCO_FACTS section 5). What no flag can
//! express is reported as a note naming the field, never dropped silently.

pub mod shell;
mod try_it;

pub use try_it::try_it_commands;

use crate::deploy::Deployment;
use crate::diagnostics::Diagnostic;
use crate::ecr::region_image_uris;
use crate::json::{Object, Value};
use crate::limits::{
    DEFAULT_GPU_COUNT, DEFAULT_HEALTH_CHECK_PATH, DEFAULT_NAMESPACE, DEFAULT_PORT, DEFAULT_REPLICAS,
};
use crate::mooncake::{Mode, Role};
use crate::ops::Change;
use crate::record::{DesiredState, Record};
use crate::spec::{MOONCAKE_FRAMEWORK, spec_mode};

/// Command lines, and what they cannot carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Commands {
    /// Shell-quoted, to run in order.
    pub lines: Vec<String>,
    /// Warnings naming each field the lines leave out.
    pub notes: Vec<Diagnostic>,
}

/// One command being written.
struct Line {
    args: Vec<String>,
}

impl Line {
    fn new(verb: &str, endpoint: &str) -> Line {
        Line {
            args: ["gco", "inference", verb, endpoint]
                .map(str::to_owned)
                .to_vec(),
        }
    }

    fn flag(&mut self, flag: &str, value: impl Into<String>) {
        self.args.push(flag.to_owned());
        self.args.push(value.into());
    }

    fn switch(&mut self, flag: &str) {
        self.args.push(flag.to_owned());
    }

    fn text(&self) -> String {
        shell::join(&self.args)
    }
}

impl Commands {
    fn note(&mut self, path: &str, message: impl Into<String>) {
        self.notes.push(Diagnostic::warning(path, message.into()));
    }

    fn no_flag(&mut self, path: &str) {
        self.note(
            path,
            format!("{path} has no `gco inference` flag; the commands leave it out"),
        );
    }

    fn push(&mut self, line: Line) {
        self.lines.push(line.text());
    }

    /// A flag value: text, or a whole number. Anything else is noted.
    fn arg(&mut self, path: &str, value: &Value) -> Option<String> {
        let text = match value {
            Value::Str(s) => s.as_str().map(str::to_owned),
            Value::Int(i) => Some(i.to_string()),
            _ => None,
        };
        match text {
            // A NUL byte cannot be passed in an argument.
            Some(t) if !t.contains('\0') => Some(t),
            _ => {
                self.note(
                    path,
                    format!(
                        "{path} ({}) cannot be given on a command line",
                        value.repr()
                    ),
                );
                None
            }
        }
    }
}

/// The commands that create `deployment`: `deploy`, then `configure-store`
/// for store settings deploy has no flag for.
pub fn deploy_commands(deployment: &Deployment) -> Commands {
    let mut out = Commands::default();
    let name = &deployment.endpoint_name;
    let spec = &deployment.spec;
    let mut deploy = Line::new("deploy", name);
    let mut store_line = None;

    if let Some(image) = spec.get("image") {
        flag(&mut out, &mut deploy, "-i", "spec.image", image);
    }
    for region in &deployment.target_regions {
        deploy.flag("-r", region.as_str());
    }
    let mode = spec_mode(spec);
    for (key, value) in spec.str_entries() {
        let key = key.to_string_lossy();
        let path = format!("spec.{key}");
        let differs = |default: Value| *value != default;
        match key.as_str() {
            "image" => {}
            "port" if differs(Value::int(DEFAULT_PORT)) => {
                flag(&mut out, &mut deploy, "--port", &path, value)
            }
            "replicas" if differs(Value::int(DEFAULT_REPLICAS)) => {
                flag(&mut out, &mut deploy, "--replicas", &path, value)
            }
            "gpu_count" if differs(Value::int(DEFAULT_GPU_COUNT)) => {
                flag(&mut out, &mut deploy, "--gpu-count", &path, value)
            }
            "gpu_type" => flag(&mut out, &mut deploy, "--gpu-type", &path, value),
            "port" | "replicas" | "gpu_count" => {}
            "health_check_path" if !differs(Value::str(DEFAULT_HEALTH_CHECK_PATH)) => {}
            // Deploy forces vllm for a mooncake endpoint.
            "framework" if mode.is_some() && value.as_str() == Some(MOONCAKE_FRAMEWORK) => {}
            // GCO's CLI has `--framework` (GCO_FACTS_NEWEST sections 5, 3.3).
            "framework" => flag(&mut out, &mut deploy, "--framework", &path, value),
            // Deploy writes the map itself from the image and the regions.
            "region_image_uris" => {
                if !rewrites_as_deploy(deployment, value) {
                    out.no_flag(&path);
                }
            }
            "env" => match value.as_object() {
                Some(env) => {
                    for (k, v) in env.str_entries() {
                        let entry_path = format!("spec.env.{}", k.to_string_lossy());
                        if let (Some(k), Some(v)) = (k.as_str(), out.arg(&entry_path, v)) {
                            deploy.flag("-e", format!("{k}={v}"));
                        }
                    }
                }
                None => out.no_flag(&path),
            },
            "mooncake" => store_line = mooncake_flags(&mut out, &mut deploy, name, spec, value),
            _ => out.no_flag(&path),
        }
    }
    // Deploy's own rewrite is on by default, so a spec without the map it
    // would write needs a note too.
    if !spec.contains_key("region_image_uris") && !rewrites_as_deploy(deployment, &Value::Null) {
        out.note(
            "spec.region_image_uris",
            "deploy writes per-region ECR image URIs that this spec does not have",
        );
    }
    if deployment.namespace != DEFAULT_NAMESPACE {
        out.no_flag("namespace");
    }
    if !deployment.labels.is_empty() {
        out.no_flag("labels");
    }
    out.push(deploy);
    if let Some(line) = store_line {
        out.push(line);
    }
    out
}

/// The commands that bring a stored endpoint to its state: deploy, then
/// `stop` or `delete` when it is stopped or deleted.
pub fn record_commands(record: &Record) -> Commands {
    let deployment = Deployment {
        endpoint_name: record.endpoint_name.clone(),
        spec: record.spec.clone(),
        target_regions: record.target_regions.clone(),
        namespace: record.namespace.clone(),
        labels: record.labels.clone(),
    };
    let mut out = deploy_commands(&deployment);
    let verb = match record.desired_state {
        DesiredState::Deploying | DesiredState::Running => None,
        DesiredState::Stopped => Some("stop"),
        DesiredState::Deleted => Some("delete"),
    };
    if let Some(verb) = verb {
        out.push(Line::new(verb, &record.endpoint_name));
    }
    out
}

/// The command for one change to a stored endpoint.
pub fn change_commands(record: &Record, change: &Change) -> Commands {
    let mut out = Commands::default();
    let name = &record.endpoint_name;
    // The history names each change by its `gco inference` command.
    let verb = change.kind().as_str();
    match change {
        Change::Scale { replicas } => {
            let mut line = Line::new(verb, name);
            flag(&mut out, &mut line, "--replicas", "replicas", replicas);
            out.push(line);
        }
        Change::SetTopology { prefill, decode } => {
            let mut line = Line::new(verb, name);
            flag(&mut out, &mut line, "--prefill", "prefill", prefill);
            flag(&mut out, &mut line, "--decode", "decode", decode);
            out.push(line);
        }
        Change::ConfigureStore { store } => {
            let current = record
                .spec
                .get("mooncake")
                .and_then(|m| m.as_object()?.get("store")?.as_object());
            let target = store.as_object().cloned().unwrap_or_default();
            // configure-store merges its flags into the current block, so a
            // key the new block drops would survive.
            for (key, _) in current.into_iter().flat_map(Object::str_entries) {
                if !target.contains_key(&key.to_string_lossy()) {
                    let path = format!("mooncake.store.{}", key.to_string_lossy());
                    out.note(
                        &path,
                        format!(
                            "configure-store cannot remove {path}; the CLI keeps its current value"
                        ),
                    );
                }
            }
            let line = store_flags(&mut out, name, &target);
            out.push(line);
        }
        Change::UpdateImage { image, with_proxy } => {
            let mut line = Line::new(verb, name);
            flag(&mut out, &mut line, "-i", "image", image);
            out.push(line);
            if with_proxy.is_true() {
                out.note(
                    "mooncake.proxy.image",
                    "the GCO CLI has no flag for the PD proxy's image: update-image leaves it as deployed",
                );
            }
        }
        Change::AddRegion { .. } | Change::RemoveRegion { .. } => {
            out.note(
                "target_regions",
                "the GCO CLI has no command to change an endpoint's regions",
            );
        }
        Change::Stop => out.push(Line::new(verb, name)),
        Change::Start => {
            out.push(Line::new(verb, name));
            // GCO's store answers None for an endpoint gone, or no longer
            // stopped when its conditional write lands.
            out.note(
                "desired_state",
                format!(
                    "if the endpoint is gone or no longer stopped when this runs, GCO's CLI answers: Endpoint '{name}' is not a stopped endpoint. If it was deleted or purged, redeploy it with 'gco inference deploy'."
                ),
            );
        }
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            let mut line = Line::new(verb, name);
            if let Some((key, value)) = expected_owner_label {
                line.flag("--expected-owner-label", format!("{key}={value}"));
            }
            if let Some(id) = expected_lifecycle_id {
                line.flag("--expected-lifecycle-id", id.as_str());
            }
            if expected_owner_label.is_some() || expected_lifecycle_id.is_some() {
                out.note(
                    "owner_label",
                    "--expected-owner-label and --expected-lifecycle-id are hidden options of GCO's CLI: its --help does not list them",
                );
            }
            out.push(line);
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => {
            let mut line = Line::new(verb, name);
            flag(&mut out, &mut line, "-i", "image", image);
            if let Some(weight) = weight {
                flag(&mut out, &mut line, "-w", "weight", weight);
            }
            if let Some(replicas) = replicas {
                flag(&mut out, &mut line, "-r", "replicas", replicas);
            }
            out.push(line);
        }
        Change::PromoteCanary => out.push(Line::new(verb, name)),
        Change::RollbackCanary => out.push(Line::new(verb, name)),
    }
    out
}

fn flag(out: &mut Commands, line: &mut Line, flag: &str, path: &str, value: &Value) {
    if let Some(v) = out.arg(path, value) {
        line.flag(flag, v);
    }
}

/// Whether deploy, rewriting the image for each region as it does by
/// default, writes exactly `uris` (`Null`: no map).
fn rewrites_as_deploy(deployment: &Deployment, uris: &Value) -> bool {
    let Some(image) = deployment.spec.get("image").and_then(Value::as_str) else {
        return true;
    };
    match (uris, region_image_uris(image, &deployment.target_regions)) {
        (Value::Null, expected) => expected.is_none(),
        (other, Some(expected)) => *other == Value::Object(expected),
        (_, None) => false,
    }
}

/// The deploy flags of a `mooncake` block; returns the `configure-store`
/// line its store settings need, if any.
fn mooncake_flags(
    out: &mut Commands,
    deploy: &mut Line,
    name: &str,
    spec: &Object,
    block: &Value,
) -> Option<Line> {
    let (Some(block), Some(mode)) = (block.as_object(), spec_mode(spec)) else {
        out.no_flag("spec.mooncake");
        return None;
    };
    let mut store_line = None;
    for (key, value) in block.str_entries() {
        let key = key.to_string_lossy();
        let path = format!("mooncake.{key}");
        match key.as_str() {
            "mode" => deploy.flag("--mooncake-mode", mode.as_str()),
            "topology" if mode.is_split() => {
                for role in [Role::Prefill, Role::Decode] {
                    let count = value
                        .as_object()
                        .and_then(|t| t.get(role.as_str()))
                        .unwrap_or(&Value::Null);
                    let flag_name = format!("--{}-replicas", role.as_str());
                    flag(
                        out,
                        deploy,
                        &flag_name,
                        &format!("{path}.{}", role.as_str()),
                        count,
                    );
                }
            }
            "transfer" => each_entry(out, deploy, &path, value, |key, _| match key {
                "protocol" => Entry::Flag("--mooncake-protocol"),
                "device_name" => Entry::Flag("--mooncake-device-name"),
                _ => Entry::NoFlag,
            }),
            "proxy" => {
                let spec_image = spec.get("image");
                each_entry(out, deploy, &path, value, |key, v| match key {
                    // Deploy defaults a split mode's proxy image to the image.
                    "image" if mode.is_split() && Some(v) == spec_image => Entry::Implied,
                    "image" => Entry::Flag("--mooncake-proxy-image"),
                    "admin_api_key_secret" => Entry::Flag("--mooncake-admin-key-secret"),
                    _ => Entry::NoFlag,
                })
            }
            "autoscaling" => autoscale_flags(out, deploy, value),
            "store" => store_line = deploy_store(out, deploy, name, mode, value),
            _ => out.no_flag(&path),
        }
    }
    store_line
}

/// How a sub-block's entry is given on the deploy line.
enum Entry {
    Flag(&'static str),
    /// Deploy writes it by itself.
    Implied,
    NoFlag,
}

/// The deploy flags of a sub-block's entries, as `entry` maps them.
fn each_entry(
    out: &mut Commands,
    deploy: &mut Line,
    path: &str,
    value: &Value,
    entry: impl Fn(&str, &Value) -> Entry,
) {
    let Some(map) = value.as_object() else {
        return out.no_flag(path);
    };
    for (key, v) in map.str_entries() {
        let key = key.to_string_lossy();
        let entry_path = format!("{path}.{key}");
        match entry(&key, v) {
            Entry::Flag(name) => flag(out, deploy, name, &entry_path, v),
            Entry::Implied => {}
            Entry::NoFlag => out.no_flag(&entry_path),
        }
    }
}

/// `--mooncake-autoscale ROLE:MIN:MAX[:METRIC:TARGET]`, one per metric.
/// Expressible only when enabled, with both bounds of each role given.
fn autoscale_flags(out: &mut Commands, deploy: &mut Line, value: &Value) {
    let mut flags = Vec::new();
    let expressible = value.as_object().is_some_and(|a| {
        a.get("enabled").is_some_and(Value::is_true)
            && a.str_entries().all(|(key, role_block)| match key.as_str() {
                Some("enabled") => true,
                Some(role @ ("prefill" | "decode")) => role_autoscale(role, role_block, &mut flags),
                _ => false,
            })
    });
    if !expressible {
        out.note(
            "mooncake.autoscaling",
            "mooncake.autoscaling can be given as --mooncake-autoscale flags only when enabled, with integer \
             min_replicas and max_replicas per role and metrics of a type and a numeric target; the commands \
             leave it out",
        );
        return;
    }
    for f in flags {
        deploy.flag("--mooncake-autoscale", f);
    }
}

fn role_autoscale(role: &str, block: &Value, flags: &mut Vec<String>) -> bool {
    let Some(block) = block.as_object() else {
        return false;
    };
    let bound = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_int)
            .map(ToString::to_string)
    };
    let (Some(min), Some(max)) = (bound("min_replicas"), bound("max_replicas")) else {
        return false;
    };
    if block.str_entries().any(|(k, _)| {
        !matches!(
            k.as_str(),
            Some("min_replicas" | "max_replicas" | "metrics")
        )
    }) {
        return false;
    }
    let head = format!("{role}:{min}:{max}");
    match block.get("metrics") {
        None => flags.push(head),
        Some(Value::List(metrics)) if !metrics.is_empty() => {
            for metric in metrics {
                let Some(m) = metric.as_object().filter(|m| m.len() == 2) else {
                    return false;
                };
                let kind = m
                    .get("type")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty() && !t.contains(':'));
                let target = match m.get("target") {
                    Some(Value::Int(i)) => i.to_string(),
                    Some(f @ Value::Float(x)) if x.is_finite() => f.repr(),
                    _ => return false,
                };
                let Some(kind) = kind else { return false };
                flags.push(format!("{head}:{kind}:{target}"));
            }
        }
        Some(_) => return false,
    }
    true
}

/// A store block at deploy: `--mooncake-cold-tier` when that is all it
/// says, else a `configure-store` line after the deploy.
fn deploy_store(
    out: &mut Commands,
    deploy: &mut Line,
    name: &str,
    mode: Mode,
    value: &Value,
) -> Option<Line> {
    let Some(store) = value.as_object() else {
        out.no_flag("mooncake.store");
        return None;
    };
    // What deploy's builder writes by itself for a store-bearing mode.
    let is = |key: &str| store.get(key).is_some_and(Value::is_true);
    if mode.has_store() && store.len() == 1 && is("enabled") {
        return None;
    }
    if mode.has_store() && store.len() == 2 && is("enabled") && is("cold_tier_enabled") {
        deploy.switch("--mooncake-cold-tier");
        return None;
    }
    Some(store_flags(out, name, store))
}

/// `configure-store` with a flag for each setting of `store`.
fn store_flags(out: &mut Commands, name: &str, store: &Object) -> Line {
    let mut line = Line::new("configure-store", name);
    for (key, value) in store.str_entries() {
        let key = key.to_string_lossy();
        let path = format!("mooncake.store.{key}");
        match (key.as_str(), value) {
            ("enabled", Value::Bool(on)) => line.switch(if *on {
                "--enable-store"
            } else {
                "--disable-store"
            }),
            ("cold_tier_enabled", Value::Bool(on)) => {
                line.switch(if *on { "--cold-tier" } else { "--no-cold-tier" })
            }
            ("offload", v) => flag(out, &mut line, "--offload", &path, v),
            ("global_segment_size", v) => flag(out, &mut line, "--global-segment-size", &path, v),
            ("local_buffer_size", v) => flag(out, &mut line, "--local-buffer-size", &path, v),
            _ => out.no_flag(&path),
        }
    }
    line
}
