//! The manifests of each mode and transport against committed golden YAML
//! (`tests/golden/manifests/*.yaml`; `UPDATE_EXPECT=1` rewrites them), each
//! object checked to be a valid object of its kind, and the errors a region
//! without the facts GCO has no default for gets.

use std::path::PathBuf;

use expect_test::expect_file;
use gco_spec::json::{Object, Value, parse};
use gco_spec::manifests::{Manifests, ScaledObject, manifests};
use gco_spec::plan::{plan_in_region, preview_record};
use gco_spec::{DeployContext, DesiredState, Record, RegionContext, plan_deploy};
use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The golden cases' requests (`tests/golden/requests.json`), by the name
/// of their golden file.
fn golden_requests() -> Object {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/requests.json");
    match parse(&std::fs::read_to_string(path).unwrap()).unwrap() {
        Value::Object(cases) => cases,
        other => panic!("{path} holds no mapping: {}", other.to_json()),
    }
}

fn golden_request(case: &str) -> String {
    golden_requests()
        .get(case)
        .unwrap_or_else(|| panic!("no golden request {case}"))
        .to_json()
}

/// The record a deploy request makes; a golden case's `canary` (no deploy
/// parameter: GCO's canary operation writes it) goes into its spec after.
fn record(request: &str) -> Record {
    let deployed = vec!["us-east-1".to_owned(), "eu-west-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        ..DeployContext::default()
    };
    let mut request = parse(request).unwrap();
    let canary = match &mut request {
        Value::Object(o) => o.remove("canary"),
        _ => None,
    };
    let check = plan_deploy(&request, &ctx);
    let mut record =
        preview_record(check.deployment.unwrap_or_else(|| {
            panic!("invalid request {}: {:?}", request.to_json(), check.report)
        }));
    if let Some(canary) = canary {
        record.spec.insert("canary", canary);
    }
    record
}

/// A stored record: real ownership tokens.
fn stored(request: &str) -> Record {
    let mut r = record(request);
    r.lifecycle_id = Some("ab".repeat(32));
    let mut generations = gco_spec::json::Object::new();
    generations.insert("us-east-1", "cd".repeat(32));
    generations.insert("eu-west-1", "ef".repeat(32));
    r.region_generations = Some(generations);
    r
}

fn region(name: &str) -> RegionContext {
    RegionContext {
        master_image: Some("mooncake/master:0.3.6".into()),
        ..RegionContext::defaults(name)
    }
}

/// Deserialises `item` as `T` and serialises it back: a field the type does
/// not know, or one in the wrong shape, makes the two differ.
fn round_trips<T: DeserializeOwned + Serialize>(item: &serde_json::Value) {
    let typed: T = serde_json::from_value(item.clone())
        .unwrap_or_else(|e| panic!("not a valid {}: {e}\n{item:#}", item["kind"]));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(&back, item, "{} does not round-trip", item["kind"]);
}

fn check_valid(m: &Manifests) {
    let list = m.to_json_value();
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["kind"], "List");
    for item in list["items"].as_array().unwrap() {
        for key in ["apiVersion", "kind"] {
            assert!(item[key].is_string(), "{key} missing in {item:#}");
        }
        let cluster_scoped = item["apiVersion"] == "admissionregistration.k8s.io/v1";
        for key in ["name", "namespace"] {
            let given = item["metadata"][key]
                .as_str()
                .is_some_and(|s| !s.is_empty());
            let want = key == "name" || !cluster_scoped;
            assert_eq!(given, want, "metadata.{key} in {item:#}");
        }
        match (
            item["apiVersion"].as_str().unwrap(),
            item["kind"].as_str().unwrap(),
        ) {
            ("apps/v1", "Deployment") => round_trips::<Deployment>(item),
            ("apps/v1", "StatefulSet") => round_trips::<StatefulSet>(item),
            ("v1", "Service") => round_trips::<Service>(item),
            ("v1", "ConfigMap") => round_trips::<ConfigMap>(item),
            ("v1", "Secret") => round_trips::<Secret>(item),
            ("networking.k8s.io/v1", "NetworkPolicy") => round_trips::<NetworkPolicy>(item),
            ("autoscaling/v2", "HorizontalPodAutoscaler") => {
                round_trips::<HorizontalPodAutoscaler>(item)
            }
            ("keda.sh/v1alpha1", "ScaledObject") => round_trips::<ScaledObject>(item),
            ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy") => {
                round_trips::<ValidatingAdmissionPolicy>(item)
            }
            ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding") => {
                round_trips::<ValidatingAdmissionPolicyBinding>(item)
            }
            (api, kind) => panic!("unexpected object {api} {kind}"),
        }
    }
    // The YAML is the same list.
    let from_yaml: serde_json::Value = serde_norway::from_str(&m.to_yaml()).unwrap();
    assert_eq!(from_yaml, list);
}

