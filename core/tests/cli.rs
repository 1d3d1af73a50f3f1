//! The `gco-spec` command line, run as a user runs it.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gco-spec"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gco-spec-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn validate_reports_each_problem_with_file_and_path() {
    let bad = temp_file(
        "bad.json",
        r#"{"mode": "both", "topology": {"prefill": 0, "decode": 1}, "proxy": {"scheduling": "x"}}"#,
    );
    let good = temp_file(
        "good.json",
        r#"{"endpoint_name": "pd", "mooncake_mode": "store"}"#,
    );
    let (code, out) = run(&["validate", &good, &bad], "");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "{bad}: mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0\n\
             {bad}: mooncake.proxy.scheduling: warning: mooncake.proxy.scheduling 'x' is not one GCO's monitor understands (round_robin)\n"
        )
    );
    let (code, out) = run(&["validate", &good], "");
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn validate_reads_stdin_and_reports_bad_json() {
    let (code, out) = run(&["validate", "-"], "{\"mode\": ");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "-: invalid JSON: Expecting value: line 1 column 10 (char 9)\n"
    );
    let (code, out) = run(&["validate", "-"], r#"{"image": "x", "port": 0}"#);
    assert_eq!(
        (code, out.as_str()),
        (1, "-: port: port must be an integer in [1, 65535], got 0\n")
    );
}

#[test]
fn missing_files_and_bad_usage_fail() {
    let (code, out) = run(&["validate", "/nonexistent/spec.json"], "");
    assert_eq!(code, 1);
    assert!(out.starts_with("/nonexistent/spec.json: "), "{out}");
    assert_eq!(run(&[], "").0, 2);
    assert_eq!(run(&["frobnicate"], "").0, 2);
    assert_eq!(run(&["--help"], "").0, 0);
}

#[test]
fn jsonl_answers_one_line_per_request_and_skips_blank_lines() {
    let (code, out) = run(
        &["--jsonl"],
        "{\"op\": \"validate\", \"block\": {\"mode\": \"store\"}}\n \u{3000}\n{\"op\": \"author_byte_size\", \"value\": true}\n",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"ok\": true}\n{\"error\": \"byte-size value must be an integer, got bool: True\", \"kind\": \"ValueError\"}\n"
    );
}

#[test]
fn plan_prints_the_objects_of_one_region_or_of_each() {
    let request = temp_file(
        "plan.json",
        r#"{"endpoint_name": "chat", "mooncake_mode": "store", "target_regions": ["us-east-1", "eu-west-1"]}"#,
    );
    let (code, out) = run(&["plan", &request, "--region", "eu-west-1"], "");
    assert_eq!(code, 0, "{out}");
    let plan = gco_spec::json::parse(&out).unwrap();
    let plan = plan.as_object().unwrap();
    assert_eq!(
        plan.get("region").and_then(|r| r.as_str()),
        Some("eu-west-1")
    );
    let kinds: Vec<String> = match plan.get("objects") {
        Some(gco_spec::Value::List(objects)) => objects
            .iter()
            .map(|o| {
                let o = o.as_object().unwrap();
                format!(
                    "{} {}",
                    o.get("kind").unwrap().as_str().unwrap(),
                    o.get("name").unwrap().as_str().unwrap()
                )
            })
            .collect(),
        _ => panic!("no objects"),
    };
    assert_eq!(
        kinds,
        [
            "ConfigMap chat-mooncake",
            "StatefulSet mooncake-master",
            "Service mooncake-master",
            "Deployment chat",
            "Service chat"
        ]
    );
    let (code, out) = run(&["plan", &request], "");
    assert_eq!(code, 0);
    assert!(
        matches!(gco_spec::json::parse(&out).unwrap(), gco_spec::Value::List(plans) if plans.len() == 2)
    );

    let (code, out) = run(&["plan", &request, "--region", "ap-south-1"], "");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "{request}: region: endpoint 'chat' does not target region 'ap-south-1' (its regions: us-east-1, eu-west-1)\n"
        )
    );
    let invalid = temp_file(
        "plan-bad.json",
        r#"{"endpoint_name": "chat", "mooncake_mode": "both", "prefill_replicas": 0}"#,
    );
    let (code, out) = run(&["plan", &invalid, "--region", "us-east-1"], "");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "{invalid}: mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0\n"
        )
    );
}

#[test]
fn cli_prints_the_gco_commands_one_per_line() {
    let request = temp_file(
        "cli.json",
        r#"{"endpoint_name": "chat", "image": "vllm:1", "env": {"TOKEN": "a b$c"}, "mooncake_mode": "both",
            "mooncake_store": {"offload": "cpu"}}"#,
    );
    let (code, out) = run(&["cli", &request], "");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "gco inference deploy chat -i vllm:1 -e 'TOKEN=a b$c' --mooncake-mode both --prefill-replicas 1 --decode-replicas 1\n\
         gco inference configure-store chat --offload cpu --enable-store\n"
    );
    let (code, _) = run(&["cli"], "");
    assert_eq!(code, 2);
}
