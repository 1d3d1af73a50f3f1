//! Serving frameworks: the ones GCO has deployed in some release, and the
//! list a team's GCO accepts today.
//!
//! GCO's SGLang release (PR #387, GCO_FACTS_NEWEST section 3.3) replaced
//! `tgi` with `sglang`, and its renderer no longer recognises `tgi` records.
//! Teams upgrade at their own pace, so the accepted list is a setting of
//! whoever checks (the console's `--frameworks`, the CLI's, the package's
//! option), never a constant of the rules.

use std::fmt;

use crate::diagnostics::{Diagnostic, Report};
use crate::json::{Object, Value};
use crate::pyrepr::{py_lower, py_str};

vocabulary! {
    /// A serving framework some GCO release deploys.
    pub enum Framework {
        // Newest GCO's first.
        Vllm = "vllm",
        Sglang = "sglang",
        Tgi = "tgi",
    }
}

impl Framework {
    /// The one framework Mooncake serving runs on, in every release.
    pub const MOONCAKE: Framework = Framework::Vllm;

    const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The framework a spec names, when it names a known one.
    pub fn of_spec(spec: &Object) -> Option<Framework> {
        spec.get("framework")
            .and_then(Value::as_str)
            .and_then(Framework::parse)
    }
}

/// The flags by which SGLang's launcher takes the model.
const MODEL_FLAGS: [&str; 2] = ["--model-path", "--model"];

/// The node label EKS Auto Mode puts on every accelerated node naming its
/// GPU, and the one naming its instance family (GCO's
/// `gco/models/inference_models.py@7a0b3c6fd4`, `GPU_NAME_NODE_LABEL` and
/// `INSTANCE_FAMILY_NODE_LABEL`).
pub const GPU_NAME_NODE_LABEL: &str = "eks.amazonaws.com/instance-gpu-name";
/// See [`GPU_NAME_NODE_LABEL`].
pub const INSTANCE_FAMILY_NODE_LABEL: &str = "eks.amazonaws.com/instance-family";

/// NVIDIA GPUs older than Ampere, by their [`GPU_NAME_NODE_LABEL`] value:
/// SGLang ships no prebuilt kernels for them, so GCO refuses a node selector
/// that pins one and its monitor keeps SGLang pods off them (same source,
/// `SGLANG_UNSUPPORTED_GPU_NAMES`).
pub const SGLANG_UNSUPPORTED_GPU_NAMES: [&str; 4] = ["k80", "m60", "v100", "t4"];
/// The EC2 families that carry those GPUs (`SGLANG_UNSUPPORTED_GPU_FAMILIES`).
pub const SGLANG_UNSUPPORTED_GPU_FAMILIES: [&str; 6] = ["p2", "g3", "g3s", "p3", "p3dn", "g4dn"];
/// Ampere-or-newer examples in GCO's refusal (`SGLANG_SUPPORTED_GPU_EXAMPLES`).
pub const SGLANG_SUPPORTED_GPU_EXAMPLES: &str =
    "A10G (g5), L4 (g6/g6f/gr6), L40S (g6e), A100 (p4d), H100 (p5)";

/// What GCO's deploy checks about the framework read, from a deploy
/// request's fields or a spec's: `framework`, whether a Mooncake block is
/// asked for, `env`, the extra arguments and `node_selector`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameworkFields<'a> {
    pub framework: Option<&'a Value>,
    pub mooncake: bool,
    pub env: Option<&'a Value>,
    pub args: Option<&'a Value>,
    pub node_selector: Option<&'a Value>,
}