/// GCO's TLS contract (`tests/test_inference_endpoint_tls.py`): every
/// model pod ends with exactly one `endpoint-tls-proxy` relaying to its own
/// server, and every model Service publishes only the sidecar's port.
fn check_tls(m: &Manifests) {
    let list = m.to_json_value();
    let mut fronted = 0;
    for item in list["items"].as_array().unwrap() {
        let name = item["metadata"]["name"].as_str().unwrap();
        match item["kind"].as_str().unwrap() {
            "Deployment" => {
                let pod = &item["spec"]["template"];
                let containers = pod["spec"]["containers"].as_array().unwrap();
                let last = containers.last().unwrap();
                assert_eq!(last["name"], "endpoint-tls-proxy", "{name}");
                let sidecars = containers
                    .iter()
                    .filter(|c| c["name"] == "endpoint-tls-proxy")
                    .count();
                assert_eq!(sidecars, 1, "{name}");
                let env = |key: &str| {
                    last["env"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|e| e["name"] == key)
                        .map(|e| e["value"].clone())
                };
                let model_port = containers[0]["ports"][0]["containerPort"].to_string();
                assert_eq!(env("TLS_PROXY_PORT"), Some("8443".into()), "{name}");
                assert_eq!(env("TLS_PROXY_UPSTREAM_HOST"), Some("127.0.0.1".into()));
                assert_eq!(env("TLS_PROXY_UPSTREAM_PORT"), Some(model_port.into()));
                assert_eq!(
                    last["ports"],
                    serde_json::json!([{"containerPort": 8443, "name": "https", "protocol": "TCP"}])
                );
                assert_eq!(last["readinessProbe"]["tcpSocket"]["port"], "https");
                assert_eq!(
                    last["securityContext"]["capabilities"]["drop"],
                    serde_json::json!(["ALL"])
                );
                let volumes = pod["spec"]["volumes"].as_array().unwrap();
                let secret = volumes
                    .iter()
                    .find(|v| {
                        v["secret"]["secretName"] == "gco-inference-tls"
                            && v["secret"]["items"].is_null()
                    })
                    .unwrap_or_else(|| panic!("{name}: no keypair volume"));
                assert_eq!(secret["secret"]["defaultMode"], 0o444);
                let endpoint = ["-prefill", "-decode", "-proxy", "-canary"]
                    .iter()
                    .find_map(|s| name.strip_suffix(s))
                    .unwrap_or(name);
                assert!(
                    volumes
                        .iter()
                        .any(|v| v["configMap"]["name"] == format!("{endpoint}-tls-proxy")),
                    "{name}: no program volume"
                );
                // Only the sidecar mounts the private key.
                for c in &containers[..containers.len() - 1] {
                    for mount in c["volumeMounts"].as_array().into_iter().flatten() {
                        assert_ne!(mount["name"], secret["name"], "{name}");
                    }
                }
                assert_eq!(
                    pod["metadata"]["annotations"]["eks.amazonaws.com/skip-containers"],
                    "endpoint-tls-proxy"
                );
                fronted += 1;
            }
            "Service" if name != "mooncake-master" => {
                assert_eq!(
                    item["spec"]["ports"],
                    serde_json::json!([{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}]),
                    "{name}"
                );
                assert_eq!(item["spec"]["selector"]["app"], name);
                assert_eq!(item["spec"]["selector"]["gco.io/type"], "inference");
            }
            _ => {}
        }
    }
    assert!(fronted > 0, "no model pod");
}

