//! Deploy: a deploy request (the parameters of the reference's `deploy()`)
//! to the spec and record GCO stores.

use crate::diagnostics::{Diagnostic, Report};
use crate::ecr::region_image_uris;
use crate::framework::Frameworks;
use crate::json::{Object, Value};
use crate::limits::{
    DEFAULT_ACCELERATOR, DEFAULT_GPU_COUNT, DEFAULT_HEALTH_CHECK_PATH, DEFAULT_MOONCAKE_IMAGE,
    DEFAULT_NAMESPACE, DEFAULT_PORT, DEFAULT_REPLICAS, MOONCAKE_DEFAULT_INSTANCES,
};
use crate::mooncake::{Assembled, BuildArgs, Mode, assemble_mooncake_block, check_mooncake};
use crate::names::{endpoint_name_issues, is_region};
use crate::record::{DesiredState, Record, ingress_path};
use crate::region::MonitorSettings;
use crate::spec::MOONCAKE_FRAMEWORK;
use crate::spec::check_spec_fields;
use crate::suggest::did_you_mean;

/// Every key a deploy request may have (the parameters of `deploy()`).
const REQUEST_KEYS: [&str; 28] = [
    "endpoint_name",
    "image",
    "target_regions",
    "replicas",
    "gpu_count",
    "gpu_type",
    "port",
    "model_path",
    "model_source",
    "health_check_path",
    "env",
    "namespace",
    "labels",
    "autoscaling",
    "capacity_type",
    "extra_args",
    "accelerator",
    "node_selector",
    "rewrite_image",
    "framework",
    "mooncake_mode",
    "prefill_replicas",
    "decode_replicas",
    "mooncake_store",
    "mooncake_transfer",
    "mooncake_proxy",
    "mooncake_autoscaling",
    // Accepted so a request can carry the block directly, as a spec does.
    "mooncake",
];

/// The index of a request field in [`REQUEST_KEYS`], found when compiling.
macro_rules! field {
    ($key:literal) => {
        const { field_index($key) }
    };
}

const fn field_index(key: &str) -> usize {
    let mut i = 0;
    while i < REQUEST_KEYS.len() {
        let known = REQUEST_KEYS[i].as_bytes();
        let (a, b) = (known, key.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a deploy request field")
}

/// A deploy request taken apart. One pass over its members finds each known
/// field (and warns about the others), so reading a field is an index, not
/// a search of the request; a member moves out with its key.
struct Fields {
    entries: Vec<(Value, Value)>,
    /// Per field of [`REQUEST_KEYS`], its entry while it has not been taken.
    at: [Option<usize>; REQUEST_KEYS.len()],
}

impl Fields {
    fn classify(req: Object, report: &mut Report) -> Fields {
        let entries = req.into_entries();
        let mut at = [None; REQUEST_KEYS.len()];
        for (i, (key, _)) in entries.iter().enumerate() {
            let Value::Str(key) = key else { continue };
            if let Some(field) = REQUEST_KEYS.iter().position(|known| key.eq_str(known)) {
                at[field] = Some(i);
                continue;
            }
            let key = key.to_string_lossy();
            let hint = did_you_mean(&key, &REQUEST_KEYS)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            report.push(Diagnostic::warning(
                key.clone(),
                format!(
                    "unknown deploy field {}, which is ignored{hint}",
                    crate::pyrepr::repr_text(&key)
                ),
            ));
        }
        Fields { entries, at }
    }

    /// The field's key and value, moved out; `None` when absent.
    fn take_entry(&mut self, field: usize) -> Option<(Value, Value)> {
        let i = self.at[field].take()?;
        Some(std::mem::replace(
            &mut self.entries[i],
            (Value::Null, Value::Null),
        ))
    }

    /// The field's value as given (a null stays null).
    fn take_given(&mut self, field: usize) -> Option<Value> {
        self.take_entry(field).map(|(_, v)| v)
    }

    /// The field's value, `None` when absent or null, as `deploy()`'s
    /// defaults read it.
    fn take(&mut self, field: usize) -> Option<Value> {
        self.take_given(field).filter(|v| !v.is_null())
    }
}

/// Optional request fields copied into the spec when truthy (as `deploy()`
/// does with `if gpu_type:`), in spec order, with the spec's name for the
/// one it renames.
const OPTIONAL_SPEC_FIELDS: [(usize, Option<&str>); 7] = [
    (field!("gpu_type"), None),
    (field!("model_path"), None),
    (field!("model_source"), None),
    (field!("env"), None),
    (field!("autoscaling"), None),
    (field!("capacity_type"), None),
    (field!("extra_args"), Some("args")),
];

/// What a deploy needs from its surroundings.
#[derive(Debug, Clone)]
pub struct DeployContext<'a> {
    /// Regions with GCO infrastructure: the default target regions. `None`
    /// when not known here (a file check): a request without target regions
    /// is then not an error.
    pub deployed_regions: Option<&'a [String]>,
    /// The image a mooncake deploy without one gets.
    pub default_image: &'a str,
    /// The frameworks the team's GCO accepts.
    pub frameworks: Frameworks,
}

impl Default for DeployContext<'_> {
    fn default() -> Self {
        DeployContext {
            deployed_regions: None,
            default_image: DEFAULT_MOONCAKE_IMAGE,
            frameworks: Frameworks::CURRENT,
        }
    }
}

