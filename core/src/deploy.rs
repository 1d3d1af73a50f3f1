//! Deploy: a deploy request (the parameters of the reference's `deploy()`)
//! to the spec and record GCO stores.

use crate::diagnostics::{Diagnostic, Report};
use crate::ecr::region_image_uris;
use crate::framework::{Frameworks, check_framework};
use crate::json::{Object, Value};
use crate::limits::{
    DEFAULT_ACCELERATOR, DEFAULT_GPU_COUNT, DEFAULT_HEALTH_CHECK_PATH, DEFAULT_MOONCAKE_IMAGE,
    DEFAULT_PORT, DEFAULT_REPLICAS, MOONCAKE_DEFAULT_INSTANCES,
};
use crate::mooncake::{
    Assembled, BuildArgs, Mode, assemble_mooncake_block, check_mooncake, needs_shared_master,
};
use crate::names::is_region;
use crate::record::{DesiredState, Record, ingress_path};
use crate::region::MonitorSettings;
use crate::spec::MOONCAKE_FRAMEWORK;
use crate::spec::check_spec_values;
use crate::suggest::did_you_mean;

mod fields;
mod request;

pub use request::DeployRequest;

/// A deploy request's key, checked against [`DeployRequest::KEYS`] when
/// compiling.
macro_rules! key {
    ($key:literal) => {
        const { request::checked_key($key) }
    };
}
use request::non_null;

