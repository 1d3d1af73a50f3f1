//! Deploy assembly: the spec `deploy()` stores, its defaults and its errors.

use gco_spec::json::parse;
use gco_spec::{DeployContext, Frameworks, new_record, plan_deploy};

fn regions() -> Vec<String> {
    vec!["us-east-1".into(), "eu-west-1".into()]
}

fn plan(request: &str) -> gco_spec::DeployCheck {
    let deployed = regions();
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        default_image: "vllm/vllm-openai:v0.27.1",
        frameworks: Frameworks::CURRENT,
    };
    plan_deploy(&parse(request).unwrap(), &ctx)
}

fn errors_under(request: &str, frameworks: &str) -> Vec<String> {
    let ctx = DeployContext {
        frameworks: Frameworks::parse_list(frameworks).unwrap(),
        ..DeployContext::default()
    };
    plan_deploy(&parse(request).unwrap(), &ctx)
        .report
        .errors()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect()
}

fn errors(request: &str) -> Vec<String> {
    plan(request)
        .report
        .errors()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect()
}

fn spec_json(request: &str) -> String {
    let check = plan(request);
    assert!(check.report.is_ok(), "{:?}", check.report);
    gco_spec::Value::Object(check.deployment.unwrap().spec).to_json()
}

#[test]
fn plain_deploy_has_the_seed_key_order_and_defaults() {
    assert_eq!(
        spec_json(
            r#"{"endpoint_name": "llama", "image": "img:1", "gpu_type": "", "accelerator": "nvidia"}"#
        ),
        r#"{"image": "img:1", "port": 8000, "replicas": 1, "gpu_count": 1, "health_check_path": "/health"}"#
    );
    assert_eq!(
        spec_json(
            r#"{"endpoint_name": "llama", "image": "img:1", "env": {"HF_HOME": "/m"}, "extra_args": ["--x"],
                "accelerator": "neuron", "capacity_type": "spot", "node_selector": {"a": "b"}, "gpu_type": "g5"}"#
        ),
        r#"{"image": "img:1", "port": 8000, "replicas": 1, "gpu_count": 1, "health_check_path": "/health", "gpu_type": "g5", "env": {"HF_HOME": "/m"}, "capacity_type": "spot", "args": ["--x"], "accelerator": "neuron", "node_selector": {"a": "b"}}"#
    );
}

#[test]
fn mooncake_deploy_defaults_image_framework_and_proxy() {
    assert_eq!(
        spec_json(
            r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4}"#
        ),
        r#"{"image": "vllm/vllm-openai:v0.27.1", "port": 8000, "replicas": 1, "gpu_count": 1, "health_check_path": "/health", "framework": "vllm", "mooncake": {"mode": "disaggregated", "topology": {"prefill": 2, "decode": 4}, "proxy": {"image": "vllm/vllm-openai:v0.27.1"}}}"#
    );
}