/// A checked deploy, ready to become a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub endpoint_name: String,
    pub spec: Object,
    pub target_regions: Vec<String>,
    pub namespace: String,
    pub labels: Object,
}

/// The outcome of [`plan_deploy`]: the deployment when there is no error,
/// and every diagnostic either way.
#[derive(Debug, Clone, PartialEq)]
pub struct DeployCheck {
    pub deployment: Option<Deployment>,
    pub report: Report,
}

/// Checks a deploy request and assembles the spec `deploy()` would store,
/// in its key order. Every problem is reported; the first error of the
/// mooncake block is the reference's message.
pub fn plan_deploy(request: &Value, ctx: &DeployContext<'_>) -> DeployCheck {
    plan_deploy_owned(request.clone(), ctx)
}

/// [`plan_deploy`] for a request the caller no longer needs: its values
/// move into the spec instead of being copied.
pub fn plan_deploy_owned(request: Value, ctx: &DeployContext<'_>) -> DeployCheck {
    plan_deploy_in(request, ctx, None)
}

/// [`plan_deploy`] where what each region's monitor is configured with is
/// known (the console's `--monitor-settings`): a target region whose
/// monitor would need a master image and has none, neither in the block nor
/// in its settings, gets a warning at `mooncake.store.master_image`.
pub fn plan_deploy_with_monitors(
    request: Value,
    ctx: &DeployContext<'_>,
    monitors: &MonitorSettings,
) -> DeployCheck {
    plan_deploy_in(request, ctx, Some(monitors))
}