impl<'a> FrameworkFields<'a> {
    /// A stored spec's fields (its extra arguments are `args`).
    pub fn of_spec(spec: &'a Object) -> FrameworkFields<'a> {
        FrameworkFields {
            framework: spec.get("framework"),
            mooncake: spec.contains_key("mooncake"),
            env: spec.get("env"),
            args: spec.get("args"),
            node_selector: spec.get("node_selector"),
        }
    }
}

/// GCO's deploy checks of the framework, in `InferenceManager.deploy`'s
/// order (`cli/inference.py@7a0b3c6fd4`), each at its field: a framework
/// the team's GCO accepts; vLLM for Mooncake, whatever the list says; for
/// SGLang (where the list has it) a model to serve, and no node selector
/// pinning a GPU older than Ampere.
pub fn check_framework(fields: &FrameworkFields<'_>, frameworks: &Frameworks, report: &mut Report) {
    let Some(given) = fields.framework else {
        return;
    };
    if !given.as_str().is_some_and(|name| frameworks.accepts(name)) {
        report.push(Diagnostic::error("framework", frameworks.refusal()));
    }
    if fields.mooncake && given.as_str() != Some(Framework::MOONCAKE.as_str()) {
        report.push(Diagnostic::error(
            "framework",
            format!(
                "Mooncake serving requires the {} framework",
                Framework::MOONCAKE
            ),
        ));
    }
    let sglang = Framework::Sglang.as_str();
    if given.as_str() != Some(sglang) || !frameworks.accepts(sglang) {
        return;
    }
    if !names_sglang_model(fields) {
        report.push(Diagnostic::error(
            "env.MODEL",
            "framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>",
        ));
    }
    if let Some((label, pinned)) = pinned_pre_ampere(fields.node_selector) {
        report.push(Diagnostic::error(
            format!("node_selector.{label}"),
            format!(
                "framework 'sglang' needs an NVIDIA GPU with compute capability 8.0 or newer ({SGLANG_SUPPORTED_GPU_EXAMPLES}); the node selector pins '{pinned}', for which SGLang ships no prebuilt kernels"
            ),
        ));
    }
}

/// Whether a deploy names SGLang's model as GCO's deploy reads it: a truthy
/// `MODEL` env entry, or an extra argument that is exactly `--model-path`
/// or `--model` (GCO compares whole arguments, so `--model-path=x` names
/// none).
fn names_sglang_model(fields: &FrameworkFields<'_>) -> bool {
    let env_model = fields
        .env
        .and_then(Value::as_object)
        .and_then(|env| env.get("MODEL"))
        .is_some_and(Value::is_truthy);
    let arg_model = match fields.args {
        Some(Value::List(args)) => args
            .iter()
            .any(|a| a.as_str().is_some_and(|a| MODEL_FLAGS.contains(&a))),
        _ => false,
    };
    env_model || arg_model
}

/// The node selector's pre-Ampere pin, as GCO finds it: the GPU name
/// label's value (lower-cased) among [`SGLANG_UNSUPPORTED_GPU_NAMES`], else
/// the instance family's among [`SGLANG_UNSUPPORTED_GPU_FAMILIES`]; with
/// the label it was found under.
fn pinned_pre_ampere(node_selector: Option<&Value>) -> Option<(&'static str, String)> {
    let selector = node_selector.and_then(Value::as_object)?;
    let lowered = |label: &str| {
        selector
            .get(label)
            .map(|v| py_lower(&py_str(v)))
            .unwrap_or_default()
    };
    let gpu = lowered(GPU_NAME_NODE_LABEL);
    if SGLANG_UNSUPPORTED_GPU_NAMES.contains(&gpu.as_str()) {
        return Some((GPU_NAME_NODE_LABEL, gpu));
    }
    let family = lowered(INSTANCE_FAMILY_NODE_LABEL);
    SGLANG_UNSUPPORTED_GPU_FAMILIES
        .contains(&family.as_str())
        .then_some((INSTANCE_FAMILY_NODE_LABEL, family))
}

/// The framework GCO's monitor renders a spec for
/// (`_build_inference_deployment_object`, `inference_monitor.py@7a0b3c6fd4`):
/// `spec.framework` when it is `vllm` or `sglang`, else the one the region's
/// image names (lower-cased, vLLM first), else none.
pub fn runtime_framework(spec: &Object, image: &str) -> Option<Framework> {
    match Framework::of_spec(spec) {
        Some(f @ (Framework::Vllm | Framework::Sglang)) => Some(f),
        _ => {
            let image = py_lower(image);
            [Framework::Vllm, Framework::Sglang]
                .into_iter()
                .find(|f| image.contains(f.as_str()))
        }
    }
}

/// SGLang's launcher as GCO's monitor supplies it (the `lmsysorg/sglang`
/// image has no entrypoint): the command, whose arguments are
/// [`sglang_args`].
pub const SGLANG_COMMAND: [&str; 3] = ["python3", "-m", "sglang.launch_server"];

/// The launcher's arguments (same source): the spec's own, then
/// `--host 0.0.0.0` and `--port <port>` unless the spec's arguments hold
/// that exact flag, then `--model-path $(MODEL)` when the env has a `MODEL`
/// entry and the arguments hold neither `--model-path` nor `--model` (the
/// kubelet expands `$(MODEL)`).
pub fn sglang_args(mut args: Vec<String>, port: i64, env_has_model: bool) -> Vec<String> {
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag);
    if !has(&args, "--host") {
        args.extend(["--host".to_owned(), "0.0.0.0".to_owned()]);
    }
    if !has(&args, "--port") {
        args.extend(["--port".to_owned(), port.to_string()]);
    }
    if env_has_model && !MODEL_FLAGS.iter().any(|f| has(&args, f)) {
        args.extend(["--model-path".to_owned(), "$(MODEL)".to_owned()]);
    }
    args
}

