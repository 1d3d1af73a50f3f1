//! Plans against what GCO_FACTS section 4 says the monitor creates. The
//! expected texts are written out here from the facts, independently of the
//! code that renders them.

use gco_spec::json::parse;
use gco_spec::plan::{Action, Kind, Plan, plan, preview_record};
use gco_spec::{DeployContext, DesiredState, Record, Value, plan_deploy};

fn record(request: &str) -> Record {
    let deployed = vec!["us-east-1".to_owned(), "cn-north-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&deployed),
        ..DeployContext::default()
    };
    let check = plan_deploy(&parse(request).unwrap(), &ctx);
    preview_record(
        check
            .deployment
            .unwrap_or_else(|| panic!("invalid request {request}: {:?}", check.report)),
    )
}

fn plan_in(r: &Record, region: &str) -> Plan {
    plan(r, region).unwrap()
}

/// What GCO's base pass keeps in `gco-inference`, before every endpoint's
/// own objects, always kept.
const BASE_PASS: [&str; 3] = [
    "ValidatingAdmissionPolicy gco-tenant-write-fence",
    "ValidatingAdmissionPolicyBinding gco-tenant-write-fence",
    "NetworkPolicy allow-inference-proxy-ingress",
];

/// The endpoint's objects, after the base pass's (checked to lead, kept).
fn names(p: &Plan) -> Vec<String> {
    let all: Vec<String> = p
        .objects
        .iter()
        .map(|o| format!("{} {}", o.kind.as_str(), o.name))
        .collect();
    assert_eq!(all[..3], BASE_PASS);
    for o in &p.objects[..3] {
        assert!(
            o.shared && o.base_pass && o.action == Action::Keep,
            "{}",
            o.name
        );
    }
    all[3..].to_vec()
}

fn setting<'a>(p: &'a Plan, kind: Kind, name: &str, key: &str) -> Option<&'a Value> {
    let o = p
        .objects
        .iter()
        .find(|o| o.kind == kind && o.name == name)?;
    o.settings.get(key)
}