fn plan_deploy_in(
    request: Value,
    ctx: &DeployContext<'_>,
    monitors: Option<&MonitorSettings>,
) -> DeployCheck {
    let mut report = Report::default();
    // A value GCO's table could not hold as sent refuses the request
    // wherever it is, known field or not.
    let unstorable = crate::table::unstorable_value(&request);
    let Value::Object(req) = request else {
        report.push(Diagnostic::error("", "a deploy request must be a mapping"));
        return DeployCheck {
            deployment: None,
            report,
        };
    };

    let mut req = Fields::classify(req, &mut report);

    // Image: only a missing image falls back, and only for a mooncake deploy.
    let mode_value = req.take(field!("mooncake_mode"));
    let mut image = req.take(field!("image"));
    if image.is_none() && mode_value.is_some() {
        image = Some(Value::str(ctx.default_image));
    }

    let given_block = req.take(field!("mooncake"));
    let block = match (mode_value, given_block) {
        (Some(mode), given) => {
            if given.is_some() {
                report.push(Diagnostic::warning(
                    "mooncake",
                    "mooncake is ignored: mooncake_mode is given, and the block is built from it and its fields (prefill_replicas, mooncake_store, ...)",
                ));
            }
            // A null count is passed on as None, which the rules refuse.
            let count = |v: Option<Value>| v.unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES));
            let (prefill, decode) = (
                req.take_given(field!("prefill_replicas")),
                req.take_given(field!("decode_replicas")),
            );
            let args = BuildArgs {
                mode,
                prefill_replicas: count(prefill),
                decode_replicas: count(decode),
                store: req.take(field!("mooncake_store")),
                transfer: req.take(field!("mooncake_transfer")),
                proxy: req.take(field!("mooncake_proxy")),
                autoscaling: req.take(field!("mooncake_autoscaling")),
                default_proxy_image: image.clone(),
            };
            mooncake_from_args(args, &mut report)
        }
        (None, Some(block)) => {
            report.extend(check_mooncake(&block));
            Some(block)
        }
        (None, None) => None,
    };
    let mode = block
        .as_ref()
        .and_then(|b| b.as_object()?.get("mode")?.as_str().and_then(Mode::parse));

    let endpoint_name = match req.take(field!("endpoint_name")) {
        Some(Value::Str(s)) => {
            let name = s.to_string_lossy();
            // Text the table cannot hold (a lone surrogate) is refused as
            // such; its lossy form would only misname the Service.
            let storable = s.as_str().is_some();
            for issue in endpoint_name_issues(&name, mode)
                .into_iter()
                .filter(|i| storable || !matches!(i, crate::names::NameIssue::NotServiceName(_)))
            {
                let d = if issue.is_error() {
                    Diagnostic::error
                } else {
                    Diagnostic::warning
                };
                report.push(d("endpoint_name", issue.message(&name)));
            }
            name
        }
        Some(other) => {
            report.push(Diagnostic::error(
                "endpoint_name",
                format!("endpoint_name must be a string, got {}", other.repr()),
            ));
            String::new()
        }
        None => {
            report.push(Diagnostic::error(
                "endpoint_name",
                "endpoint_name is required",
            ));
            String::new()
        }
    };

    if image.is_none() {
        report.push(Diagnostic::error(
            "image",
            "an image is required (pass image, or set mooncake_mode to use the default upstream Mooncake-enabled vLLM image)",
        ));
    }

    let target_regions = target_regions(
        req.take(field!("target_regions")).as_ref(),
        ctx,
        &mut report,
    );
    let namespace = match req.take(field!("namespace")) {
        None => DEFAULT_NAMESPACE.to_owned(),
        Some(Value::Str(s)) if crate::names::is_dns_label(&s.to_string_lossy()) => {
            s.to_string_lossy()
        }
        Some(other) => {
            report.push(Diagnostic::error(
                "namespace",
                format!("namespace must be a DNS label, got {}", other.repr()),
            ));
            String::new()
        }
    };
    let labels = string_map(req.take(field!("labels")), "labels", &mut report);
    check_labels(&labels, &mut report);
    let rewrite = match req.take(field!("rewrite_image")) {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            report.push(Diagnostic::error(
                "rewrite_image",
                format!("rewrite_image must be a boolean, got {}", other.repr()),
            ));
            true
        }
    };

    // GCO's monitors refuse addresses outside their region. With no target
    // regions known (a file check of a request naming none), no region's
    // monitor is known either, so nothing is checked.
    if let Some(block) = &block {
        crate::scope::check_scope(block, &target_regions, "", &mut report);
        if let (Some(monitors), Some(mode), Some(block)) = (monitors, mode, block.as_object()) {
            check_master_images(block, mode, &target_regions, monitors, &mut report);
        }
    }

    let image_missing = image.is_none();
    let spec = assemble_spec(
        req,
        image,
        block,
        mode,
        rewrite.then_some(&target_regions[..]),
    );
    // The block was checked above, with the reference's order of errors.
    let mut fields = Report::default();
    check_spec_fields(&spec, &ctx.frameworks, &mut fields);
    for d in fields.diagnostics {
        if !(d.path == "image" && image_missing) {
            report.push(in_request_terms(d));
        }
    }
    report.diagnostics.extend(unstorable);
    report.sort();
    let deployment = report.is_ok().then_some(Deployment {
        endpoint_name,
        spec,
        target_regions,
        namespace,
        labels,
    });
    DeployCheck { deployment, report }
}