/// Warns about each member that is no parameter of `deploy()`.
fn warn_unknown(unknown: &[(Value, Value)], report: &mut Report) {
    for (key, _) in unknown {
        let key = match key {
            Value::Str(text) => text.to_string_lossy(),
            other => other.to_json(),
        };
        let hint = did_you_mean(&key, DeployRequest::KEYS)
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
}

/// Optional request fields copied into the spec when truthy (as `deploy()`
/// does with `if gpu_type:`), in spec order, with the spec's name for the
/// one it renames.
const OPTIONAL_SPEC_FIELDS: [(&str, Option<&str>); 7] = [
    (key!("gpu_type"), None),
    (key!("model_path"), None),
    (key!("model_source"), None),
    (key!("env"), None),
    (key!("autoscaling"), None),
    (key!("capacity_type"), None),
    (key!("extra_args"), Some("args")),
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

    let mut req = DeployRequest::from_object(req);
    warn_unknown(&req.unknown, &mut report);
    // GCO's deploy checks the framework first, before it builds the block.
    check_framework(
        &fields::framework_fields(&req),
        &ctx.frameworks,
        &mut report,
    );

    // Image: only a missing image falls back, and only for a mooncake deploy.
    let mode_value = non_null(req.mooncake_mode.take());
    let image = non_null(req.image.take())
        .or_else(|| mode_value.is_some().then(|| Value::str(ctx.default_image)));
    let block = request_block(&mut req, mode_value, image.as_ref(), &mut report);
    let mode = block
        .as_ref()
        .and_then(|b| b.as_object()?.get("mode")?.as_str().and_then(Mode::parse));

    let endpoint_name =
        fields::endpoint_name(non_null(req.endpoint_name.take()), mode, &mut report);

    if image.is_none() {
        report.push(Diagnostic::error(
            "image",
            "an image is required (pass image, or set mooncake_mode to use the default upstream Mooncake-enabled vLLM image)",
        ));
    }

    let target_regions = target_regions(
        non_null(req.target_regions.take()).as_ref(),
        ctx,
        &mut report,
    );
    let namespace = fields::namespace(non_null(req.namespace.take()), &mut report);
    let labels = string_map(non_null(req.labels.take()), "labels", &mut report);
    check_labels(&labels, &mut report);
    let rewrite = fields::rewrite_image(non_null(req.rewrite_image.take()), &mut report);

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
    check_spec_values(&spec, &mut fields);
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

/// The request's mooncake block: built from `mooncake_mode` (`mode`) and
/// its fields, else the block as given (checked), else none.
fn request_block(
    req: &mut DeployRequest,
    mode: Option<Value>,
    image: Option<&Value>,
    report: &mut Report,
) -> Option<Value> {
    let given_block = non_null(req.mooncake.take());
    match (mode, given_block) {
        (Some(mode), given) => {
            if given.is_some() {
                report.push(Diagnostic::warning(
                    "mooncake",
                    "mooncake is ignored: mooncake_mode is given, and the block is built from it and its fields (prefill_replicas, mooncake_store, ...)",
                ));
            }
            // A null count is passed on as None, which the rules refuse.
            let count = |v: Option<Value>| v.unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES));
            let (prefill, decode) = (req.prefill_replicas.take(), req.decode_replicas.take());
            let args = BuildArgs {
                mode,
                prefill_replicas: count(prefill),
                decode_replicas: count(decode),
                store: non_null(req.mooncake_store.take()),
                transfer: non_null(req.mooncake_transfer.take()),
                proxy: non_null(req.mooncake_proxy.take()),
                autoscaling: non_null(req.mooncake_autoscaling.take()),
                default_proxy_image: image.cloned(),
            };
            mooncake_from_args(args, report)
        }
        (None, Some(block)) => {
            report.extend(check_mooncake(&block));
            Some(block)
        }
        (None, None) => None,
    }
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
    if in_block || !needs_shared_master(mode, block) {
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
        let path = format!("{field}{rest}");
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
        let path = || format!("labels.{key}");
        if !crate::names::is_label_key(&key) {
            report.push(Diagnostic::error(
                path(),
                format!(
                    "labels key {} is not a Kubernetes label key ([prefix/]name: the name 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): Kubernetes refuses it",
                    repr(&key)
                ),
            ));
        } else if let Some(v) = value.as_str()
            && !crate::names::is_label_value(v)
        {
            let path = path();
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
    mut req: DeployRequest,
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
    let mut move_or = |key: &str, default: Value| {
        let value = non_null(req.field_mut(key).and_then(Option::take));
        spec.push_new(Value::str(key), value.unwrap_or(default));
    };
    move_or("port", Value::int(DEFAULT_PORT));
    move_or("replicas", Value::int(DEFAULT_REPLICAS));
    move_or("gpu_count", Value::int(DEFAULT_GPU_COUNT));
    move_or("health_check_path", Value::str(DEFAULT_HEALTH_CHECK_PATH));
    // Newer GCO: Mooncake runs on vLLM only, so a mode forces it.
    match non_null(req.framework.take()) {
        Some(framework) => spec.push_new(Value::str("framework"), framework),
        None if mode.is_some() => {
            spec.push_new(Value::str("framework"), Value::str(MOONCAKE_FRAMEWORK));
        }
        None => {}
    }
    if let Some(uris) = rewritten {
        spec.push_new(Value::str("region_image_uris"), Value::Object(uris));
    }
    let mut move_if = |key: &str, renamed: Option<&str>, keep: &dyn Fn(&Value) -> bool| {
        if let Some(value) = non_null(req.field_mut(key).and_then(Option::take))
            && keep(&value)
        {
            spec.push_new(Value::str(renamed.unwrap_or(key)), value);
        }
    };
    for (key, renamed) in OPTIONAL_SPEC_FIELDS {
        move_if(key, renamed, &Value::is_truthy);
    }
    move_if("accelerator", None, &|a| {
        a.as_str() != Some(DEFAULT_ACCELERATOR)
    });
    move_if("node_selector", None, &Value::is_truthy);
    if let Some(block) = block {
        spec.push_new(Value::str("mooncake"), block);
    }
    spec
}

/// Room for every key a spec can have, so building one never reallocates.
const SPEC_CAPACITY: usize = crate::spec::SPEC_KEYS.len();

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

/// GCO's words when a deploy finds its name taken (the create's condition
/// `attribute_not_exists(endpoint_name)` failed, in
/// `gco/services/inference_store.py`'s `create_endpoint`): the server's
/// 409, and the editor's as soon as the name typed is known taken.
pub fn name_taken_message(name: &str) -> String {
    format!("Endpoint '{name}' already exists")
}

/// A deploy request that makes a record like `record`, as a starting point
/// for another endpoint (the console's Clone): its spec's fields under
/// their request names, the block as it is, its regions, namespace and
/// labels, and the name with `-copy` appended (a deploy under the same
/// name would find it taken).
pub fn request_of_record(record: &Record) -> Value {
    let mut request = Object::new();
    request.insert(
        key!("endpoint_name"),
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
            .map_or(key.as_str(), |(field, _)| field);
        request.insert(renamed, value.clone());
    }
    request.insert(
        key!("target_regions"),
        Value::List(
            record
                .target_regions
                .iter()
                .map(|r| Value::str(r))
                .collect(),
        ),
    );
    request.insert(key!("namespace"), record.namespace.as_str());
    if !record.labels.is_empty() {
        request.insert(key!("labels"), record.labels.clone());
    }
    block_as_fields(Value::Object(request))
}

/// A deploy request that makes `record` again on SGLang (the console's
/// "Clone with sglang"): its request ([`request_of_record`]) moved onto
/// SGLang by [`crate::framework::onto_sglang`].
pub fn request_on_sglang(record: &Record) -> Value {
    crate::framework::onto_sglang(request_of_record(record))
}

/// The request fields that build a block (besides `mooncake_mode`): given
/// without a mode, deploy ignores them.
const BLOCK_FIELDS: [&str; 6] = [
    key!("prefill_replicas"),
    key!("decode_replicas"),
    key!("mooncake_store"),
    key!("mooncake_transfer"),
    key!("mooncake_proxy"),
    key!("mooncake_autoscaling"),
];

/// A request that gives the `mooncake` block as is (a Clone, a link) with
/// the block split into the fields an editor's form shows (`mooncake_mode`,
/// `prefill_replicas`, `mooncake_store`, ...), when deploy builds exactly
/// that block from them; otherwise the request unchanged. A block the
/// builder would change (a split mode without `proxy.image`, a store-bearing
/// mode without `store.enabled`) stays a block. The order of the block's
/// keys does not count: a map read back from DynamoDB comes in any order.
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
    let mode_key = key!("mooncake_mode");
    if req.contains_key(mode_key) || BLOCK_FIELDS.iter().any(|f| req.contains_key(f)) {
        return None;
    }
    let block = req.get("mooncake")?.as_object()?;
    let mode = block.get("mode").filter(|m| !m.is_null())?.clone();
    let image = req.get(key!("image")).filter(|i| !i.is_null()).cloned();
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
    // The same block whatever the order of its maps' keys: a block read
    // from DynamoDB comes back with them sorted.
    if built.with_sorted_keys() != Value::Object(block.clone()).with_sorted_keys() {
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
            (key!("prefill_replicas"), prefill.clone()),
            (key!("decode_replicas"), decode.clone()),
            (key!("mooncake_store"), store.clone()),
            (key!("mooncake_transfer"), transfer.clone()),
            (key!("mooncake_proxy"), proxy.clone()),
            (key!("mooncake_autoscaling"), autoscaling.clone()),
        ];
        for (field, value) in given {
            if let Some(v) = value {
                out.insert(field, v);
            }
        }
    }
    Some(out)
}