#[test]
fn ecr_images_are_rewritten_per_region() {
    let spec = spec_json(
        r#"{"endpoint_name": "e", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/v:1", "target_regions": ["us-east-1", "cn-north-1", "us-east-1"]}"#,
    );
    assert!(spec.contains(r#""region_image_uris": {"us-east-1": "123456789012.dkr.ecr.us-east-1.amazonaws.com/v:1", "cn-north-1": "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/v:1"}"#), "{spec}");
    let check = plan(
        r#"{"endpoint_name": "e", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/v:1", "target_regions": ["us-east-1"]}"#,
    );
    assert!(
        !gco_spec::Value::Object(check.deployment.unwrap().spec)
            .to_json()
            .contains("region_image_uris")
    );
    let check = plan(
        r#"{"endpoint_name": "e", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/v:1", "rewrite_image": false}"#,
    );
    assert!(
        !gco_spec::Value::Object(check.deployment.unwrap().spec)
            .to_json()
            .contains("region_image_uris")
    );
}

#[test]
fn target_regions_default_dedupe_and_refuse() {
    assert_eq!(
        plan(r#"{"endpoint_name": "e", "image": "i"}"#)
            .deployment
            .unwrap()
            .target_regions,
        regions()
    );
    assert_eq!(
        plan(
            r#"{"endpoint_name": "e", "image": "i", "target_regions": ["eu-west-1", "eu-west-1"]}"#
        )
        .deployment
        .unwrap()
        .target_regions,
        ["eu-west-1"]
    );
    assert_eq!(
        errors(r#"{"endpoint_name": "e", "image": "i", "target_regions": ["mars-1", 3]}"#),
        [
            "target_regions[0]: target_regions[0] must be an AWS region such as 'us-east-1', got 'mars-1'",
            "target_regions[1]: target_regions[1] must be an AWS region such as 'us-east-1', got 3",
        ]
    );
    let ctx = DeployContext {
        deployed_regions: Some(&[]),
        ..DeployContext::default()
    };
    let check = plan_deploy(
        &parse(r#"{"endpoint_name": "e", "image": "i"}"#).unwrap(),
        &ctx,
    );
    assert_eq!(
        check.report.first_error().unwrap().message,
        "No deployed regions found. Deploy infrastructure first."
    );
}

#[test]
fn refusals_name_the_field() {
    assert_eq!(
        errors(r#"{"endpoint_name": "e"}"#),
        [
            "image: an image is required (pass image, or set mooncake_mode to use the default upstream Mooncake-enabled vLLM image)"
        ]
    );
    assert_eq!(
        errors(r#"{"image": "i"}"#),
        ["endpoint_name: endpoint_name is required"]
    );
    assert_eq!(
        errors(
            r#"{"endpoint_name": "e", "image": "i", "port": 70000, "replicas": "2", "env": {"1A": "x"}}"#
        ),
        [
            "port: port must be an integer in [1, 65535], got 70000",
            "replicas: replicas must be an integer >= 0, got '2'",
            "env.1A: env key '1A' is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
        ]
    );
    assert_eq!(
        errors(r#"{"endpoint_name": "e", "mooncake_mode": "store", "framework": "tgi"}"#),
        [
            "framework: framework must be 'vllm' or 'sglang'",
            "framework: Mooncake serving requires the vllm framework"
        ]
    );
    assert_eq!(
        errors_under(
            r#"{"endpoint_name": "e", "mooncake_mode": "store", "framework": "tgi"}"#,
            "vllm,tgi"
        ),
        ["framework: Mooncake serving requires the vllm framework"]
    );
}

#[test]
fn frameworks_are_the_ones_the_teams_gco_accepts() {
    let tgi = r#"{"endpoint_name": "e", "image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#;
    assert_eq!(
        errors_under(tgi, "vllm,sglang"),
        ["framework: framework must be 'vllm' or 'sglang'"]
    );
    assert!(errors_under(tgi, "vllm,tgi").is_empty());
    let sglang = r#"{"endpoint_name": "e", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#;
    assert!(errors_under(sglang, "vllm,sglang").is_empty());
    assert_eq!(
        errors_under(sglang, "vllm,tgi"),
        ["framework: framework must be 'vllm' or 'tgi'"]
    );
}

#[test]
fn an_sglang_deploy_names_its_model() {
    assert_eq!(
        errors(
            r#"{"endpoint_name": "e", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang"}"#
        ),
        [
            "env.MODEL: framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>"
        ]
    );
    // GCO compares whole arguments: `--model=...` names no model.
    assert_eq!(
        errors(
            r#"{"endpoint_name": "e", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "extra_args": ["--model=Qwen/Qwen3-8B"]}"#
        )
        .len(),
        1
    );
    for named in [
        r#""env": {"MODEL": "Qwen/Qwen3-8B"}"#,
        r#""extra_args": ["--model-path", "/models/qwen"]"#,
        r#""extra_args": ["--model", "Qwen/Qwen3-8B"]"#,
    ] {
        let request = format!(
            r#"{{"endpoint_name": "e", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", {named}}}"#
        );
        assert!(errors(&request).is_empty(), "{request}");
    }
}

#[test]
fn mooncake_errors_lead_with_the_reference_message() {
    // The reference authors byte sizes before it validates the mode.
    let e = errors(
        r#"{"endpoint_name": "e", "mooncake_mode": "split", "mooncake_store": {"global_segment_size": "4 GiB"}}"#,
    );
    assert_eq!(
        e[0],
        "mooncake.store.global_segment_size: mooncake.store.global_segment_size: byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '4 GiB'"
    );
    assert!(
        e.iter().any(|m| m
            .contains("mooncake.mode must be one of {both, disaggregated, store}, got 'split'")),
        "{e:?}"
    );
    let e = errors(
        r#"{"endpoint_name": "e", "mooncake_mode": "both", "prefill_replicas": 0, "decode_replicas": 1001}"#,
    );
    assert_eq!(
        e,
        [
            "mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0",
            "mooncake.topology.decode: mooncake.topology.decode out of range [1, 1000]: 1001",
        ]
    );
}

#[test]
fn warnings_do_not_block() {
    let check = plan(
        r#"{"endpoint_name": "very", "image": "i", "replica": 2, "mooncake_mode": "disaggregated",
        "mooncake_store": {"offload": "gpu"}, "mooncake_autoscaling": {"prefill": {"min_replicas": 1}}}"#,
    );
    assert!(check.report.is_ok(), "{:?}", check.report);
    let warnings: Vec<String> = check.report.warnings().map(|d| d.path.clone()).collect();
    assert_eq!(
        warnings,
        [
            "replica",
            "mooncake.store.offload",
            "mooncake.autoscaling.prefill",
        ]
    );
    // A name GCO's monitor cannot make a Service of is refused.
    assert_eq!(
        errors(r#"{"endpoint_name": "1-very", "image": "i", "mooncake_mode": "disaggregated"}"#),
        [
            "endpoint_name: endpoint_name '1-very' cannot name GCO's objects: its monitor creates the Service '1-very-prefill', and Kubernetes requires a Service name to be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, at most 63 characters)"
        ]
    );
}

#[test]
fn new_records_carry_every_attribute() {
    let d = plan(r#"{"endpoint_name": "e", "image": "i", "labels": {"team": "ml"}}"#)
        .deployment
        .unwrap();
    let mut n = 0;
    let record = new_record(d, "2026-09-01T13:22:56.123456+00:00", &mut || {
        n += 1;
        format!("{n:064x}")
    });
    let v = record.to_value().to_json();
    assert!(v.starts_with(r#"{"endpoint_name": "e", "desired_state": "deploying", "target_regions": ["us-east-1", "eu-west-1"], "namespace": "gco-inference", "spec": {"#), "{v}");
    assert!(v.contains(r#""labels": {"team": "ml"}, "ingress_path": "/inference/e", "created_at": "2026-09-01T13:22:56.123456+00:00""#), "{v}");
    assert!(v.contains(r#""region_status": {}, "lifecycle_id": "0000000000000000000000000000000000000000000000000000000000000003", "cleanup_regions": ["us-east-1", "eu-west-1"]"#), "{v}");
    assert_eq!(
        gco_spec::Record::from_value(&record.to_value()).unwrap(),
        record
    );
}

#[test]
fn request_fields_are_read_once_by_name() {
    // An unknown field is a warning at its own path, with a suggestion.
    let check = plan(r#"{"endpoint_name": "llama", "image": "img:1", "imgae": "x", "port": null}"#);
    let warnings: Vec<String> = check
        .report
        .warnings()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect();
    assert_eq!(
        warnings,
        [r#"imgae: unknown deploy field 'imgae', which is ignored; did you mean 'image'?"#]
    );
    // A null field takes its default; a key written with escapes is the
    // field it decodes to.
    assert_eq!(
        spec_json(r#"{"endpoint_name": "llama", "im\u0061ge": "img:1", "port": null}"#),
        r#"{"image": "img:1", "port": 8000, "replicas": 1, "gpu_count": 1, "health_check_path": "/health"}"#
    );
    // A null count is passed on to the rules, which refuse it.
    assert_eq!(
        errors(
            r#"{"endpoint_name": "pd", "image": "i", "mooncake_mode": "disaggregated", "prefill_replicas": null}"#
        ),
        [
            "mooncake.topology.prefill: mooncake.topology.prefill must be an integer in [1, 1000], got None"
        ]
    );
}

#[test]
fn spec_checks_name_the_request_field() {
    // The spec calls it `args`; the request's author wrote `extra_args`.
    assert_eq!(
        errors(r#"{"endpoint_name": "llama", "image": "img:1", "extra_args": ["--a", 2]}"#),
        ["extra_args[1]: extra_args[1] must be a string, got 2"]
    );
    assert_eq!(
        errors(r#"{"endpoint_name": "llama", "image": "img:1", "extra_args": "--a"}"#),
        ["extra_args: extra_args must be a list of strings, got '--a'"]
    );
    // Fields the spec keeps under their own names are untouched.
    assert_eq!(
        errors(r#"{"endpoint_name": "llama", "image": "img:1", "env": {"A-B": "1"}}"#),
        [
            r#"env.A-B: env key 'A-B' is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)"#
        ]
    );
}

/// Clone: the request made from a record deploys the same spec, under
/// another name, in the same regions, namespace and labels.
#[test]
fn a_records_request_deploys_its_spec_again() {
    use gco_spec::deploy::request_of_record;
    for request in [
        r#"{"endpoint_name": "chat", "mooncake_mode": "both", "prefill_replicas": 3, "decode_replicas": 5,
            "mooncake_store": {"global_segment_size": 8589934592}, "extra_args": ["--max-model-len", "8192"],
            "env": {"HF_TOKEN": "x"}, "target_regions": ["us-east-1", "eu-west-1"], "namespace": "team-a",
            "labels": {"team": "a"}}"#,
        r#"{"endpoint_name": "plain", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1",
            "target_regions": ["us-east-1", "eu-west-1"], "replicas": 2, "gpu_count": 4}"#,
    ] {
        let ctx = gco_spec::DeployContext::default();
        let first = gco_spec::plan_deploy(&gco_spec::json::parse(request).unwrap(), &ctx)
            .deployment
            .unwrap_or_else(|| panic!("a valid request: {request}"));
        let record = gco_spec::new_record(first.clone(), "2026-12-05T00:00:00+00:00", &mut || {
            "ab".repeat(32)
        });
        let again = gco_spec::plan_deploy(&request_of_record(&record), &ctx);
        assert!(again.report.is_ok(), "{:?}", again.report);
        let again = again.deployment.unwrap();
        assert_eq!(again.endpoint_name, format!("{}-copy", first.endpoint_name));
        assert_eq!(again.spec, first.spec);
        assert_eq!(again.target_regions, first.target_regions);
        assert_eq!(again.namespace, first.namespace);
        assert_eq!(again.labels, first.labels);
    }
}

/// Clone of every golden request's record (`tests/golden/requests.json`, the
/// requests behind the golden manifests): the block comes back as the
/// fields an editor's form shows (`mooncake_mode`, `prefill_replicas`, ...),
/// never as a `mooncake` block the form cannot show, and deploys the same
/// spec again.
#[test]
fn a_records_request_gives_the_block_as_form_fields() {
    use gco_spec::deploy::request_of_record;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/requests.json");
    let golden = gco_spec::json::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let deployed = regions();
    let ctx = gco_spec::DeployContext {
        deployed_regions: Some(&deployed),
        ..Default::default()
    };
    for (name, request) in golden.as_object().unwrap().str_entries() {
        let name = name.to_string_lossy();
        let first = gco_spec::plan_deploy(request, &ctx)
            .deployment
            .unwrap_or_else(|| panic!("{name}: a valid request"));
        let record = gco_spec::new_record(first.clone(), "2026-12-05T00:00:00+00:00", &mut || {
            "ab".repeat(32)
        });
        let clone = request_of_record(&record);
        let clone_obj = clone.as_object().unwrap();
        assert!(
            !clone_obj.contains_key("mooncake"),
            "{name}: {}",
            clone.to_json()
        );
        assert_eq!(
            clone_obj.contains_key("mooncake_mode"),
            record.spec.contains_key("mooncake"),
            "{name}"
        );
        let again = gco_spec::plan_deploy(&clone, &ctx);
        assert!(again.report.is_ok(), "{name}: {:?}", again.report);
        assert_eq!(again.deployment.unwrap().spec, first.spec, "{name}");
    }
}

/// A block the fields cannot build exactly stays a block; a block beside
/// a mode is ignored, with a warning.
#[test]
fn blocks_the_fields_cannot_build_stay_blocks() {
    use gco_spec::deploy::block_as_fields;
    let keep = |text: &str| {
        let v = gco_spec::json::parse(text).unwrap();
        assert_eq!(block_as_fields(v.clone()).to_json(), v.to_json(), "{text}");
    };
    // A split mode without proxy.image: deploy would add the image.
    keep(
        r#"{"image": "i:1", "mooncake": {"mode": "disaggregated", "topology": {"prefill": 1, "decode": 1}}}"#,
    );
    // No image at all: the server's default is not known here.
    keep(r#"{"mooncake": {"mode": "disaggregated", "topology": {"prefill": 1, "decode": 1}}}"#);
    // A store mode without store.enabled, a topology on a store mode.
    keep(r#"{"image": "i:1", "mooncake": {"mode": "store"}}"#);
    keep(
        r#"{"image": "i:1", "mooncake": {"mode": "store", "topology": {"prefill": 1, "decode": 1}, "store": {"enabled": true}}}"#,
    );
    let split = block_as_fields(
        gco_spec::json::parse(
            r#"{"endpoint_name": "a", "mooncake": {"mode": "store", "store": {"enabled": true, "global_segment_size": "9000000000"}}, "port": 1}"#,
        )
        .unwrap(),
    );
    assert_eq!(
        split.to_json(),
        r#"{"endpoint_name": "a", "mooncake_mode": "store", "mooncake_store": {"enabled": true, "global_segment_size": "9000000000"}, "port": 1}"#
    );
    let both =
        plan(r#"{"endpoint_name": "a", "mooncake_mode": "store", "mooncake": {"mode": "both"}}"#);
    assert!(
        both.report
            .diagnostics
            .iter()
            .any(|d| d.path == "mooncake" && d.message.starts_with("mooncake is ignored")),
        "{:?}",
        both.report
    );
}

/// Key order never decides whether the fields can show a block: a block
/// read from DynamoDB comes back with its maps' keys sorted (a map keeps
/// no order), and splits as the block deploy wrote.
#[test]
fn a_block_read_back_in_another_key_order_splits_into_fields() {
    use gco_spec::deploy::block_as_fields;
    let request = |block: &str| {
        gco_spec::json::parse(&format!(
            r#"{{"endpoint_name": "a", "image": "i:1", "mooncake": {block}}}"#
        ))
        .unwrap()
    };
    let written = plan(
        r#"{"endpoint_name": "a", "image": "i:1", "mooncake_mode": "both", "prefill_replicas": 2, "decode_replicas": 5, "mooncake_store": {"global_segment_size": "9000000000"}}"#,
    );
    let block = written
        .deployment
        .unwrap()
        .spec
        .get("mooncake")
        .unwrap()
        .clone();
    let sorted = block.with_sorted_keys();
    assert_ne!(
        sorted.to_json(),
        block.to_json(),
        "the test needs another order"
    );
    for block in [&block, &sorted] {
        let split = block_as_fields(request(&block.to_json()));
        let split = split.as_object().unwrap();
        assert!(!split.contains_key("mooncake"), "{}", block.to_json());
        assert_eq!(split.get("mooncake_mode").unwrap().to_json(), r#""both""#);
        assert_eq!(split.get("prefill_replicas").unwrap().to_json(), "2");
        assert_eq!(split.get("decode_replicas").unwrap().to_json(), "5");
        assert_eq!(
            split
                .get("mooncake_store")
                .unwrap()
                .as_object()
                .unwrap()
                .get("global_segment_size")
                .unwrap()
                .to_json(),
            r#""9000000000""#
        );
    }
    let store_first = block_as_fields(request(r#"{"store": {"enabled": true}, "mode": "store"}"#));
    assert_eq!(
        store_first.to_json(),
        r#"{"endpoint_name": "a", "image": "i:1", "mooncake_mode": "store", "mooncake_store": {"enabled": true}}"#
    );
}

/// Labels Kubernetes refuses are errors at the label; a zero segment is a
/// warning (GCO's rule allows it).
#[test]
fn labels_kubernetes_refuses_and_a_zero_segment() {
    assert_eq!(
        errors(
            r#"{"endpoint_name": "a", "image": "i", "labels": {"bad label": "x", "team": "a b", "ok": "v"}}"#
        ),
        [
            "labels.bad label: labels key 'bad label' is not a Kubernetes label key ([prefix/]name: the name 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): Kubernetes refuses it",
            "labels.team: labels.team value 'a b' is not a Kubernetes label value (empty, or 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): Kubernetes refuses it",
        ]
    );
    let check = plan(
        r#"{"endpoint_name": "a", "mooncake_mode": "store", "mooncake_store": {"global_segment_size": "0"}}"#,
    );
    assert!(check.report.is_ok(), "{:?}", check.report);
    assert!(
        check
            .report
            .warnings()
            .any(|d| d.path == "mooncake.store.global_segment_size" && d.message.contains("is 0")),
        "{:?}",
        check.report
    );
}

#[test]
fn framework_refusals_come_first_as_gco_raises_them() {
    // GCO's deploy checks the framework before it builds the block, so its
    // first message is the framework's even with a broken block beside it;
    // the console lists the rest too, each at its field.
    let e = errors(
        r#"{"endpoint_name": "e", "framework": "sglang", "node_selector": {"eks.amazonaws.com/instance-family": "p3"}, "mooncake_mode": "both", "prefill_replicas": 0}"#,
    );
    assert_eq!(
        e[..3],
        [
            "framework: Mooncake serving requires the vllm framework",
            "env.MODEL: framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>",
            "node_selector.eks.amazonaws.com/instance-family: framework 'sglang' needs an NVIDIA GPU with compute capability 8.0 or newer (A10G (g5), L4 (g6/g6f/gr6), L40S (g6e), A100 (p4d), H100 (p5)); the node selector pins 'p3', for which SGLang ships no prebuilt kernels",
        ]
    );
    assert!(e[3].starts_with("mooncake.topology.prefill: "), "{e:?}");
    let e = errors(
        r#"{"endpoint_name": "e", "image": "x", "framework": "tgi", "mooncake_mode": "split"}"#,
    );
    assert_eq!(e[0], "framework: framework must be 'vllm' or 'sglang'");
}
