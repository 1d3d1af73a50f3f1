//! The endpoint spec (`record.spec`): its fields, their checks, its key order.

use crate::diagnostics::{Diagnostic, Report};
use crate::framework::{Framework, FrameworkFields, Frameworks, check_framework};
use crate::json::{Object, Value};
use crate::limits::{ENDPOINT_TLS_PORT, PORT_MAX, PORT_MIN};
use crate::mooncake::{Mode, check_mooncake};
use crate::names::is_env_name;
use crate::suggest::did_you_mean;

/// Spec keys in the order `deploy` writes them (GCO_FACTS section 2).
pub const SPEC_KEYS: [&str; 18] = [
    "image",
    "port",
    "replicas",
    "gpu_count",
    "health_check_path",
    "framework",
    "region_image_uris",
    "gpu_type",
    "model_path",
    "model_source",
    "env",
    "autoscaling",
    "capacity_type",
    "args",
    "accelerator",
    "node_selector",
    "mooncake",
    // Written by newer GCO releases only when a canary is set up.
    "canary",
];

/// The framework Mooncake runs on: newer GCO forces it for any mooncake mode.
pub const MOONCAKE_FRAMEWORK: &str = Framework::MOONCAKE.as_str();

vocabulary! {
    /// A node capacity type GCO can schedule on (`capacity_type`).
    pub enum CapacityType {
        Spot = "spot",
        OnDemand = "on-demand",
    }
}

/// Node capacity types GCO can schedule on.
pub const CAPACITY_TYPES: [&str; 2] = CapacityType::NAMES;

/// Every problem of a spec: each field's type and range, the framework
/// against the ones the team's GCO accepts, and the whole `mooncake` block
/// (its first error is the reference's message).
pub fn check_spec(spec: &Value, frameworks: &Frameworks) -> Report {
    let mut report = Report::default();
    let Some(spec) = spec.as_object() else {
        report.push(Diagnostic::error("spec", "spec must be a mapping"));
        return report;
    };
    // GCO's deploy checks the framework before it builds the block.
    check_framework(&FrameworkFields::of_spec(spec), frameworks, &mut report);
    if let Some(block) = spec.get("mooncake") {
        report.extend(check_mooncake(block));
    }
    check_spec_values(spec, &mut report);
    report.sort();
    report
}

/// The checks of [`check_spec`] but the `mooncake` block's own (for callers
/// that checked the block already), added to `report` unsorted.
pub fn check_spec_fields(spec: &Object, frameworks: &Frameworks, report: &mut Report) {
    check_framework(&FrameworkFields::of_spec(spec), frameworks, report);
    check_spec_values(spec, report);
}