/// SGLang's startup probe on the health path (same source): every 15 s, up
/// to 80 failures, so liveness waits up to 20 minutes for the model to load
/// (`/health` answers only once it has).
pub const SGLANG_STARTUP_PERIOD_SECONDS: i32 = 15;
/// See [`SGLANG_STARTUP_PERIOD_SECONDS`].
pub const SGLANG_STARTUP_FAILURE_THRESHOLD: i32 = 80;

/// The image a request moved onto SGLang gets: SGLang's own (the image of
/// the framework it leaves cannot run its launcher).
pub const SGLANG_IMAGE: &str = "lmsysorg/sglang:latest";

/// Where other frameworks take the model: TGI's `MODEL_ID` env and
/// `--model-id`, vLLM's `--model`, SGLang's own.
const MODEL_ENV: [&str; 2] = ["MODEL", "MODEL_ID"];
const MODEL_ARGS: [&str; 3] = ["--model-path", "--model-id", "--model"];

/// A deploy request moved onto SGLang, for endpoints GCO no longer serves
/// (`deploy::request_on_sglang`, the console's "Clone with sglang"):
/// `framework: sglang`, SGLang's image, and the model carried over into
/// the `MODEL` env entry from where the old framework took it (its flag
/// leaves the extra arguments; other arguments stay, for the author to
/// check). Without a model found, the check asks for one.
pub fn onto_sglang(mut request: Value) -> Value {
    let Value::Object(req) = &mut request else {
        return request;
    };
    req.insert("framework", Framework::Sglang.as_str());
    req.insert("image", SGLANG_IMAGE);

    let mut model = None;
    let mut env = req
        .get("env")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in MODEL_ENV {
        if let Some(value) = env.get(key).and_then(Value::as_str)
            && !value.trim().is_empty()
            && model.is_none()
        {
            model = Some(value.to_owned());
        }
    }
    if let Some(Value::List(args)) = req.get("extra_args") {
        let (named, kept) = model_in_args(args);
        if model.is_none() {
            model = named.map(|(value, _)| value);
        }
        if kept.is_empty() {
            req.remove("extra_args");
        } else {
            req.insert("extra_args", Value::List(kept));
        }
    }
    if let Some(model) = model {
        env.remove("MODEL_ID");
        env.insert("MODEL", model);
    }
    if !env.is_empty() {
        req.insert("env", env);
    }
    request
}

/// The model `args` name by a flag of [`MODEL_ARGS`] (`--flag value` or
/// `--flag=value`; the first non-empty one) with that flag, and the
/// arguments without every such flag and its value.
fn model_in_args(args: &[Value]) -> (Option<(String, &'static str)>, Vec<Value>) {
    let mut model = None;
    let mut kept = Vec::new();
    let mut items = args.iter();
    while let Some(arg) = items.next() {
        let text = arg.as_str().unwrap_or_default();
        let flag = MODEL_ARGS
            .iter()
            .find(|f| text == **f || text.strip_prefix(**f).is_some_and(|r| r.starts_with('=')));
        match flag {
            Some(flag) => {
                let value = match text.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                    Some(v) => Some(v.to_owned()),
                    None => items.next().and_then(Value::as_str).map(str::to_owned),
                };
                if model.is_none() {
                    model = value.filter(|v| !v.trim().is_empty()).map(|v| (v, *flag));
                }
            }
            None => kept.push(arg.clone()),
        }
    }
    (model, kept)
}

