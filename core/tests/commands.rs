//! `gco inference` command export: a test-only parser of the emitted flags
//! rebuilds the request, which must deploy to the same record; quoting is
//! checked against a real POSIX shell.

use std::process::Command;

use gco_spec::commands::{change_commands, deploy_commands, record_commands, shell};
use gco_spec::json::{Object, parse};
use gco_spec::plan::preview_record;
use gco_spec::{
    Change, DeployContext, Deployment, DesiredState, Record, Value, apply, plan_deploy,
};
use proptest::prelude::*;

const NOW: &str = "2026-12-02T10:00:00.000000+00:00";

fn deployment(request: &Value) -> Option<Deployment> {
    plan_deploy(request, &DeployContext::default()).deployment
}

/// POSIX word splitting for what `shell::quote` writes: plain words, single
/// quotes, and backslash escapes outside them.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

fn int_or_float(s: &str) -> Value {
    parse(s).unwrap()
}

/// Rebuilds a deploy request from a `gco inference deploy` line, as GCO's
/// CLI maps its flags to `deploy()` parameters (GCO_FACTS section 5).
fn request_from_deploy(words: &[String]) -> Value {
    assert_eq!(&words[..3], ["gco", "inference", "deploy"]);
    let mut req = Object::new();
    req.insert("endpoint_name", words[3].as_str());
    let mut regions = Vec::new();
    let mut env = Object::new();
    let mut transfer = Object::new();
    let mut proxy = Object::new();
    let mut autoscaling = Object::new();
    let mut i = 4;
    while i < words.len() {
        let flag = words[i].as_str();
        if flag == "--mooncake-cold-tier" {
            let mut store = Object::new();
            store.insert("cold_tier_enabled", true);
            req.insert("mooncake_store", store);
            i += 1;
            continue;
        }
        let value = words[i + 1].as_str();
        i += 2;
        match flag {
            "-i" => req.insert("image", value),
            "-r" => regions.push(Value::str(value)),
            "--replicas" | "--gpu-count" | "--port" | "--prefill-replicas"
            | "--decode-replicas" => {
                let key = flag.trim_start_matches("--").replace('-', "_");
                req.insert(&key, int_or_float(value));
            }
            "--gpu-type" => req.insert("gpu_type", value),
            "-e" => {
                let (k, v) = value.split_once('=').unwrap();
                env.insert(k, v);
            }
            "--mooncake-mode" => req.insert("mooncake_mode", value),
            "--mooncake-protocol" => transfer.insert("protocol", value),
            "--mooncake-device-name" => transfer.insert("device_name", value),
            "--mooncake-proxy-image" => proxy.insert("image", value),
            "--mooncake-admin-key-secret" => proxy.insert("admin_api_key_secret", value),
            "--mooncake-autoscale" => {
                let parts: Vec<&str> = value.split(':').collect();
                autoscaling.set_default("enabled", true);
                if autoscaling.get(parts[0]).is_none() {
                    let mut role = Object::new();
                    role.insert("min_replicas", int_or_float(parts[1]));
                    role.insert("max_replicas", int_or_float(parts[2]));
                    autoscaling.insert(parts[0], role);
                }
                if parts.len() == 5 {
                    let mut metric = Object::new();
                    metric.insert("type", parts[3]);
                    metric.insert("target", int_or_float(parts[4]));
                    let role = autoscaling
                        .get_mut(parts[0])
                        .unwrap()
                        .as_object_mut()
                        .unwrap();
                    match role.get_mut("metrics") {
                        Some(Value::List(list)) => list.push(Value::Object(metric)),
                        _ => role.insert("metrics", vec![Value::Object(metric)]),
                    }
                }
            }
            other => panic!("unknown flag {other}"),
        }
    }
    for (key, map) in [
        ("target_regions", Value::List(regions)),
        ("env", Value::Object(env)),
    ] {
        if map.is_truthy() {
            req.insert(key, map);
        }
    }
    for (key, map) in [
        ("mooncake_transfer", transfer),
        ("mooncake_proxy", proxy),
        ("mooncake_autoscaling", autoscaling),
    ] {
        if !map.is_empty() {
            req.insert(key, map);
        }
    }
    Value::Object(req)
}

/// `configure-store` merges its flags into the current store block.
fn store_from_flags(current: Option<&Value>, words: &[String]) -> Value {
    assert_eq!(&words[..3], ["gco", "inference", "configure-store"]);
    let mut store = current
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut i = 4;
    while i < words.len() {
        match words[i].as_str() {
            "--enable-store" | "--disable-store" => {
                store.insert("enabled", words[i] == "--enable-store")
            }
            "--cold-tier" | "--no-cold-tier" => {
                store.insert("cold_tier_enabled", words[i] == "--cold-tier")
            }
            flag => {
                let key = flag.trim_start_matches("--").replace('-', "_");
                i += 1;
                store.insert(&key, words[i].as_str());
            }
        }
        i += 1;
    }
    Value::Object(store)
}