/// GCO has no default master image: the monitor takes
/// `store.master_image`, else its own `MOONCAKE_MASTER_IMAGE`; with neither
/// it cannot create the shared master a store mode or RDMA transfer needs
/// (GCO_FACTS_NEWEST 4.6, as read), and the region stays creating.
fn check_master_images(
    block: &Object,
    mode: Mode,
    target_regions: &[String],
    monitors: &MonitorSettings,
    report: &mut Report,
) {
    let in_block = block
        .get("store")
        .and_then(Value::as_object)
        .and_then(|s| s.get("master_image"))
        .and_then(Value::as_str)
        .is_some_and(|i| !i.trim().is_empty());
    if in_block || !(crate::plan::Block { mode, block }).needs_master() {
        return;
    }
    for region in target_regions {
        if monitors.context(region).master_image().is_none() {
            report.push(Diagnostic::warning(
                "mooncake.store.master_image",
                format!(
                    "{region} has no master image: its monitor needs one for the shared mooncake-master (a store mode, or RDMA transfer), and GCO has no default. Set the master image here, or give {region}'s monitor MOONCAKE_MASTER_IMAGE (and the console's --monitor-settings); with neither the region stays creating (as read)"
                ),
            ));
        }
    }
}

/// A diagnostic of the assembled spec, named as the request names the field
/// (`extra_args[0]`, not the spec's `args[0]`): the request is what its
/// author wrote and what an editor marks. The spec's checks begin their
/// messages with the path, so both change together.
fn in_request_terms(mut d: Diagnostic) -> Diagnostic {
    for (field, renamed) in OPTIONAL_SPEC_FIELDS {
        let Some(spec_key) = renamed else { continue };
        let Some(rest) = d.path.strip_prefix(spec_key) else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with(['[', '.'])) {
            continue;
        }
        let path = format!("{}{rest}", REQUEST_KEYS[field]);
        if let Some(after) = d.message.strip_prefix(d.path.as_str()) {
            d.message = format!("{path}{after}");
        }
        d.path = path;
        break;
    }
    d
}

/// Builds the block as the reference does: its first error is the reference's
/// message; the rest of the block's problems follow it.
fn mooncake_from_args(args: BuildArgs, report: &mut Report) -> Option<Value> {
    let Assembled {
        block,
        authoring_error,
    } = assemble_mooncake_block(args);
    match (block, authoring_error) {
        // The collecting check's first error is the one the reference's
        // validation raises, so the block is checked once.
        (Ok(block), None) => {
            report.extend(check_mooncake(&block));
            Some(block)
        }
        (block, Some(first)) => {
            report.push(Diagnostic::error(first.path.clone(), first.message.clone()));
            for d in block.iter().flat_map(|b| check_mooncake(b).diagnostics) {
                if d.message != first.message {
                    report.push(d);
                }
            }
            None
        }
        (Err(first), None) => {
            report.push(Diagnostic::error(first.path, first.message));
            None
        }
    }
}

fn target_regions(
    value: Option<&Value>,
    ctx: &DeployContext<'_>,
    report: &mut Report,
) -> Vec<String> {
    let mut regions: Vec<String> = Vec::new();
    match value {
        None => {}
        Some(Value::List(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_str() {
                    Some(r) if is_region(r) => {
                        if !regions.iter().any(|x| x == r) {
                            regions.push(r.to_owned());
                        }
                    }
                    _ => report.push(Diagnostic::error(
                        format!("target_regions[{i}]"),
                        format!(
                            "target_regions[{i}] must be an AWS region such as 'us-east-1', got {}",
                            item.repr()
                        ),
                    )),
                }
            }
        }
        Some(other) => report.push(Diagnostic::error(
            "target_regions",
            format!(
                "target_regions must be a list of regions, got {}",
                other.repr()
            ),
        )),
    }
    if regions.is_empty() && value.is_none_or(|v| matches!(v, Value::List(l) if l.is_empty())) {
        let Some(deployed) = ctx.deployed_regions else {
            return regions;
        };
        regions = deployed.to_vec();
        if regions.is_empty() {
            report.push(Diagnostic::error(
                "target_regions",
                "No deployed regions found. Deploy infrastructure first.",
            ));
        }
    }
    regions
}