fn text(p: &Plan, kind: Kind, name: &str, key: &str) -> String {
    setting(p, kind, name, key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{name}.{key}"))
        .to_owned()
}

fn int(p: &Plan, kind: Kind, name: &str, key: &str) -> i64 {
    setting(p, kind, name, key)
        .and_then(Value::as_int)
        .and_then(|i| i.as_i64())
        .unwrap()
}

/// The facts' connector entries, spelled out.
fn transfer_entry(role: &str, protocol: &str, device: &str) -> String {
    format!(
        r#"{{"kv_connector": "MooncakeConnector", "kv_role": "{role}", "kv_connector_extra_config": {{"mooncake_protocol": "{protocol}", "device_name": "{device}"}}}}"#
    )
}

fn store_entry(role: &str) -> String {
    format!(r#"{{"kv_connector": "MooncakeStoreConnector", "kv_role": "{role}"}}"#)
}

fn expected_kv(mode: &str, role: &str, protocol: &str, device: &str) -> String {
    match mode {
        "disaggregated" => transfer_entry(role, protocol, device),
        "store" => store_entry(role),
        _ => format!(
            r#"{{"kv_connector": "MultiConnector", "kv_role": "{role}", "kv_connector_extra_config": {{"connectors": [{}, {}]}}}}"#,
            transfer_entry(role, protocol, device),
            store_entry(role)
        ),
    }
}

#[test]
fn disaggregated_prefill_matches_the_facts_text_byte_for_byte() {
    let r = record(r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated"}"#);
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        text(&p, Kind::Deployment, "pd-prefill", "kv_transfer_config"),
        r#"{"kv_connector": "MooncakeConnector", "kv_role": "kv_producer", "kv_connector_extra_config": {"mooncake_protocol": "efa", "device_name": ""}}"#
    );
}

/// Every mode x transfer protocol x store on/off x autoscaling on/off.
#[test]
fn every_mode_transfer_store_and_autoscaling_combination() {
    let mut checked = 0;
    for mode in ["disaggregated", "store", "both"] {
        for transfer in [None, Some("rdma"), Some("tcp")] {
            for store_on in [false, true] {
                for autoscale in [false, true] {
                    if autoscale && mode == "store" {
                        continue; // refused by the rules: autoscaling needs a split mode
                    }
                    check_combination(mode, transfer, store_on, autoscale);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 30);
}

fn check_combination(mode: &str, transfer: Option<&str>, store_on: bool, autoscale: bool) {
    let transfer_json = transfer.map_or(String::new(), |p| {
        format!(r#", "mooncake_transfer": {{"protocol": "{p}", "device_name": "eth9"}}"#)
    });
    let store_json =
        format!(r#", "mooncake_store": {{"enabled": {store_on}, "global_segment_size": 1024}}"#);
    let autoscale_json = if autoscale {
        r#", "mooncake_autoscaling": {"enabled": true, "prefill": {"min_replicas": 2, "max_replicas": 6}, "decode": {"min_replicas": 3, "max_replicas": 9, "metrics": [{"type": "gpu", "target": 75}]}}"#
    } else {
        ""
    };
    let request = format!(
        r#"{{"endpoint_name": "ep", "mooncake_mode": "{mode}", "prefill_replicas": 4, "decode_replicas": 5, "replicas": 7{transfer_json}{store_json}{autoscale_json}}}"#
    );
    let r = record(&request);
    let p = plan_in(&r, "us-east-1");
    let case = format!("{mode} {transfer:?} store={store_on} autoscale={autoscale}");
    let protocol = transfer.unwrap_or("rdma");
    let device = if transfer.is_some() { "eth9" } else { "" };
    let vllm_protocol = if protocol == "rdma" { "efa" } else { "tcp" };
    let split = mode != "store";
    let has_store = mode != "disaggregated";

    // Objects, in the monitor's pass order (GCO_FACTS_NEWEST 4.1): the
    // shared master and the namespace's NetworkPolicies, the endpoint's
    // config, the role Deployments, their autoscalers, then the Services and
    // the PD proxy.
    let mut expected: Vec<String> = Vec::new();
    if has_store || protocol == "rdma" {
        expected.extend([
            "Service mooncake-master".into(),
            "StatefulSet mooncake-master".into(),
            "NetworkPolicy allow-inference-internal".into(),
            "NetworkPolicy allow-pod-to-master".into(),
            "NetworkPolicy allow-pod-to-metadata".into(),
            "NetworkPolicy allow-rdma-bootstrap".into(),
        ]);
    }
    expected.push("ConfigMap ep-tls-proxy".into());
    expected.push("ConfigMap ep-mooncake".into());
    if split {
        expected.extend([
            "Deployment ep-prefill".into(),
            "Deployment ep-decode".into(),
        ]);
        if autoscale {
            expected.extend([
                "HorizontalPodAutoscaler ep-prefill".into(),
                "ScaledObject ep-decode".into(),
            ]);
        }
        expected.extend([
            "Service ep-prefill".into(),
            "Service ep-decode".into(),
            "ConfigMap ep-pd-proxy".into(),
            "Secret ep-admin".into(),
            "Deployment ep-proxy".into(),
            "Service ep-proxy".into(),
        ]);
    } else {
        expected.extend(["Deployment ep".into(), "Service ep".into()]);
    }
    assert_eq!(names(&p), expected, "{case}");

    // Replicas and kv-transfer-config per role.
    if split {
        for (role, kv_role, count, min) in [
            ("prefill", "kv_producer", 4, 2),
            ("decode", "kv_consumer", 5, 3),
        ] {
            let name = format!("ep-{role}");
            let want = if autoscale { min } else { count };
            assert_eq!(
                int(&p, Kind::Deployment, &name, "replicas"),
                want,
                "{case} {role}"
            );
            assert_eq!(
                text(&p, Kind::Deployment, &name, "kv_transfer_config"),
                expected_kv(mode, kv_role, vllm_protocol, device),
                "{case} {role}"
            );
            let efa = setting(&p, Kind::Deployment, &name, "efa").is_some();
            assert_eq!(efa, protocol == "rdma", "{case} {role} EFA placement");
        }
        if autoscale {
            assert_eq!(
                int(
                    &p,
                    Kind::HorizontalPodAutoscaler,
                    "ep-prefill",
                    "max_replicas"
                ),
                6
            );
            let metrics =
                setting(&p, Kind::HorizontalPodAutoscaler, "ep-prefill", "metrics").unwrap();
            assert_eq!(
                metrics.to_json(),
                r#"[{"type": "cpu", "target": 70}]"#,
                "default metric"
            );
            let metrics = setting(&p, Kind::ScaledObject, "ep-decode", "metrics").unwrap();
            assert_eq!(metrics.to_json(), r#"[{"type": "gpu", "target": 75}]"#);
        }
    } else {
        // The single store instance always gets 1 (GCO_FACTS_NEWEST 4.3).
        assert_eq!(int(&p, Kind::Deployment, "ep", "replicas"), 1, "{case}");
        assert_eq!(
            text(&p, Kind::Deployment, "ep", "kv_transfer_config"),
            store_entry("kv_both"),
            "{case}"
        );
    }

    // mooncake.json: keys sorted; store keys only for an enabled store.
    let store_enabled = store_on;
    let mut json = format!(r#"{{"device_name": "{device}", "#);
    if store_enabled {
        json.push_str(r#""global_segment_size": "1024", "local_buffer_size": "2147483648", "master_server_address": "mooncake-master:50051", "#);
    }
    json.push_str(&format!(
        r#""metadata_server": "http://mooncake-master:8080/metadata", "protocol": "{protocol}"}}"#
    ));
    assert_eq!(
        text(&p, Kind::ConfigMap, "ep-mooncake", "mooncake.json"),
        json,
        "{case}"
    );
}

#[test]
fn store_defaults_and_cold_tier_in_mooncake_json() {
    let r = record(
        r#"{"endpoint_name": "kv", "mooncake_mode": "store", "mooncake_store": {"cold_tier_enabled": true}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        text(&p, Kind::ConfigMap, "kv-mooncake", "mooncake.json"),
        r#"{"cold_tier_s3_uri": "s3://<SSM /gco/regional-shared-bucket/name in us-east-1>/mooncake-kv/kv/", "device_name": "", "global_segment_size": "4294967296", "local_buffer_size": "2147483648", "master_server_address": "mooncake-master:50051", "metadata_server": "http://mooncake-master:8080/metadata", "protocol": "rdma"}"#
    );
}

#[test]
fn tcp_disaggregated_needs_no_master_and_no_efa() {
    let r = record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {"protocol": "tcp"}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert!(!names(&p).iter().any(|n| n.contains("mooncake-master")));
    assert!(!names(&p).iter().any(|n| n.starts_with("NetworkPolicy")));
    // Every model Service publishes only the TLS sidecar's port.
    assert_eq!(int(&p, Kind::Service, "pd-decode", "port"), 8443);
    assert_eq!(text(&p, Kind::Service, "pd-proxy", "target_port"), "https");
    assert_eq!(
        text(&p, Kind::Deployment, "pd-proxy", "tls_sidecar"),
        "endpoint-tls-proxy: https :8443 -> 127.0.0.1:8000"
    );
    assert!(setting(&p, Kind::Deployment, "pd-decode", "efa").is_none());
}

#[test]
fn efa_placement_as_the_facts_list_it() {
    let r = record(r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "gpu_count": 8}"#);
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        setting(&p, Kind::Deployment, "pd-prefill", "efa")
            .unwrap()
            .to_json(),
        r#"{"tolerations": [{"key": "vpc.amazonaws.com/efa", "operator": "Equal", "value": "true", "effect": "NoSchedule"}], "node_selector": {"efa": "true", "mooncake-efa": "true"}, "gpu_container_resources": {"vpc.amazonaws.com/efa": "1"}}"#
    );
}

#[test]
fn named_admin_secret_replaces_the_generated_one() {
    let r = record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "both", "mooncake_proxy": {"admin_api_key_secret": "team-key", "image": "proxy:2", "replicas": 3}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert!(!names(&p).iter().any(|n| n.starts_with("Secret")));
    assert_eq!(
        text(&p, Kind::Deployment, "pd-proxy", "admin_key_secret"),
        "team-key"
    );
    assert_eq!(text(&p, Kind::Deployment, "pd-proxy", "image"), "proxy:2");
    assert_eq!(int(&p, Kind::Deployment, "pd-proxy", "replicas"), 3);
}

#[test]
fn ecr_images_are_pulled_from_each_regions_copy() {
    let r = record(
        r#"{"endpoint_name": "pd", "image": "111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:1", "mooncake_mode": "disaggregated"}"#,
    );
    let east = plan_in(&r, "us-east-1");
    let china = plan_in(&r, "cn-north-1");
    assert_eq!(
        text(&east, Kind::Deployment, "pd-decode", "image"),
        "111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:1"
    );
    let cn = "111122223333.dkr.ecr.cn-north-1.amazonaws.com.cn/vllm:1";
    assert_eq!(text(&china, Kind::Deployment, "pd-decode", "image"), cn);
    // The proxy image is the one deploy stored; the monitor never rewrites
    // it for the region (GCO_FACTS_NEWEST 4.3).
    assert_eq!(
        text(&china, Kind::Deployment, "pd-proxy", "image"),
        "111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:1"
    );
}

#[test]
fn plain_endpoint_is_a_deployment_and_a_service() {
    let r = record(
        r#"{"endpoint_name": "web", "image": "nginx:1", "replicas": 3, "port": 9000, "extra_args": ["--x"]}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        names(&p),
        ["ConfigMap web-tls-proxy", "Deployment web", "Service web"]
    );
    assert_eq!(int(&p, Kind::Deployment, "web", "replicas"), 3);
    assert_eq!(int(&p, Kind::Service, "web", "port"), 8443);
    assert_eq!(
        text(&p, Kind::Deployment, "web", "tls_sidecar"),
        "endpoint-tls-proxy: https :8443 -> 127.0.0.1:9000"
    );
    assert_eq!(
        setting(&p, Kind::Deployment, "web", "extra_args")
            .unwrap()
            .to_json(),
        r#"["--x"]"#
    );
    assert!(
        p.objects[3..].iter().all(|o| o.action == Action::Apply),
        "the base pass's are kept"
    );
}

#[test]
fn an_sglang_endpoint_shows_gcos_launcher() {
    let r = record(
        r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        names(&p),
        [
            "ConfigMap chat-tls-proxy",
            "Deployment chat",
            "Service chat"
        ]
    );
    assert_eq!(
        setting(&p, Kind::Deployment, "chat", "launcher")
            .unwrap()
            .as_str(),
        Some("python3 -m sglang.launch_server --host 0.0.0.0 --port 8000 --model-path $(MODEL)")
    );
    assert_eq!(
        text(&p, Kind::Deployment, "chat", "node_affinity"),
        "eks.amazonaws.com/instance-gpu-name NotIn k80, m60, v100, t4"
    );
    assert_eq!(
        int(&p, Kind::Deployment, "chat", "startup_probe_seconds"),
        1200
    );
    let vllm =
        record(r#"{"endpoint_name": "web", "image": "vllm/vllm-openai:v1", "framework": "vllm"}"#);
    assert!(
        setting(
            &plan_in(&vllm, "us-east-1"),
            Kind::Deployment,
            "web",
            "launcher"
        )
        .is_none()
    );
}

#[test]
fn stopped_endpoints_scale_to_zero_and_keep_the_rest() {
    let mut r = record(r#"{"endpoint_name": "pd", "mooncake_mode": "both"}"#);
    r.desired_state = DesiredState::Stopped;
    let p = plan_in(&r, "us-east-1");
    for o in &p.objects {
        let want = if o.kind == Kind::Deployment {
            Action::ScaleToZero
        } else {
            Action::Keep
        };
        assert_eq!(o.action, want, "{}", o.name);
        if o.kind == Kind::Deployment {
            assert_eq!(o.settings.get("replicas"), Some(&Value::int(0)));
        }
    }
}

#[test]
fn deleted_endpoints_remove_all_but_the_shared_master_and_policies() {
    let mut r = record(r#"{"endpoint_name": "pd", "mooncake_mode": "both"}"#);
    r.desired_state = DesiredState::Deleted;
    let p = plan_in(&r, "us-east-1");
    let shared: Vec<_> = p
        .objects
        .iter()
        .filter(|o| o.shared)
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(
        shared,
        [
            "gco-tenant-write-fence",
            "gco-tenant-write-fence",
            "allow-inference-proxy-ingress",
            "mooncake-master",
            "mooncake-master",
            "allow-inference-internal",
            "allow-pod-to-master",
            "allow-pod-to-metadata",
            "allow-rdma-bootstrap"
        ]
    );
    for o in &p.objects {
        let want = if o.shared {
            Action::Keep
        } else {
            Action::Delete
        };
        assert_eq!(o.action, want, "{}", o.name);
    }
}

#[test]
fn a_region_left_behind_is_cleaned_up_and_an_unknown_one_refused() {
    let mut r = record(
        r#"{"endpoint_name": "web", "image": "nginx:1", "target_regions": ["us-east-1", "eu-west-1"]}"#,
    );
    r.target_regions.retain(|x| x != "eu-west-1");
    let p = plan_in(&r, "eu-west-1");
    names(&p);
    assert!(p.objects[3..].iter().all(|o| o.action == Action::Delete));
    let e = plan(&r, "ap-south-1").unwrap_err();
    assert_eq!(e.path, "region");
    assert_eq!(
        e.message,
        "endpoint 'web' does not target region 'ap-south-1' (its regions: us-east-1)"
    );
}

#[test]
fn an_invalid_stored_block_is_refused_with_the_references_message() {
    let mut r = record(r#"{"endpoint_name": "pd", "mooncake_mode": "both"}"#);
    r.spec.insert(
        "mooncake",
        parse(r#"{"mode": "both", "topology": {"prefill": 0, "decode": 1}}"#).unwrap(),
    );
    let e = plan(&r, "us-east-1").unwrap_err();
    assert_eq!(e.path, "spec.mooncake.topology.prefill");
    assert_eq!(
        e.message,
        "mooncake.topology.prefill out of range [1, 1000]: 0"
    );
}

#[test]
fn mooncake_json_reads_protocol_and_device_only_from_transfer() {
    let r = record(
        r#"{"endpoint_name": "kv", "target_regions": ["us-east-1"], "mooncake_mode": "store", "mooncake_transfer": {"protocol": "tcp", "device_name": "eth1"}, "mooncake_store": {"protocol": "rdma", "device_name": "rdmap0", "master_server_address": "master.us-east-1.example:50051", "metadata_server": "http://meta.us-east-1.example/metadata"}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    // The spec's store addresses are never rendered: the region's are.
    assert_eq!(
        text(&p, Kind::ConfigMap, "kv-mooncake", "mooncake.json"),
        r#"{"device_name": "eth1", "global_segment_size": "4294967296", "local_buffer_size": "2147483648", "master_server_address": "mooncake-master:50051", "metadata_server": "http://mooncake-master:8080/metadata", "protocol": "tcp"}"#
    );
}

#[test]
fn a_truthy_store_enabled_turns_the_store_on() {
    let r = record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {"protocol": "tcp"}, "mooncake_store": {"enabled": 1}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        text(&p, Kind::ConfigMap, "pd-mooncake", "mooncake.json"),
        r#"{"device_name": "", "global_segment_size": "4294967296", "local_buffer_size": "2147483648", "master_server_address": "mooncake-master:50051", "metadata_server": "http://mooncake-master:8080/metadata", "protocol": "tcp"}"#
    );
}

#[test]
fn the_regions_monitor_settings_give_the_addresses_and_the_bucket() {
    let r = record(
        r#"{"endpoint_name": "kv", "mooncake_mode": "store", "mooncake_store": {"cold_tier_enabled": true}}"#,
    );
    let ctx = gco_spec::RegionContext {
        regional_bucket: Some("shared-use1".into()),
        master_address: Some("master.gco.svc:6000".into()),
        ..gco_spec::RegionContext::defaults("us-east-1")
    };
    let p = gco_spec::plan_in_region(&r, &ctx).unwrap();
    assert_eq!(
        text(&p, Kind::ConfigMap, "kv-mooncake", "mooncake.json"),
        r#"{"cold_tier_s3_uri": "s3://shared-use1/mooncake-kv/kv/", "device_name": "", "global_segment_size": "4294967296", "local_buffer_size": "2147483648", "master_server_address": "master.gco.svc:6000", "metadata_server": "http://master.gco.svc:8080/metadata", "protocol": "rdma"}"#
    );
}

#[test]
fn autoscaling_enabled_truthy_seeds_replicas_but_only_true_makes_an_autoscaler() {
    let r = record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "prefill_replicas": 4, "mooncake_autoscaling": {"enabled": 1, "prefill": {"min_replicas": 2}}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(int(&p, Kind::Deployment, "pd-prefill", "replicas"), 2);
    assert!(!names(&p).iter().any(|n| n.contains("Autoscaler")));
    // With `true`, a role block without bounds gets the defaults 1..10.
    let r = record(
        r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_autoscaling": {"enabled": true, "decode": {"metrics": [{"type": "qps", "target": 5}]}}}"#,
    );
    let p = plan_in(&r, "us-east-1");
    assert_eq!(
        int(
            &p,
            Kind::HorizontalPodAutoscaler,
            "pd-decode",
            "min_replicas"
        ),
        1
    );
    assert_eq!(
        int(
            &p,
            Kind::HorizontalPodAutoscaler,
            "pd-decode",
            "max_replicas"
        ),
        10
    );
    // The unknown metric is skipped; with none left, cpu at 70.
    assert_eq!(
        setting(&p, Kind::HorizontalPodAutoscaler, "pd-decode", "metrics")
            .unwrap()
            .to_json(),
        r#"[{"type": "cpu", "target": 70}]"#
    );
}

#[test]
fn the_bootstrap_port_is_read_as_python_int_reads_it() {
    for (given, want) in [
        ("", 8998),
        (r#", "bootstrap_base_port": 9100"#, 9100),
        (r#", "bootstrap_base_port": " +9_100 ""#, 9100),
        (r#", "bootstrap_base_port": "nine""#, 8998),
        (r#", "bootstrap_base_port": 70000"#, 70000),
    ] {
        let r = record(&format!(
            r#"{{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {{"protocol": "rdma"{given}}}}}"#
        ));
        let p = plan_in(&r, "us-east-1");
        assert_eq!(
            int(&p, Kind::Deployment, "pd-prefill", "bootstrap_port"),
            want,
            "{given}"
        );
        let window = text(&p, Kind::NetworkPolicy, "allow-rdma-bootstrap", "tcp_ports");
        assert_eq!(
            window,
            format!("{want}-{}", (want + 100).min(65535)),
            "{given}"
        );
    }
}