/// Runs the commands against the core's own deploy and operations.
fn replay(lines: &[String]) -> Record {
    let deploy = split_words(&lines[0]);
    let d = deployment(&request_from_deploy(&deploy)).expect("the deploy line deploys");
    let mut record = preview_record(d);
    for line in &lines[1..] {
        let words = split_words(line);
        let current = record
            .spec
            .get("mooncake")
            .and_then(|m| m.as_object()?.get("store"));
        let store = store_from_flags(current, &words);
        record = apply(&record, &Change::ConfigureStore { store }, NOW, &mut || {
            "0".repeat(64)
        })
        .expect("configure-store applies");
    }
    record
}

/// Python's `==` on the spec: mappings compare without order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.str_entries()
                    .all(|(k, v)| y.get(&k.to_string_lossy()).is_some_and(|w| same(v, w)))
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

/// False when the request is not a valid deploy (nothing to compare).
fn assert_round_trip(request: &Value) -> bool {
    let Some(d) = deployment(request) else {
        return false;
    };
    let commands = deploy_commands(&d);
    assert!(
        commands.notes.is_empty(),
        "{:?} for {}",
        commands.notes,
        request.to_json()
    );
    let replayed = replay(&commands.lines);
    assert!(
        same(
            &Value::Object(replayed.spec.clone()),
            &Value::Object(d.spec.clone())
        ),
        "{}\n{}\n{:#?}",
        request.to_json(),
        commands.lines.join("\n"),
        replayed.spec
    );
    assert_eq!(replayed.target_regions, d.target_regions);
    true
}

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{0,20}",
        Just(String::new()),
        Just("it's \"quoted\"".to_owned()),
        Just("$HOME `id` $(id) \\ ; & | > < * ? [ ] ~ # !".to_owned()),
        Just("line\nbreak\ttab".to_owned()),
        Just("ünïcødé ✓".to_owned()),
        Just("'".to_owned()),
        Just("--not-a-flag".to_owned()),
        "\\PC{0,12}",
    ]
}