/// The model a stored spec serves, and where the spec names it (`env
/// MODEL`, `--model-path`, `model_path`, ...): an env entry of
/// [`MODEL_ENV`], else an argument of [`MODEL_ARGS`], else `model_path`;
/// `None` when nothing names one. What the endpoint page shows, whatever
/// the framework reads; GCO's own rule for SGLang's model is
/// [`check_framework`]'s.
pub fn named_model(spec: &Object) -> Option<(String, String)> {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
    };
    let env = spec.get("env").and_then(Value::as_object);
    for key in MODEL_ENV {
        if let Some(model) = text(env.and_then(|e| e.get(key))) {
            return Some((model, format!("env {key}")));
        }
    }
    if let Some(Value::List(args)) = spec.get("args")
        && let (Some((model, flag)), _) = model_in_args(args)
    {
        return Some((model, flag.to_owned()));
    }
    text(spec.get("model_path")).map(|m| (m, "model_path".to_owned()))
}

/// A deploy request's `model_path` when GCO would not hand it to SGLang:
/// the framework is `sglang`, whose launcher takes the model only from
/// `MODEL` or an extra argument ([`sglang_args`]), and `model_path` is
/// filled. The console says so at the field ([`model_path_as_model`]).
pub fn model_path_unread_by_sglang(request: &Value) -> Option<String> {
    let req = request.as_object()?;
    if req.get("framework").and_then(Value::as_str) != Some(Framework::Sglang.as_str()) {
        return None;
    }
    req.get("model_path")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_owned)
}

/// The request with its `model_path` moved into the `MODEL` env entry,
/// where SGLang takes it (see [`model_path_unread_by_sglang`]); as it is
/// when it has no model path.
pub fn model_path_as_model(request: &Value) -> Value {
    let mut request = request.clone();
    let Some(req) = request.as_object_mut() else {
        return request;
    };
    let Some(path) = req.remove("model_path") else {
        return request;
    };
    let mut env = req
        .get("env")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    env.insert("MODEL", path);
    req.insert("env", env);
    request
}

/// The frameworks a team's GCO accepts, never none, always named in
/// [`Framework::ALL`]'s order. A set of bits, so every check carries it by
/// value (and the npm package stays small).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frameworks {
    bits: u8,
}

/// A `--frameworks` list that names no known framework, or an unknown one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameworksError(pub String);

impl fmt::Display for FrameworksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FrameworksError {}

impl Default for Frameworks {
    fn default() -> Frameworks {
        Frameworks::CURRENT
    }
}

impl Frameworks {
    /// What GCO accepts since its SGLang release: `vllm` and `sglang`.
    pub const CURRENT: Frameworks = Frameworks {
        bits: Framework::Vllm.bit() | Framework::Sglang.bit(),
    };

    /// Every framework some GCO release accepts: for checks that are not
    /// about the framework (an operation keeps the record's).
    pub const ANY: Frameworks = Frameworks {
        bits: Framework::Vllm.bit() | Framework::Sglang.bit() | Framework::Tgi.bit(),
    };

    /// The list of `frameworks` (repeats dropped); `None` when empty.
    pub fn of(frameworks: impl IntoIterator<Item = Framework>) -> Option<Frameworks> {
        let bits = frameworks.into_iter().fold(0, |bits, f| bits | f.bit());
        (bits != 0).then_some(Frameworks { bits })
    }

    /// The list of `names` (each a known framework, repeats dropped).
    pub fn new(names: &mut dyn Iterator<Item = &str>) -> Result<Frameworks, FrameworksError> {
        let mut list = Vec::new();
        for name in names {
            let name = name.trim();
            list.push(Framework::parse(name).ok_or_else(|| {
                FrameworksError(format!(
                    "unknown framework {}; GCO knows {}",
                    crate::pyrepr::repr_text(name),
                    Frameworks::ANY.listed(", ", ", ", "")
                ))
            })?);
        }
        Frameworks::of(list).ok_or_else(|| {
            FrameworksError("no framework given; name at least one, e.g. vllm,sglang".into())
        })
    }

    /// A comma-separated list, as `--frameworks` and `GCO_FRAMEWORKS` take it.
    pub fn parse_list(text: &str) -> Result<Frameworks, FrameworksError> {
        Frameworks::new(&mut text.split(',').filter(|s| !s.trim().is_empty()))
    }