fn golden(name: &str, m: &Manifests) {
    check_valid(m);
    check_tls(m);
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "golden",
        "manifests",
        name,
    ]
    .iter()
    .collect();
    expect_file![path].assert_eq(&m.to_yaml());
}

fn kinds(m: &Manifests) -> Vec<String> {
    m.objects.iter().map(ToString::to_string).collect()
}

#[test]
fn disaggregated_over_rdma() {
    let r = record(&golden_request("disaggregated-rdma"));
    let m = manifests(&r, &region("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m),
        [
            "ValidatingAdmissionPolicy gco-tenant-write-fence",
            "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
            "NetworkPolicy allow-inference-proxy-ingress",
            "Service mooncake-master",
            "StatefulSet mooncake-master",
            "NetworkPolicy allow-inference-internal",
            "NetworkPolicy allow-pod-to-master",
            "NetworkPolicy allow-pod-to-metadata",
            "NetworkPolicy allow-rdma-bootstrap",
            "ConfigMap pd-tls-proxy",
            "ConfigMap pd-mooncake",
            "Deployment pd-prefill",
            "Deployment pd-decode",
            "Service pd-prefill",
            "Service pd-decode",
            "ConfigMap pd-pd-proxy",
            "Secret pd-admin",
            "Deployment pd-proxy",
            "Service pd-proxy",
        ]
    );
    golden("disaggregated-rdma.yaml", &m);
}

#[test]
fn disaggregated_over_tcp_has_no_master_and_no_policies() {
    let r = record(&golden_request("disaggregated-tcp"));
    // No master: no master image needed either.
    let m = manifests(&r, &RegionContext::defaults("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m),
        [
            "ValidatingAdmissionPolicy gco-tenant-write-fence",
            "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
            "NetworkPolicy allow-inference-proxy-ingress",
            "ConfigMap pd-tls-proxy",
            "ConfigMap pd-mooncake",
            "Deployment pd-prefill",
            "Deployment pd-decode",
            "Service pd-prefill",
            "Service pd-decode",
            "ConfigMap pd-pd-proxy",
            "Deployment pd-proxy",
            "Service pd-proxy",
        ]
    );
    golden("disaggregated-tcp.yaml", &m);
}

#[test]
fn store_mode_is_one_deployment_and_service() {
    let r = stored(&golden_request("store"));
    let m = manifests(&r, &region("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m),
        [
            "ValidatingAdmissionPolicy gco-tenant-write-fence",
            "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
            "NetworkPolicy allow-inference-proxy-ingress",
            "Service mooncake-master",
            "StatefulSet mooncake-master",
            "NetworkPolicy allow-inference-internal",
            "NetworkPolicy allow-pod-to-master",
            "NetworkPolicy allow-pod-to-metadata",
            "NetworkPolicy allow-rdma-bootstrap",
            "ConfigMap kv-tls-proxy",
            "ConfigMap kv-mooncake",
            "Deployment kv",
            "Service kv",
        ]
    );
    golden("store.yaml", &m);
}

fn both() -> String {
    golden_request("both")
}

fn both_region() -> RegionContext {
    RegionContext {
        cluster_name: Some("gco-eu-west-1".into()),
        regional_bucket: Some("gco-shared-eu-west-1".into()),
        ..RegionContext::defaults("eu-west-1")
    }
}

#[test]
fn both_with_store_cold_tier_and_autoscaling() {
    let r = stored(&both());
    let m = manifests(&r, &both_region()).unwrap();
    assert_eq!(
        kinds(&m),
        [
            "ValidatingAdmissionPolicy gco-tenant-write-fence",
            "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
            "NetworkPolicy allow-inference-proxy-ingress",
            "Service mooncake-master",
            "StatefulSet mooncake-master",
            "NetworkPolicy allow-inference-internal",
            "NetworkPolicy allow-pod-to-master",
            "NetworkPolicy allow-pod-to-metadata",
            "NetworkPolicy allow-rdma-bootstrap",
            "ConfigMap chat-tls-proxy",
            "ConfigMap chat-mooncake",
            "Deployment chat-prefill",
            "Deployment chat-decode",
            "HorizontalPodAutoscaler chat-prefill",
            "ScaledObject chat-decode",
            "Service chat-prefill",
            "Service chat-decode",
            "ConfigMap chat-pd-proxy",
            "Secret chat-admin",
            "Deployment chat-proxy",
            "Service chat-proxy",
        ]
    );
    let list = m.to_json_value();
    let items = list["items"].as_array().unwrap();
    // The bootstrap window stops at the highest port.
    let window = &items[8]["spec"]["ingress"][0]["ports"][0];
    assert_eq!(
        (window["port"].as_i64(), window["endPort"].as_i64()),
        (Some(65500), Some(65535))
    );
    // The region's ECR copy for the roles; the proxy keeps the stored image.
    let image = |i: usize| items[i]["spec"]["template"]["spec"]["containers"][0]["image"].clone();
    assert_eq!(
        image(11),
        "111122223333.dkr.ecr.eu-west-1.amazonaws.com/vllm:0.27"
    );
    assert_eq!(
        image(19),
        "111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:0.27"
    );
    // The notes say which defaults were used.
    let yaml = m.to_yaml();
    assert!(yaml.starts_with("# "));
    assert!(yaml.contains(
        "# MOONCAKE_METADATA_SERVER not given: GCO's default http://mooncake-master:8080/metadata\n"
    ));
    assert!(
        yaml.contains("# MOONCAKE_MASTER_ADDRESS not given: GCO's default mooncake-master:50051\n")
    );
    golden("both.yaml", &m);
}

#[test]
fn plain_endpoint() {
    let r = stored(&golden_request("plain"));
    let m = manifests(&r, &RegionContext::defaults("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m),
        [
            "ValidatingAdmissionPolicy gco-tenant-write-fence",
            "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
            "NetworkPolicy allow-inference-proxy-ingress",
            "ConfigMap web-tls-proxy",
            "Deployment web",
            "Service web"
        ]
    );
    golden("plain.yaml", &m);
}

#[test]
fn an_sglang_endpoint_gets_gcos_launcher_and_startup_probe() {
    let r = stored(&golden_request("sglang"));
    let m = manifests(&r, &RegionContext::defaults("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m)[3..],
        [
            "ConfigMap chat-tls-proxy",
            "Deployment chat",
            "Service chat"
        ]
    );
    let list = m.to_json_value();
    let pod = &list["items"][4]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["command"],
        serde_json::json!(["python3", "-m", "sglang.launch_server"])
    );
    // GCO's monitor (7a0b3c6fd4): the spec's arguments first, then the
    // launcher's host, port and model.
    assert_eq!(
        container["args"],
        serde_json::json!([
            "--tp",
            "2",
            "--host",
            "0.0.0.0",
            "--port",
            "30000",
            "--model-path",
            "$(MODEL)"
        ])
    );
    let startup = &container["startupProbe"];
    assert_eq!(startup["httpGet"]["path"], "/health");
    assert_eq!(
        (&startup["periodSeconds"], &startup["failureThreshold"]),
        (&serde_json::json!(15), &serde_json::json!(80))
    );
    // Off the GPUs SGLang ships no kernels for.
    assert_eq!(
        pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        serde_json::json!({"nodeSelectorTerms": [{"matchExpressions": [{
            "key": "eks.amazonaws.com/instance-gpu-name",
            "operator": "NotIn",
            "values": ["k80", "m60", "v100", "t4"]
        }]}]})
    );
    golden("sglang.yaml", &m);

    // A model named in the extra arguments is not given twice.
    let r = stored(
        r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "extra_args": ["--model-path", "/models/qwen"], "target_regions": ["us-east-1"]}"#,
    );
    let list = manifests(&r, &RegionContext::defaults("us-east-1"))
        .unwrap()
        .to_json_value();
    assert_eq!(
        list["items"][4]["spec"]["template"]["spec"]["containers"][0]["args"],
        serde_json::json!([
            "--model-path",
            "/models/qwen",
            "--host",
            "0.0.0.0",
            "--port",
            "8000"
        ])
    );
}

#[test]
fn a_canary_is_fronted_by_its_endpoints_program() {
    let r = stored(&golden_request("canary"));
    let m = manifests(&r, &RegionContext::defaults("us-east-1")).unwrap();
    assert_eq!(
        kinds(&m)[3..],
        [
            "ConfigMap web-tls-proxy",
            "Deployment web",
            "Service web",
            "Deployment web-canary",
            "Service web-canary"
        ]
    );
    let list = m.to_json_value();
    let canary = &list["items"][6];
    assert_eq!(canary["spec"]["replicas"], 2);
    assert_eq!(
        canary["spec"]["template"]["spec"]["containers"][0]["image"],
        "vllm/vllm-openai:v0.31.0"
    );
    golden("canary.yaml", &m);
}

#[test]
fn a_bootstrap_window_over_the_sidecars_port_is_refused() {
    for (base, clashes) in [(8342, false), (8343, true), (8443, true), (8444, false)] {
        let r = stored(&format!(
            r#"{{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {{"protocol": "tcp", "bootstrap_base_port": {base}}}, "target_regions": ["us-east-1"]}}"#
        ));
        let answer = manifests(&r, &RegionContext::defaults("us-east-1"));
        assert_eq!(answer.is_err(), clashes, "{base}");
        if let Err(e) = answer {
            assert_eq!(e.path, "spec.mooncake.transfer.bootstrap_base_port");
            assert!(
                e.message
                    .contains("contains port 8443, reserved for the model pod's")
            );
        }
    }
}

#[test]
fn a_model_may_not_listen_on_the_sidecars_port() {
    let r = stored(
        r#"{"endpoint_name": "web", "image": "vllm/vllm-openai:v0.31.0", "port": 8443, "target_regions": ["us-east-1"]}"#,
    );
    let (path, message) = error(&r, &RegionContext::defaults("us-east-1"));
    assert_eq!(path, "spec.port");
    assert!(
        message.starts_with("port 8443 is reserved for the model pod's TLS sidecar"),
        "{message}"
    );
}

#[test]
fn the_region_settings_replace_the_defaults_and_drop_their_notes() {
    let r = record(r#"{"endpoint_name": "kv", "mooncake_mode": "store"}"#);
    let ctx = RegionContext {
        metadata_server: Some("http://meta.gco.svc:8080/metadata".into()),
        master_address: Some("master.gco.svc:50051".into()),
        ..region("us-east-1")
    };
    let m = manifests(&r, &ctx).unwrap();
    let json = &m.to_json_value()["items"][10]["data"]["mooncake.json"];
    assert_eq!(
        json,
        r#"{"device_name": "", "global_segment_size": "4294967296", "local_buffer_size": "2147483648", "master_server_address": "master.gco.svc:50051", "metadata_server": "http://meta.gco.svc:8080/metadata", "protocol": "rdma"}"#
    );
    assert!(
        !m.notes.iter().any(|n| n.contains("not given")),
        "{:?}",
        m.notes
    );
}

#[test]
fn a_stopped_endpoint_is_scaled_to_zero_without_autoscalers() {
    let mut r = stored(&both());
    r.desired_state = DesiredState::Stopped;
    let m = manifests(&r, &both_region()).unwrap();
    let list = m.to_json_value();
    for item in list["items"].as_array().unwrap() {
        assert!(
            !item["kind"].as_str().unwrap().contains("Scale"),
            "{item:#}"
        );
        if item["kind"] == "Deployment" {
            assert_eq!(item["spec"]["replicas"], 0, "{}", item["metadata"]["name"]);
        }
    }
    check_valid(&m);
}

fn error(r: &Record, ctx: &RegionContext) -> (String, String) {
    let e = manifests(r, ctx).unwrap_err();
    (e.path, e.message)
}

#[test]
fn the_cold_tier_without_the_regional_bucket_is_refused_as_the_monitor_fails() {
    let r = stored(&both());
    let ctx = RegionContext {
        regional_bucket: None,
        ..both_region()
    };
    assert_eq!(
        error(&r, &ctx),
        (
            "spec.mooncake.store.cold_tier_enabled".into(),
            "the cold tier needs eu-west-1's regional bucket (SSM /gco/regional-shared-bucket/name): pass it as the regional bucket. Without it GCO's monitor cannot render mooncake.json and reports the region as error 'cold_tier_s3_uri' (as read)".into()
        )
    );
    let ctx = RegionContext {
        project_name: Some("acme".into()),
        ..ctx
    };
    assert!(
        error(&r, &ctx)
            .1
            .contains("(SSM /acme/regional-shared-bucket/name)")
    );
}

#[test]
fn a_master_without_an_image_is_refused() {
    let r = record(r#"{"endpoint_name": "kv", "mooncake_mode": "store"}"#);
    assert_eq!(
        error(&r, &RegionContext::defaults("us-east-1")),
        (
            "spec.mooncake.store.master_image".into(),
            "the shared mooncake-master needs an image: set mooncake.store.master_image or give us-east-1's MOONCAKE_MASTER_IMAGE. GCO has no default: with neither, its monitor cannot create the master and the region stays creating with 'shared master could not be created' (as read)".into()
        )
    );
}

#[test]
fn a_gpu_trigger_without_the_cluster_name_is_refused() {
    let r = stored(&both());
    let ctx = RegionContext {
        cluster_name: None,
        ..both_region()
    };
    assert_eq!(
        error(&r, &ctx),
        (
            "spec.mooncake.autoscaling.decode.metrics".into(),
            "the gpu trigger of ScaledObject chat-decode names eu-west-1's EKS cluster: give its cluster name (GCO's monitor reads it from CLUSTER_NAME; GCO has no default)".into()
        )
    );
}

#[test]
fn untargeted_regions_and_deleted_endpoints_get_nothing() {
    let mut r = stored(&both());
    assert_eq!(
        error(&r, &region("ap-south-1")),
        (
            "region".into(),
            "endpoint 'chat' does not target region 'ap-south-1' (its regions: us-east-1, eu-west-1): its monitor there applies nothing".into()
        )
    );
    r.desired_state = DesiredState::Deleted;
    assert_eq!(
        error(&r, &both_region()),
        (
            "desired_state".into(),
            "endpoint 'chat' is deleted: the monitor removes its objects and applies none".into()
        )
    );
}

#[test]
fn an_invalid_block_is_refused_with_the_references_message() {
    let mut r = stored(&both());
    r.spec.insert(
        "mooncake",
        parse(r#"{"mode": "both", "topology": {"prefill": 0, "decode": 1}}"#).unwrap(),
    );
    assert_eq!(
        error(&r, &both_region()),
        (
            "spec.mooncake.topology.prefill".into(),
            "mooncake.topology.prefill out of range [1, 1000]: 0".into()
        )
    );
}

#[test]
fn the_admin_secret_value_is_redacted_and_the_proxy_program_is_a_placeholder() {
    let m = manifests(&stored(&both()), &both_region()).unwrap();
    let list = m.to_json_value();
    let items = list["items"].as_array().unwrap();
    let secret = items.iter().find(|i| i["kind"] == "Secret").unwrap();
    assert_eq!(
        secret["stringData"]["ADMIN_API_KEY"],
        "<redacted: the monitor generates 64 random hex characters>"
    );
    // Only the lifecycle id: the facts name no other annotation on it.
    assert_eq!(
        secret["metadata"]["annotations"],
        serde_json::json!({"gco.io/lifecycle-id": "ab".repeat(32)})
    );
    let program = items
        .iter()
        .find(|i| i["metadata"]["name"] == "chat-pd-proxy" && i["kind"] == "ConfigMap")
        .unwrap();
    assert!(
        program["data"]["mooncake_pd_proxy.py"]
            .as_str()
            .unwrap()
            .contains("is not shipped here")
    );
}

#[test]
fn store_modes_over_tcp_keep_the_master_but_leave_efa() {
    for (mode, file) in [("store", "store-tcp.yaml"), ("both", "both-tcp.yaml")] {
        let r = record(&golden_request(&format!("{mode}-tcp")));
        let m = manifests(&r, &region("us-east-1")).unwrap();
        let names = kinds(&m);
        assert!(
            names.contains(&"StatefulSet mooncake-master".to_owned()),
            "{mode}"
        );
        assert!(
            names.contains(&"NetworkPolicy allow-rdma-bootstrap".to_owned()),
            "{mode}"
        );
        let yaml = m.to_yaml();
        for efa in ["vpc.amazonaws.com/efa", "mooncake-efa", "efa: 'true'"] {
            assert!(!yaml.contains(efa), "{mode}: no EFA over tcp ({efa})");
        }
        golden(file, &m);
    }
}

#[test]
fn a_blank_region_setting_counts_as_not_given() {
    let r = record(r#"{"endpoint_name": "kv", "mooncake_mode": "store"}"#);
    let ctx = RegionContext {
        metadata_server: Some(" ".into()),
        ..region("us-east-1")
    };
    let m = manifests(&r, &ctx).unwrap();
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("MOONCAKE_METADATA_SERVER not given"))
    );
    let ctx = RegionContext {
        master_image: Some("".into()),
        ..region("us-east-1")
    };
    assert_eq!(error(&r, &ctx).0, "spec.mooncake.store.master_image");
}

/// The plan and the manifests render one skeleton: for every golden case,
/// in each of its regions, the same objects under the same names, in the
/// same order.
#[test]
fn plan_and_manifests_list_the_same_objects_for_every_golden_case() {
    let cases = golden_requests();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/manifests");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut named: Vec<String> = cases
        .str_entries()
        .map(|(case, _)| format!("{}.yaml", case.to_string_lossy()))
        .collect();
    named.sort();
    assert_eq!(named, files, "one request per golden file");
    for (case, request) in cases.str_entries() {
        let r = stored(&request.to_json());
        for region in &r.target_regions {
            // Every fact a region may have to supply, so that neither refuses.
            let ctx = RegionContext {
                master_image: Some("mooncake/master:0.3.6".into()),
                cluster_name: Some(format!("gco-{region}")),
                regional_bucket: Some(format!("gco-shared-{region}")),
                ..RegionContext::defaults(region)
            };
            let plan = plan_in_region(&r, &ctx).unwrap();
            let planned: Vec<String> = plan
                .objects
                .iter()
                .map(|o| format!("{} {}", o.kind.as_str(), o.name))
                .collect();
            assert_eq!(
                kinds(&manifests(&r, &ctx).unwrap()),
                planned,
                "{} in {region}",
                case.to_string_lossy()
            );
        }
    }
}