fn string_map(value: Option<Value>, field: &str, report: &mut Report) -> Object {
    let Some(value) = value else {
        return Object::new();
    };
    let Value::Object(map) = value else {
        report.push(Diagnostic::error(
            field,
            format!("{field} must be a mapping of strings, got {}", value.repr()),
        ));
        return Object::new();
    };
    for (k, v) in map.str_entries() {
        if !matches!(v, Value::Str(_)) {
            let path = format!("{field}.{}", k.to_string_lossy());
            report.push(Diagnostic::error(
                path.clone(),
                format!("{path} must be a string, got {}", v.repr()),
            ));
        }
    }
    map
}

/// Labels Kubernetes would refuse on the objects GCO's monitor labels with
/// them (as read): a key or value that is not a label's is an error there.
fn check_labels(labels: &Object, report: &mut Report) {
    let repr = crate::pyrepr::repr_text;
    for (key, value) in labels.str_entries() {
        let key = key.to_string_lossy();
        let path = format!("labels.{key}");
        if !crate::names::is_label_key(&key) {
            report.push(Diagnostic::error(
                path.clone(),
                format!(
                    "labels key {} is not a Kubernetes label key ([prefix/]name: the name 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): Kubernetes refuses it",
                    repr(&key)
                ),
            ));
        } else if let Some(v) = value.as_str()
            && !crate::names::is_label_value(v)
        {
            report.push(Diagnostic::error(
                path.clone(),
                format!(
                    "{path} value {} is not a Kubernetes label value (empty, or 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): Kubernetes refuses it",
                    repr(v)
                ),
            ));
        }
    }
}

/// The spec in `deploy()`'s key order, leaving out empty optional keys; the
/// request's remaining fields move into it (with their keys, where the spec
/// keeps the request's name). Its keys are distinct by construction.
fn assemble_spec(
    mut req: Fields,
    image: Option<Value>,
    block: Option<Value>,
    mode: Option<Mode>,
    rewrite_regions: Option<&[String]>,
) -> Object {
    let mut spec = Object::with_capacity(SPEC_CAPACITY);
    let image = image.unwrap_or(Value::Null);
    let rewritten = match (rewrite_regions, image.as_str()) {
        (Some(regions), Some(image)) => region_image_uris(image, regions),
        _ => None,
    };
    spec.push_new(Value::str("image"), image);
    move_or(&mut spec, &mut req, field!("port"), || {
        Value::int(DEFAULT_PORT)
    });
    move_or(&mut spec, &mut req, field!("replicas"), || {
        Value::int(DEFAULT_REPLICAS)
    });
    move_or(&mut spec, &mut req, field!("gpu_count"), || {
        Value::int(DEFAULT_GPU_COUNT)
    });
    move_or(&mut spec, &mut req, field!("health_check_path"), || {
        Value::str(DEFAULT_HEALTH_CHECK_PATH)
    });
    // Newer GCO: Mooncake runs on vLLM only, so a mode forces it.
    if !move_if(&mut spec, &mut req, field!("framework"), None, |_| true) && mode.is_some() {
        spec.push_new(Value::str("framework"), Value::str(MOONCAKE_FRAMEWORK));
    }
    if let Some(uris) = rewritten {
        spec.push_new(Value::str("region_image_uris"), Value::Object(uris));
    }
    for (field, renamed) in OPTIONAL_SPEC_FIELDS {
        move_if(&mut spec, &mut req, field, renamed, Value::is_truthy);
    }
    move_if(&mut spec, &mut req, field!("accelerator"), None, |a| {
        a.as_str() != Some(DEFAULT_ACCELERATOR)
    });
    move_if(
        &mut spec,
        &mut req,
        field!("node_selector"),
        None,
        Value::is_truthy,
    );
    if let Some(block) = block {
        spec.push_new(Value::str("mooncake"), block);
    }
    spec
}