/// The checks of [`check_spec_fields`] but the framework's (for a deploy,
/// which checks its request's framework first, as GCO does).
pub fn check_spec_values(spec: &Object, report: &mut Report) {
    let mut r = Checker { spec, report };

    match spec.get("image") {
        Some(Value::Str(s)) if !s.to_string_lossy().trim().is_empty() => {}
        Some(other) => r.error(
            "image",
            format!("image must be a non-empty string, got {}", other.repr()),
        ),
        None => r.error("image", "image is required".into()),
    }
    r.int_in("port", PORT_MIN, PORT_MAX);
    // GCO's deploy takes it; its monitor then refuses to render the pods.
    if spec
        .get("port")
        .and_then(Value::as_int)
        .and_then(|p| p.as_i64())
        == Some(ENDPOINT_TLS_PORT)
    {
        r.report.push(Diagnostic::warning(
            "port",
            format!(
                "port {ENDPOINT_TLS_PORT} is reserved for the model pod's TLS sidecar: GCO's monitor refuses to render the endpoint; serve on another port"
            ),
        ));
    }
    r.int_in("replicas", 0, i64::MAX);
    r.int_in("gpu_count", 0, i64::MAX);
    if let Some(path) = spec.get("health_check_path")
        && !path.as_str().is_some_and(|p| p.starts_with('/'))
    {
        r.error(
            "health_check_path",
            format!(
                "health_check_path must be a path starting with '/', got {}",
                path.repr()
            ),
        );
    }
    // GCO stores these as given, and a space or control character in them
    // fails only in the cluster: a warning, as a name GCO cannot route is.
    for (key, what) in [
        (
            "image",
            "no image reference has one: the image cannot be pulled",
        ),
        (
            "health_check_path",
            "no HTTP request path has one: the health check cannot pass",
        ),
    ] {
        if let Some(value) = spec.get(key)
            && let Some(text) = value.as_str()
            && !text.trim().is_empty()
            && text.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            r.report.push(Diagnostic::warning(
                key,
                format!(
                    "{key} {} holds a space or control character; {what}",
                    value.repr()
                ),
            ));
        }
    }
    r.one_of("capacity_type", &CAPACITY_TYPES);
    for key in ["gpu_type", "model_path", "model_source", "accelerator"] {
        r.string(key);
    }
    r.string_map("region_image_uris", |_| None);
    r.string_map("node_selector", |_| None);
    r.string_map("env", |k| {
        (!is_env_name(k)).then(|| {
            format!(
                "env key {} is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
                crate::pyrepr::repr_text(k)
            )
        })
    });
    if let Some(args) = spec.get("args") {
        match args {
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !matches!(item, Value::Str(_)) {
                        r.error(
                            &format!("args[{i}]"),
                            format!("args[{i}] must be a string, got {}", item.repr()),
                        );
                    }
                }
            }
            other => r.error(
                "args",
                format!("args must be a list of strings, got {}", other.repr()),
            ),
        }
    }
    if let Some(a) = spec.get("autoscaling")
        && !a.is_null()
        && a.as_object().is_none()
    {
        r.error("autoscaling", "autoscaling must be a mapping".into());
    }

    if let Some(mixed) = mixed_blocks(spec) {
        r.report.push(mixed);
    }

    for (key, _) in spec.str_entries() {
        if key.as_str().is_some_and(|k| SPEC_KEYS.contains(&k)) {
            continue;
        }
        let key = key.to_string_lossy();
        {
            let hint = did_you_mean(&key, &SPEC_KEYS)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            r.report.push(Diagnostic::warning(
                key.clone(),
                format!(
                    "unknown spec key {}, which GCO ignores{hint}",
                    crate::pyrepr::repr_text(&key)
                ),
            ));
        }
    }
}

/// GCO's store refuses a spec with both a `mooncake` and a `canary` block
/// (a canary is a second classic Deployment, which a Mooncake topology has
/// no place for); its monitor marks such an endpoint failed.
pub fn mixed_blocks(spec: &Object) -> Option<Diagnostic> {
    (spec.contains_key("mooncake") && spec.contains_key("canary")).then(|| {
        Diagnostic::error(
            "canary",
            "Endpoint spec cannot combine 'mooncake' and 'canary' blocks",
        )
    })
}

/// The mode of a spec's mooncake block, when it is a valid one.
pub fn spec_mode(spec: &Object) -> Option<Mode> {
    spec.get("mooncake")?
        .as_object()?
        .get("mode")?
        .as_str()
        .and_then(Mode::parse)
}

struct Checker<'a> {
    spec: &'a Object,
    report: &'a mut Report,
}