    pub fn iter(&self) -> impl Iterator<Item = Framework> + '_ {
        Framework::ALL
            .into_iter()
            .filter(|f| self.bits & f.bit() != 0)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.iter().map(Framework::as_str).collect()
    }

    pub fn accepts(&self, name: &str) -> bool {
        Framework::parse(name).is_some_and(|f| self.bits & f.bit() != 0)
    }

    /// The framework a stored spec names when this GCO does not serve it
    /// (a `tgi` record after GCO's SGLang release): its renderer, `invoke`
    /// and `models` pass such a record by.
    pub fn unserved<'a>(&self, spec: &'a Object) -> Option<&'a Value> {
        spec.get("framework")
            .filter(|f| !f.is_null() && !f.as_str().is_some_and(|name| self.accepts(name)))
    }

    /// The refusal of any other framework, in GCO's words for its own list
    /// with this list's names: `framework must be 'vllm' or 'sglang'`
    /// (`cli/inference.py@7a0b3c6fd4`), `framework must be 'vllm' or 'tgi'`
    /// before GCO's SGLang release.
    pub fn refusal(&self) -> String {
        let mut out = String::from("framework must be ");
        self.list_into(&mut out, ", ", " or ", "'");
        out
    }

    /// The names, each between `quote`s, separated by `between` and the
    /// last by `last`.
    fn listed(&self, between: &str, last: &str, quote: &str) -> String {
        let mut out = String::new();
        self.list_into(&mut out, between, last, quote);
        out
    }

    fn list_into(&self, out: &mut String, between: &str, last: &str, quote: &str) {
        let mut left = self.bits.count_ones();
        let mut first = true;
        for f in Framework::ALL {
            if self.bits & f.bit() == 0 {
                continue;
            }
            left -= 1;
            if !first {
                out.push_str(if left == 0 { last } else { between });
            }
            first = false;
            out.push_str(quote);
            out.push_str(f.as_str());
            out.push_str(quote);
        }
    }
}

impl fmt::Display for Frameworks {
    /// The list as `--frameworks` takes it: `vllm,sglang`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.listed(",", ",", ""))
    }
}

impl std::str::FromStr for Frameworks {
    type Err = FrameworksError;