fn request_strategy() -> impl Strategy<Value = Value> {
    let mode = prop_oneof![
        Just(None),
        Just(Some("disaggregated")),
        Just(Some("store")),
        Just(Some("both"))
    ];
    let regions = prop::sample::subsequence(
        vec!["us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1"],
        0..=3,
    );
    let image = prop_oneof![
        hostile().prop_filter("an image is non-empty", |s| !s.trim().is_empty()),
        Just("111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:v1".to_owned()),
    ];
    let store = prop_oneof![
        Just(None),
        Just(Some(r#"{"cold_tier_enabled": true, "enabled": true}"#)),
        Just(Some(
            r#"{"enabled": true, "cold_tier_enabled": true, "offload": "disk"}"#
        )),
        Just(Some(
            r#"{"global_segment_size": "8589934592", "local_buffer_size": 1024, "offload": "cpu"}"#
        )),
        Just(Some(r#"{"enabled": false}"#)),
    ];
    let autoscaling = prop_oneof![
        Just(None),
        Just(Some(
            r#"{"enabled": true, "decode": {"min_replicas": 1, "max_replicas": 4}}"#
        )),
        Just(Some(
            r#"{"enabled": true, "prefill": {"min_replicas": 2, "max_replicas": 3, "metrics": [{"type": "gpu", "target": 0.5}, {"type": "cpu", "target": 80}]}}"#
        )),
    ];
    (
        (
            mode,
            regions,
            image,
            0..4i64,
            1..3000i64,
            1..1000i64,
            1..1000i64,
        ),
        (
            hostile(),
            hostile(),
            hostile(),
            prop::option::of(prop_oneof![Just("rdma"), Just("tcp")]),
        ),
        (
            store,
            autoscaling,
            prop::option::of(hostile()),
            prop::option::of("[a-z]{1,8}"),
        ),
    )
        .prop_map(
            |(
                (mode, regions, image, gpus, port, prefill, decode),
                (gpu_type, env_value, device, protocol),
                (store, autoscaling, proxy_image, secret),
            )| {
                let mut r = Object::new();
                r.insert("endpoint_name", "ep");
                r.insert("image", image);
                r.insert(
                    "target_regions",
                    regions.into_iter().map(Value::str).collect::<Vec<_>>(),
                );
                r.insert("gpu_count", gpus);
                r.insert("port", port);
                if !gpu_type.is_empty() {
                    r.insert("gpu_type", gpu_type);
                }
                let mut env = Object::new();
                env.insert("A_B", env_value);
                env.insert("X", "1=2");
                r.insert("env", env);
                let Some(mode) = mode else {
                    return Value::Object(r);
                };
                r.insert("mooncake_mode", mode);
                r.insert("prefill_replicas", prefill);
                r.insert("decode_replicas", decode);
                let mut transfer = Object::new();
                if let Some(p) = protocol {
                    transfer.insert("protocol", p);
                }
                transfer.insert("device_name", device);
                r.insert("mooncake_transfer", transfer);
                let mut proxy = Object::new();
                if let Some(image) = proxy_image {
                    proxy.insert("image", image);
                }
                if let Some(secret) = secret {
                    proxy.insert("admin_api_key_secret", secret);
                }
                if !proxy.is_empty() {
                    r.insert("mooncake_proxy", proxy);
                }
                if let Some(store) = store {
                    r.insert("mooncake_store", parse(store).unwrap());
                }
                if let Some(a) = autoscaling.filter(|_| mode != "store") {
                    r.insert("mooncake_autoscaling", parse(a).unwrap());
                }
                Value::Object(r)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn emitted_flags_rebuild_the_same_deploy(request in request_strategy()) {
        // Too many invalid requests would fail the run: the generator
        // must mostly produce deployable ones.
        prop_assume!(assert_round_trip(&request));
    }

    #[test]
    fn quoting_matches_the_test_parser(words in prop::collection::vec(hostile(), 1..6)) {
        let filtered: Vec<String> = words.into_iter().filter(|w| !w.contains('\0')).collect();
        prop_assume!(!filtered.is_empty());
        prop_assert_eq!(split_words(&shell::join(&filtered)), filtered);
    }
}

/// A real shell splits each emitted line into exactly the intended words.
#[test]
fn quoting_survives_a_real_shell() {
    let nasty = [
        "it's \"quoted\"",
        "$HOME `id` $(id) \\ ; & | > < * ? [ ] ~ # !",
        "",
        "line\nbreak",
        "ünïcødé",
        "'",
        "''",
        "~",
        "#comment",
        "a=b c",
    ];
    let line = shell::join(&nasty);
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .expect("sh runs");
    assert!(out.status.success());
    let words: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect();
    assert_eq!(words, nasty);
}

#[test]
fn a_both_endpoint_with_store_settings_deploys_then_configures_the_store() {
    let request = parse(
        r#"{"endpoint_name": "chat", "target_regions": ["us-east-1"], "mooncake_mode": "both",
            "prefill_replicas": 2, "decode_replicas": 3,
            "mooncake_store": {"global_segment_size": "8589934592", "offload": "cpu"}}"#,
    )
    .unwrap();
    let commands = deploy_commands(&deployment(&request).unwrap());
    assert_eq!(
        commands.lines,
        [
            "gco inference deploy chat -i vllm/vllm-openai:v0.27.1 -r us-east-1 --mooncake-mode both --prefill-replicas 2 --decode-replicas 3",
            "gco inference configure-store chat --global-segment-size 8589934592 --offload cpu --enable-store",
        ]
    );
    assert!(commands.notes.is_empty());
    assert!(assert_round_trip(&request));
}

#[test]
fn fields_without_a_flag_are_named_in_notes() {
    let request = parse(
        r#"{"endpoint_name": "web", "image": "nginx:1", "namespace": "team-a", "labels": {"team": "a"},
            "model_path": "s3://m", "health_check_path": "/ready", "capacity_type": "spot"}"#,
    )
    .unwrap();
    let commands = deploy_commands(&deployment(&request).unwrap());
    assert_eq!(commands.lines, ["gco inference deploy web -i nginx:1"]);
    let paths: Vec<&str> = commands.notes.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.health_check_path",
            "spec.model_path",
            "spec.capacity_type",
            "namespace",
            "labels"
        ]
    );
    assert_eq!(
        commands.notes[1].message,
        "spec.model_path has no `gco inference` flag; the commands leave it out"
    );
}

#[test]
fn a_stopped_record_adds_stop() {
    let request =
        parse(r#"{"endpoint_name": "web", "image": "nginx:1", "target_regions": ["us-east-1"]}"#)
            .unwrap();
    let mut record = preview_record(deployment(&request).unwrap());
    record.desired_state = DesiredState::Stopped;
    assert_eq!(
        record_commands(&record).lines,
        [
            "gco inference deploy web -i nginx:1 -r us-east-1",
            "gco inference stop web"
        ]
    );
}

#[test]
fn each_change_has_its_command() {
    let request =
        parse(r#"{"endpoint_name": "pd", "mooncake_mode": "both", "mooncake_store": {"offload": "cpu"}, "target_regions": ["us-east-1"]}"#)
            .unwrap();
    let record = preview_record(deployment(&request).unwrap());
    let v = |s: &str| parse(s).unwrap();
    let cases = [
        (
            Change::SetTopology {
                prefill: v("3"),
                decode: v("5"),
            },
            "gco inference set-topology pd --prefill 3 --decode 5",
        ),
        (
            Change::UpdateImage {
                image: v(r#""my image:1""#),
                with_proxy: Value::Null,
            },
            "gco inference update-image pd -i 'my image:1'",
        ),
        (
            Change::Scale { replicas: v("4") },
            "gco inference scale pd --replicas 4",
        ),
        (Change::Stop, "gco inference stop pd"),
        (Change::Start, "gco inference start pd"),
        (Change::DELETE, "gco inference delete pd"),
        (
            Change::CanaryDeploy {
                image: v(r#""img:2""#),
                weight: Some(v("25")),
                replicas: Some(v("2")),
            },
            "gco inference canary pd -i img:2 -w 25 -r 2",
        ),
        (
            Change::CanaryDeploy {
                image: v(r#""img:2""#),
                weight: None,
                replicas: None,
            },
            "gco inference canary pd -i img:2",
        ),
        (Change::PromoteCanary, "gco inference promote pd"),
        (Change::RollbackCanary, "gco inference rollback pd"),
        (
            Change::ConfigureStore {
                store: v(r#"{"enabled": true, "offload": "disk", "cold_tier_enabled": false}"#),
            },
            "gco inference configure-store pd --enable-store --offload disk --no-cold-tier",
        ),
    ];
    for (change, line) in cases {
        let commands = change_commands(&record, &change);
        assert_eq!(commands.lines, [line]);
        if change == Change::Start {
            // GCO's CLI (inference_cmd.py@f6629b2046) when its store
            // answers None: the endpoint gone, or no longer stopped.
            assert_eq!(
                commands.notes[0].message,
                "if the endpoint is gone or no longer stopped when this runs, GCO's CLI answers: Endpoint 'pd' is not a stopped endpoint. If it was deleted or purged, redeploy it with 'gco inference deploy'."
            );
            continue;
        }
        assert!(commands.notes.is_empty(), "{change:?}");
    }
    let dropped = change_commands(
        &record,
        &Change::ConfigureStore {
            store: v(r#"{"enabled": true}"#),
        },
    );
    assert_eq!(dropped.notes[0].path, "mooncake.store.offload");
    let region = change_commands(
        &record,
        &Change::RemoveRegion {
            region: v(r#""us-east-1""#),
        },
    );
    assert!(region.lines.is_empty());
    assert_eq!(region.notes[0].path, "target_regions");
    // Only GCO releases newer than the stored CLI have delete's conditions.
    let conditioned = change_commands(
        &record,
        &Change::Delete {
            expected_owner_label: Some(("team".into(), "ml ops".into())),
            expected_lifecycle_id: Some("ab".repeat(32)),
        },
    );
    assert_eq!(
        conditioned.lines,
        [format!(
            "gco inference delete pd --expected-owner-label 'team=ml ops' --expected-lifecycle-id {}",
            "ab".repeat(32)
        )]
    );
    assert_eq!(conditioned.notes.len(), 1);
    assert_eq!(conditioned.notes[0].path, "owner_label");
    assert_eq!(
        conditioned.notes[0].message,
        "--expected-owner-label and --expected-lifecycle-id are hidden options of GCO's CLI: its --help does not list them"
    );
}

#[test]
fn a_framework_is_given_with_its_flag() {
    let deployed = vec!["us-east-1".to_owned()];
    let ctx = gco_spec::DeployContext {
        deployed_regions: Some(&deployed),
        ..gco_spec::DeployContext::default()
    };
    let request = gco_spec::json::parse(
        r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#,
    )
    .unwrap();
    let deployment = gco_spec::plan_deploy(&request, &ctx).deployment.unwrap();
    let commands = gco_spec::deploy_commands(&deployment);
    assert_eq!(
        commands.lines,
        [
            "gco inference deploy chat -i lmsysorg/sglang:v0.5.4 -r us-east-1 --framework sglang -e MODEL=Qwen/Qwen3-8B"
        ]
    );
    assert!(commands.notes.is_empty(), "{:?}", commands.notes);
}