impl Checker<'_> {
    fn error(&mut self, path: &str, message: String) {
        self.report.push(Diagnostic::error(path, message));
    }

    fn int_in(&mut self, key: &str, low: i64, high: i64) {
        let Some(v) = self.spec.get(key) else { return };
        let ok = v.as_int().is_some_and(|i| i.in_range(low, high));
        if !ok {
            // An open range reads better, unless the value is past its top.
            let past_top = v.as_int().is_some_and(|i| i.as_i64().is_none());
            let range = if high == i64::MAX && !past_top {
                format!(">= {low}")
            } else {
                format!("in [{low}, {high}]")
            };
            self.error(
                key,
                format!("{key} must be an integer {range}, got {}", v.repr()),
            );
        }
    }

    fn string(&mut self, key: &str) {
        if let Some(v) = self.spec.get(key)
            && !matches!(v, Value::Str(_))
        {
            self.error(key, format!("{key} must be a string, got {}", v.repr()));
        }
    }

    fn one_of(&mut self, key: &str, allowed: &[&str]) {
        if let Some(v) = self.spec.get(key)
            && !v.as_str().is_some_and(|s| allowed.contains(&s))
        {
            self.error(
                key,
                format!(
                    "{key} must be one of {{{}}}, got {}",
                    allowed.join(", "),
                    v.repr()
                ),
            );
        }
    }

    /// A mapping of strings to strings; `key_problem` may refuse a key.
    fn string_map(&mut self, key: &str, key_problem: impl Fn(&str) -> Option<String>) {
        let Some(v) = self.spec.get(key) else { return };
        let Some(map) = v.as_object() else {
            self.error(
                key,
                format!("{key} must be a mapping of strings, got {}", v.repr()),
            );
            return;
        };
        for (k, value) in map.str_entries() {
            let k = k.to_str_lossy();
            // Only a refused entry needs its path spelled out.
            let path = || format!("{key}.{k}");
            if let Some(problem) = key_problem(&k) {
                self.error(&path(), problem);
            }
            if !matches!(value, Value::Str(_)) {
                let path = path();
                self.error(
                    &path,
                    format!("{path} must be a string, got {}", value.repr()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn errors(spec: &str) -> Vec<String> {
        errors_under(spec, "vllm,sglang")
    }

    fn errors_under(spec: &str, frameworks: &str) -> Vec<String> {
        check_spec(
            &parse(spec).unwrap(),
            &Frameworks::parse_list(frameworks).unwrap(),
        )
        .errors()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect()
    }

    #[test]
    fn checks_each_field() {
        assert_eq!(
            errors(r#"{"image": "x", "port": 8000, "replicas": 0, "gpu_count": 1}"#),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(
                r#"{"image": " ", "port": 0, "replicas": -1, "gpu_count": 1.0, "env": {"A-B": 1}, "args": ["a", 2], "framework": "x"}"#
            ),
            [
                // GCO's deploy checks the framework first.
                "framework: framework must be 'vllm' or 'sglang'",
                "image: image must be a non-empty string, got ' '",
                "port: port must be an integer in [1, 65535], got 0",
                "replicas: replicas must be an integer >= 0, got -1",
                "gpu_count: gpu_count must be an integer >= 0, got 1.0",
                "env.A-B: env key 'A-B' is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
                "env.A-B: env.A-B must be a string, got 1",
                "args[1]: args[1] must be a string, got 2",
            ]
        );
        assert_eq!(
            errors(r#"{"image": "x", "capacity_type": "reserved"}"#),
            ["capacity_type: capacity_type must be one of {spot, on-demand}, got 'reserved'"]
        );
        assert_eq!(
            errors(r#"{"image": "x", "replicas": 9223372036854775808}"#),
            [
                "replicas: replicas must be an integer in [0, 9223372036854775807], got 9223372036854775808"
            ]
        );
    }

    #[test]
    fn warns_of_spaces_in_an_image_or_a_health_check_path() {
        let r = check_spec(
            &parse(r#"{"image": "vllm/vllm-openai: v1", "health_check_path": "/health\n", "port": 8000}"#)
                .unwrap(),
            &Frameworks::CURRENT,
        );
        assert!(r.is_ok());
        let w: Vec<_> = r
            .warnings()
            .map(|d| format!("{}: {}", d.path, d.message))
            .collect();
        assert_eq!(
            w,
            [
                "image: image 'vllm/vllm-openai: v1' holds a space or control character; no image reference has one: the image cannot be pulled",
                "health_check_path: health_check_path '/health\\n' holds a space or control character; no HTTP request path has one: the health check cannot pass",
            ]
        );
        let r = check_spec(
            &parse(r#"{"image": "vllm/vllm-openai:v1", "health_check_path": "/health"}"#).unwrap(),
            &Frameworks::CURRENT,
        );
        assert_eq!(r.warnings().count(), 0);
    }

    #[test]
    fn mooncake_errors_come_with_the_spec() {
        let e = errors_under(
            r#"{"image": "x", "framework": "tgi", "mooncake": {"mode": "store"}}"#,
            "vllm,tgi",
        );
        assert_eq!(
            e,
            ["framework: Mooncake serving requires the vllm framework"]
        );
        // Mooncake stays vLLM-only whatever the team's GCO accepts.
        let e = errors(
            r#"{"image": "x", "framework": "sglang", "env": {"MODEL": "m"}, "mooncake": {"mode": "store"}}"#,
        );
        assert_eq!(
            e,
            ["framework: Mooncake serving requires the vllm framework"]
        );
        let e = errors(
            r#"{"image": "x", "mooncake": {"mode": "both", "topology": {"prefill": 0, "decode": 1}}}"#,
        );
        assert_eq!(
            e,
            ["mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0"]
        );
    }

    #[test]
    fn frameworks_follow_the_teams_gco() {
        let tgi = r#"{"image": "x", "framework": "tgi"}"#;
        assert_eq!(
            errors(tgi),
            ["framework: framework must be 'vllm' or 'sglang'"]
        );
        assert_eq!(errors_under(tgi, "vllm,tgi"), Vec::<String>::new());
        let sglang = r#"{"image": "lmsysorg/sglang:v0.5", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#;
        assert_eq!(errors(sglang), Vec::<String>::new());
        assert_eq!(
            errors_under(sglang, "vllm,tgi"),
            ["framework: framework must be 'vllm' or 'tgi'"]
        );
        assert_eq!(
            errors(r#"{"image": "lmsysorg/sglang:v0.5", "framework": "sglang"}"#),
            [
                "env.MODEL: framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>"
            ]
        );
        // GCO compares whole arguments: `--model-path=m` names no model, a
        // bare `--model-path` does; any truthy MODEL does.
        assert_eq!(
            errors(r#"{"image": "x", "framework": "sglang", "args": ["--model-path=m"]}"#).len(),
            1
        );
        for named in [
            r#"{"image": "x", "framework": "sglang", "args": ["--model-path"]}"#,
            r#"{"image": "x", "framework": "sglang", "env": {"MODEL": " "}}"#,
        ] {
            assert_eq!(errors(named), Vec::<String>::new(), "{named}");
        }
        assert_eq!(
            errors(r#"{"image": "x", "framework": "sglang", "args": ["--model", "m"]}"#),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(r#"{"image": "x", "framework": null}"#),
            ["framework: framework must be 'vllm' or 'sglang'"]
        );
    }

    #[test]
    fn sglang_is_refused_a_node_selector_pinning_a_gpu_before_ampere() {
        let pinned = |selector: &str| {
            errors(&format!(
                r#"{{"image": "x", "framework": "sglang", "env": {{"MODEL": "m"}}, "node_selector": {selector}}}"#
            ))
        };
        assert_eq!(
            pinned(r#"{"eks.amazonaws.com/instance-gpu-name": "T4"}"#),
            [
                "node_selector.eks.amazonaws.com/instance-gpu-name: framework 'sglang' needs an NVIDIA GPU with compute capability 8.0 or newer (A10G (g5), L4 (g6/g6f/gr6), L40S (g6e), A100 (p4d), H100 (p5)); the node selector pins 't4', for which SGLang ships no prebuilt kernels"
            ]
        );
        // The GPU name is read first; the family only when the name pins none.
        assert_eq!(
            pinned(
                r#"{"eks.amazonaws.com/instance-gpu-name": "a10g", "eks.amazonaws.com/instance-family": "G4DN"}"#
            ),
            [
                "node_selector.eks.amazonaws.com/instance-family: framework 'sglang' needs an NVIDIA GPU with compute capability 8.0 or newer (A10G (g5), L4 (g6/g6f/gr6), L40S (g6e), A100 (p4d), H100 (p5)); the node selector pins 'g4dn', for which SGLang ships no prebuilt kernels"
            ]
        );
        assert!(pinned(r#"{"eks.amazonaws.com/instance-family": "g5"}"#).is_empty());
        // vLLM ships kernels for them.
        assert!(
            errors(
                r#"{"image": "x", "framework": "vllm", "node_selector": {"eks.amazonaws.com/instance-gpu-name": "t4"}}"#
            )
            .is_empty()
        );
    }

    #[test]
    fn refuses_a_canary_beside_a_mooncake_block() {
        assert_eq!(
            errors(
                r#"{"image": "x", "mooncake": {"mode": "store"}, "canary": {"image": "y", "weight": 10, "replicas": 1}}"#
            ),
            ["canary: Endpoint spec cannot combine 'mooncake' and 'canary' blocks"]
        );
        assert_eq!(
            errors(r#"{"image": "x", "canary": {"image": "y", "weight": 10, "replicas": 1}}"#),
            Vec::<String>::new()
        );
    }

    #[test]
    fn warns_of_the_sidecars_port() {
        let r = check_spec(
            &parse(r#"{"image": "x", "port": 8443}"#).unwrap(),
            &Frameworks::CURRENT,
        );
        assert!(r.is_ok(), "GCO's deploy takes it");
        let w: Vec<_> = r
            .warnings()
            .map(|d| (d.path.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            w,
            [(
                "port",
                "port 8443 is reserved for the model pod's TLS sidecar: GCO's monitor refuses to render the endpoint; serve on another port"
            )]
        );
    }

    #[test]
    fn warns_of_unknown_keys() {
        let r = check_spec(
            &parse(r#"{"image": "x", "replica": 2}"#).unwrap(),
            &Frameworks::CURRENT,
        );
        let w: Vec<_> = r.warnings().map(|d| d.message.clone()).collect();
        assert_eq!(
            w,
            ["unknown spec key 'replica', which GCO ignores; did you mean 'replicas'?"]
        );
    }
}