/// Room for every key a spec can have, so building one never reallocates.
const SPEC_CAPACITY: usize = crate::spec::SPEC_KEYS.len();

/// Moves a request field into the spec under its name, or `default()` when
/// it is absent or null.
fn move_or(spec: &mut Object, req: &mut Fields, field: usize, default: impl FnOnce() -> Value) {
    if !move_if(spec, req, field, None, |_| true) {
        spec.push_new(Value::str(REQUEST_KEYS[field]), default());
    }
}

/// Moves a request field into the spec (under `renamed`, or with its own
/// key) when it is present, not null and `keep` holds; whether it did.
fn move_if(
    spec: &mut Object,
    req: &mut Fields,
    field: usize,
    renamed: Option<&str>,
    keep: impl FnOnce(&Value) -> bool,
) -> bool {
    match req.take_entry(field) {
        Some((key, value)) if !value.is_null() && keep(&value) => {
            let key = renamed.map_or(key, Value::str);
            spec.push_new(key, value);
            true
        }
        _ => false,
    }
}

/// Tokens a new record needs; the caller supplies randomness.
pub trait TokenSource {
    /// 64 lowercase hex characters.
    fn token(&mut self) -> String;
}

impl<F: FnMut() -> String> TokenSource for F {
    fn token(&mut self) -> String {
        self()
    }
}

/// The record `create_endpoint` writes for a deployment at `now`.
pub fn new_record(d: Deployment, now: &str, tokens: &mut impl TokenSource) -> Record {
    let mut region_generations = Object::new();
    for region in &d.target_regions {
        region_generations.insert(region, tokens.token());
    }
    Record {
        ingress_path: ingress_path(&d.endpoint_name),
        desired_state: DesiredState::Deploying,
        cleanup_regions: Some(d.target_regions.clone()),
        target_regions: d.target_regions,
        namespace: d.namespace,
        spec: d.spec,
        labels: d.labels,
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
        region_status: Object::new(),
        lifecycle_id: Some(tokens.token()),
        region_generations: Some(region_generations),
        deletion_generation: None,
        deletion_regions: None,
        extra: Object::new(),
        endpoint_name: d.endpoint_name,
    }
}

/// Spec keys a deploy request cannot carry: derived from the image and the
/// regions (`region_image_uris`, which deploy writes again), or written by
/// other operations (`canary`).
const DERIVED_SPEC_KEYS: [&str; 2] = ["region_image_uris", "canary"];

/// A deploy request that makes a record like `record`, as a starting point
/// for another endpoint (the console's Clone): its spec's fields under
/// their request names, the block as it is, its regions, namespace and
/// labels, and the name with `-copy` appended (a deploy under the same
/// name would find it taken).
pub fn request_of_record(record: &Record) -> Value {
    let mut request = Object::new();
    request.insert(
        REQUEST_KEYS[field!("endpoint_name")],
        format!("{}-copy", record.endpoint_name),
    );
    for (key, value) in record.spec.str_entries() {
        let key = key.to_string_lossy();
        if DERIVED_SPEC_KEYS.contains(&key.as_str()) {
            continue;
        }
        // The one field deploy renames: the request's `extra_args`.
        let renamed = OPTIONAL_SPEC_FIELDS
            .iter()
            .find(|(_, spec_key)| *spec_key == Some(key.as_str()))
            .map_or(key.as_str(), |(field, _)| REQUEST_KEYS[*field]);
        request.insert(renamed, value.clone());
    }
    request.insert(
        REQUEST_KEYS[field!("target_regions")],
        Value::List(
            record
                .target_regions
                .iter()
                .map(|r| Value::str(r))
                .collect(),
        ),
    );
    request.insert(REQUEST_KEYS[field!("namespace")], record.namespace.as_str());
    if !record.labels.is_empty() {
        request.insert(REQUEST_KEYS[field!("labels")], record.labels.clone());
    }
    block_as_fields(Value::Object(request))
}