    fn from_str(text: &str) -> Result<Frameworks, FrameworksError> {
        Frameworks::parse_list(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::request_of_record;
    use crate::record::Record;

    #[test]
    fn the_model_a_spec_serves_and_where_it_names_it() {
        let model = |text: &str| {
            let spec = crate::json::parse(text).unwrap();
            named_model(spec.as_object().unwrap())
        };
        let at = |m: &str, w: &str| Some((m.to_owned(), w.to_owned()));
        assert_eq!(
            model(r#"{"env": {"MODEL": "Qwen/Qwen3-8B"}, "model_path": "/m"}"#),
            at("Qwen/Qwen3-8B", "env MODEL")
        );
        assert_eq!(
            model(r#"{"args": ["--port", "1", "--model=meta/llama"]}"#),
            at("meta/llama", "--model")
        );
        assert_eq!(
            model(r#"{"args": ["--model-path", "/models/x"]}"#),
            at("/models/x", "--model-path")
        );
        assert_eq!(
            model(r#"{"model_path": "s3://b/m"}"#),
            at("s3://b/m", "model_path")
        );
        assert_eq!(model(r#"{"env": {"MODEL": " "}, "image": "i"}"#), None);
    }

    #[test]
    fn a_model_path_sglang_does_not_read_moves_into_model() {
        let request = crate::json::parse(
            r#"{"framework": "sglang", "model_path": "Qwen/Qwen3-8B", "env": {"HF_HOME": "/m"}}"#,
        )
        .unwrap();
        assert_eq!(
            model_path_unread_by_sglang(&request).as_deref(),
            Some("Qwen/Qwen3-8B")
        );
        let moved = model_path_as_model(&request);
        assert_eq!(
            moved.to_json(),
            r#"{"framework": "sglang", "env": {"HF_HOME": "/m", "MODEL": "Qwen/Qwen3-8B"}}"#
        );
        assert_eq!(model_path_unread_by_sglang(&moved), None);
        let vllm = crate::json::parse(r#"{"framework": "vllm", "model_path": "m"}"#).unwrap();
        assert_eq!(model_path_unread_by_sglang(&vllm), None);
    }

    #[test]
    fn the_default_is_gcos_since_its_sglang_release() {
        assert_eq!(Frameworks::default().to_string(), "vllm,sglang");
        assert!(Frameworks::default().accepts("sglang"));
        assert!(!Frameworks::default().accepts("tgi"));
    }

    #[test]
    fn refusals_list_the_accepted_ones_in_gcos_words() {
        let list = |s: &str| Frameworks::parse_list(s).unwrap();
        assert_eq!(
            list("vllm,tgi").refusal(),
            "framework must be 'vllm' or 'tgi'"
        );
        assert_eq!(list("sglang").refusal(), "framework must be 'sglang'");
        assert_eq!(
            list("tgi, sglang,vllm,tgi").refusal(),
            "framework must be 'vllm', 'sglang' or 'tgi'"
        );
    }

    #[test]
    fn sglangs_launcher_takes_the_specs_arguments_first() {
        let words = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            sglang_args(Vec::new(), 30000, true),
            words(&[
                "--host",
                "0.0.0.0",
                "--port",
                "30000",
                "--model-path",
                "$(MODEL)"
            ])
        );
        assert_eq!(
            sglang_args(words(&["--model", "m", "--port", "9000"]), 30000, true),
            words(&["--model", "m", "--port", "9000", "--host", "0.0.0.0"])
        );
        // Whole arguments only: `--host=::` is no `--host`.
        assert_eq!(
            sglang_args(words(&["--host=::"]), 8000, false),
            words(&["--host=::", "--host", "0.0.0.0", "--port", "8000"])
        );
        let spec = |text: &str| {
            crate::json::parse(text)
                .unwrap()
                .as_object()
                .unwrap()
                .clone()
        };
        assert_eq!(
            runtime_framework(&spec(r#"{"framework": "tgi"}"#), "LMSysOrg/SGLang:v0.5"),
            Some(Framework::Sglang)
        );
        assert_eq!(
            runtime_framework(&spec(r#"{"framework": "sglang"}"#), "vllm/vllm-openai"),
            Some(Framework::Sglang)
        );
        assert_eq!(runtime_framework(&spec("{}"), "nvcr.io/triton"), None);
    }

    #[test]
    fn a_tgi_record_moves_to_sglang_with_its_model() {
        let record = |spec: &str| {
            let text = format!(
                r#"{{"endpoint_name": "chat", "desired_state": "running", "target_regions": ["us-east-1"], "namespace": "gco-inference", "spec": {spec}, "ingress_path": "/inference/chat", "created_at": "2026-12-06T00:00:00", "updated_at": "2026-12-06T00:00:00", "region_status": {{}}}}"#
            );
            Record::from_value(&crate::json::parse(&text).unwrap()).unwrap()
        };
        let moved = onto_sglang(request_of_record(&record(
            r#"{"image": "ghcr.io/huggingface/text-generation-inference:3", "port": 8000, "framework": "tgi", "env": {"MODEL_ID": "Qwen/Qwen3-8B", "HF_HOME": "/m"}, "args": ["--max-input-length", "4096"]}"#,
        )));
        assert_eq!(
            moved.to_json(),
            r#"{"endpoint_name": "chat-copy", "image": "lmsysorg/sglang:latest", "port": 8000, "framework": "sglang", "env": {"HF_HOME": "/m", "MODEL": "Qwen/Qwen3-8B"}, "extra_args": ["--max-input-length", "4096"], "target_regions": ["us-east-1"], "namespace": "gco-inference"}"#
        );
        let from_args = onto_sglang(request_of_record(&record(
            r#"{"image": "x", "framework": "tgi", "args": ["--model-id=meta/llama", "--x"]}"#,
        )));
        let from_args = from_args.as_object().unwrap();
        assert_eq!(
            from_args.get("env").unwrap().to_json(),
            r#"{"MODEL": "meta/llama"}"#
        );
        assert_eq!(from_args.get("extra_args").unwrap().to_json(), r#"["--x"]"#);
        let nothing = onto_sglang(request_of_record(&record(
            r#"{"image": "x", "framework": "tgi"}"#,
        )));
        assert!(nothing.as_object().unwrap().get("env").is_none());
    }

    #[test]
    fn every_framework_parses_back() {
        for f in Framework::ALL {
            assert_eq!(Framework::parse(f.as_str()), Some(f));
        }
        assert_eq!(Frameworks::ANY.iter().collect::<Vec<_>>(), Framework::ALL);
    }

    #[test]
    fn a_list_names_known_frameworks_only() {
        assert_eq!(
            Frameworks::parse_list("vllm,triton")
                .unwrap_err()
                .to_string(),
            "unknown framework 'triton'; GCO knows vllm, sglang, tgi"
        );
        assert!(Frameworks::parse_list(" , ").is_err());
        assert!(!Frameworks::default().accepts("VLLM"));
    }
}