/// The request fields that build a block (besides `mooncake_mode`): given
/// without a mode, deploy ignores them.
const BLOCK_FIELDS: [usize; 6] = [
    field!("prefill_replicas"),
    field!("decode_replicas"),
    field!("mooncake_store"),
    field!("mooncake_transfer"),
    field!("mooncake_proxy"),
    field!("mooncake_autoscaling"),
];

/// A request that gives the `mooncake` block as is (a Clone, a link) with
/// the block split into the fields an editor's form shows (`mooncake_mode`,
/// `prefill_replicas`, `mooncake_store`, ...), when deploy builds exactly
/// that block from them; otherwise the request unchanged. A block the
/// builder would change (a split mode without `proxy.image`, a store-bearing
/// mode without `store.enabled`, a key out of the reference's order) stays
/// a block.
pub fn block_as_fields(request: Value) -> Value {
    let Value::Object(req) = request else {
        return request;
    };
    match split_block(&req) {
        Some(split) => Value::Object(split),
        None => Value::Object(req),
    }
}

fn split_block(req: &Object) -> Option<Object> {
    let mode_key = REQUEST_KEYS[field!("mooncake_mode")];
    if req.contains_key(mode_key)
        || BLOCK_FIELDS
            .iter()
            .any(|f| req.contains_key(REQUEST_KEYS[*f]))
    {
        return None;
    }
    let block = req.get("mooncake")?.as_object()?;
    let mode = block.get("mode").filter(|m| !m.is_null())?.clone();
    let image = req
        .get(REQUEST_KEYS[field!("image")])
        .filter(|i| !i.is_null())
        .cloned();
    // Without an image, deploy defaults the proxy's to the server's, which
    // is not known here.
    if image.is_none()
        && Mode::of(&mode).is_some_and(Mode::is_split)
        && block
            .get("proxy")
            .is_none_or(|p| p.as_object().is_none_or(|p| !p.contains_key("image")))
    {
        return None;
    }
    let topology = block.get("topology").and_then(Value::as_object);
    let count = |role: &str| topology.and_then(|t| t.get(role)).cloned();
    let (prefill, decode) = (count("prefill"), count("decode"));
    let part = |key: &str| block.get(key).cloned();
    let (store, transfer, proxy, autoscaling) = (
        part("store"),
        part("transfer"),
        part("proxy"),
        part("autoscaling"),
    );
    // The parts are cloned one by one, not `BuildArgs` whole: its derived
    // `Clone` costs the npm package 3 KB.
    let args = BuildArgs {
        mode: mode.clone(),
        prefill_replicas: prefill
            .clone()
            .unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES)),
        decode_replicas: decode
            .clone()
            .unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES)),
        store: store.clone(),
        transfer: transfer.clone(),
        proxy: proxy.clone(),
        autoscaling: autoscaling.clone(),
        default_proxy_image: image,
    };
    let built = assemble_mooncake_block(args).authored().ok()?;
    if built.to_json() != Value::Object(block.clone()).to_json() {
        return None;
    }
    let mut out = Object::new();
    for (key, value) in req.iter() {
        if key.as_str() != Some("mooncake") {
            out.push_new(key.clone(), value.clone());
            continue;
        }
        out.insert(mode_key, mode.clone());
        let given = [
            (field!("prefill_replicas"), prefill.clone()),
            (field!("decode_replicas"), decode.clone()),
            (field!("mooncake_store"), store.clone()),
            (field!("mooncake_transfer"), transfer.clone()),
            (field!("mooncake_proxy"), proxy.clone()),
            (field!("mooncake_autoscaling"), autoscaling.clone()),
        ];
        for (field, value) in given {
            if let Some(v) = value {
                out.insert(REQUEST_KEYS[field], v);
            }
        }
    }
    Some(out)
}
