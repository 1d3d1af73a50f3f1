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
            "{bad}:1:42: mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0\n\
             {bad}:1:83: mooncake.proxy.scheduling: warning: mooncake.proxy.scheduling 'x' is not one GCO's monitor understands (round_robin)\n"
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
        "-:1:10: invalid JSON: Expecting value: line 1 column 10 (char 9)\n"
    );
    let (code, out) = run(&["validate", "-"], r#"{"image": "x", "port": 0}"#);
    assert_eq!(
        (code, out.as_str()),
        (
            1,
            "-:1:24: port: port must be an integer in [1, 65535], got 0\n"
        )
    );
}

#[test]
fn missing_files_and_bad_usage_fail() {
    let (code, out) = run(&["validate", "/nonexistent/spec.json"], "");
    assert_eq!(code, 1);
    assert!(out.starts_with("/nonexistent/spec.json: "), "{out}");
    assert_eq!(run(&[], "").0, 2);
    assert_eq!(run(&["frobnicate"], "").0, 2);
    assert_eq!(run(&["--jsonl", "validate", "-"], "").0, 2);
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

fn run_with_stderr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gco-spec"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn manifests_prints_one_list_as_yaml_or_json_with_the_defaults_noted() {
    let request = r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "mooncake_transfer": {"protocol": "tcp"}}"#;
    let (code, out) = run(&["manifests", "-", "--region", "us-east-1"], request);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\n# MOONCAKE_METADATA_SERVER not given: GCO's default http://mooncake-master:8080/metadata\n"), "{out}");
    assert!(
        out.contains("\napiVersion: v1\nkind: List\nitems:\n"),
        "{out}"
    );
    assert!(out.contains("  kind: Deployment\n  metadata:\n"), "{out}");

    let file = temp_file("pd.json", request);
    let (code, out, err) = run_with_stderr(&[
        "manifests",
        &file,
        "--region",
        "us-east-1",
        "-o",
        "json",
        "--metadata-server",
        "http://meta.gco.svc:8080/metadata",
    ]);
    assert_eq!(code, 0, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["kind"], "List");
    // The base pass's three, the two programs' ConfigMaps, the roles and
    // their Services, the PD proxy's ConfigMap, Secret, Deployment, Service.
    assert_eq!(list["items"].as_array().unwrap().len(), 13);
    assert_eq!(
        list["items"][4]["data"]["mooncake.json"],
        r#"{"device_name": "", "metadata_server": "http://meta.gco.svc:8080/metadata", "protocol": "tcp"}"#
    );
    assert!(!err.contains("MOONCAKE_METADATA_SERVER"), "{err}");
    assert!(
        err.contains(&format!("{file}: note: gco.io/leader-epoch is left out")),
        "{err}"
    );
}

#[test]
fn manifests_reports_what_the_region_must_supply_and_bad_usage() {
    let file = temp_file(
        "kv.json",
        r#"{"endpoint_name": "kv", "mooncake_mode": "store", "mooncake_store": {"cold_tier_enabled": true}}"#,
    );
    let (code, out) = run(
        &[
            "manifests",
            &file,
            "--region",
            "us-east-1",
            "--master-image",
            "m:1",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "{file}: spec.mooncake.store.cold_tier_enabled: the cold tier needs us-east-1's regional bucket (SSM /gco/regional-shared-bucket/name): pass it as the regional bucket. Without it GCO's monitor cannot render mooncake.json and reports the region as error 'cold_tier_s3_uri' (as read)\n"
        )
    );
    let (code, out) = run(
        &[
            "manifests",
            &file,
            "--region",
            "us-east-1",
            "--master-image",
            "m:1",
            "--regional-bucket",
            "b1",
        ],
        "",
    );
    assert_eq!(code, 0);
    assert!(
        out.contains(r#""cold_tier_s3_uri": "s3://b1/mooncake-kv/kv/""#),
        "{out}"
    );

    // Usage errors are clap's, on stderr, naming what is wrong.
    for (bad, says) in [
        (
            vec!["manifests", file.as_str()],
            "required arguments were not provided:\n  --region <REGION>\n",
        ),
        (
            vec![
                "manifests",
                file.as_str(),
                "--region",
                "us-east-1",
                "-o",
                "xml",
            ],
            "invalid value 'xml' for '--output <OUTPUT>'\n  [possible values: yaml, json]\n",
        ),
        (
            vec![
                "manifests",
                file.as_str(),
                "--region",
                "us-east-1",
                "--colour",
            ],
            "unexpected argument '--colour' found",
        ),
        (
            vec!["manifests", "--region", "us-east-1"],
            "required arguments were not provided:\n  <FILE>\n",
        ),
    ] {
        let (code, out, err) = run_with_stderr(&bad);
        assert_eq!((code, out.as_str()), (2, ""), "{bad:?}");
        assert!(err.starts_with("error: ") && err.contains(says), "{err}");
    }
}

#[test]
fn validate_checks_frameworks_against_the_teams_gco() {
    let tgi = temp_file(
        "tgi.json",
        r#"{"endpoint_name": "old", "image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#,
    );
    let sglang = temp_file(
        "sglang.json",
        r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#,
    );
    // GCO's current list by default.
    let (code, out) = run(&["validate", &tgi, &sglang], "");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!("{tgi}:1:99: framework: framework must be 'vllm' or 'sglang'\n")
    );
    // An older GCO's, by flag (either form, before or after the command or
    // the files).
    for args in [
        ["--frameworks", "vllm,tgi", "validate", &tgi, &sglang].as_slice(),
        ["validate", "--frameworks", "vllm,tgi", &tgi, &sglang].as_slice(),
        ["validate", &tgi, &sglang, "--frameworks=vllm,tgi"].as_slice(),
    ] {
        let (code, out) = run(args, "");
        assert_eq!(code, 1);
        assert_eq!(
            out,
            format!("{sglang}:1:75: framework: framework must be 'vllm' or 'tgi'\n")
        );
    }
    let (code, _) = run(&["validate", "--frameworks", "vllm,triton", &tgi], "");
    assert_eq!(code, 2);
}

/// A file with an error and a warning, as the formats' tests read it.
fn sample() -> String {
    temp_file(
        "sample.gco.json",
        "{\n  \"endpoint_name\": \"chat-pd\",\n  \"image\": \"vllm/vllm-openai:v0.11.0\",\n  \"mooncake\": {\n    \"mode\": \"disaggregated\",\n    \"topology\": {\"prefill\": 0, \"decode\": 2},\n    \"colour\": \"蓝😀\"\n  }\n}\n",
    )
}

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn validate_prints_places_in_every_format() {
    let file = sample();
    let (code, out) = run(&["validate", "--output-format", "github", &file], "");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "::error file={file},line=6,col=29,endLine=6,endColumn=30,title=GCO108 out-of-range::mooncake.topology.prefill: mooncake.topology.prefill out of range [1, 1000]: 0\n\
             ::warning file={file},line=7,col=5,endLine=7,endColumn=13,title=GCO101 unknown-member::mooncake.colour: unknown key 'colour' in mooncake, which GCO ignores; known keys: mode, topology, store, transfer, proxy, autoscaling\n"
        )
    );

    let (_, out) = run(&["validate", "--output-format=json", &file], "");
    let report = json_of(&out);
    let error = &report[0]["errors"][0];
    assert_eq!(report[0]["ok"], false);
    assert_eq!(error["path"], "mooncake.topology.prefill");
    assert_eq!(error["code"], "GCO108");
    assert_eq!(
        error["range"],
        json_of(
            r#"{"start": {"line": 6, "column": 29, "offset": 144}, "end": {"line": 6, "column": 30, "offset": 145}}"#
        )
    );
    assert_eq!(report[0]["warnings"][0]["range"]["start"]["column"], 5);

    let (_, out) = run(&["validate", "--output-format", "gitlab", &file, &file], "");
    let issues = json_of(&out);
    let issues = issues.as_array().unwrap();
    assert_eq!(issues.len(), 4);
    assert_eq!(
        issues[0]["location"]["positions"]["begin"],
        json_of(r#"{"line": 6, "column": 29}"#)
    );
    assert_eq!(issues[0]["severity"], "major");
    assert_eq!(issues[1]["severity"], "minor");
    let mut fingerprints: Vec<_> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    fingerprints.dedup();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 4, "each issue its own fingerprint");

    let good = temp_file(
        "good.gco.json",
        r#"{"endpoint_name": "pd", "mooncake_mode": "store"}"#,
    );
    let (_, out) = run(&["validate", "--output-format", "junit", &good, &file], "");
    assert!(
        out.contains(
            r#"<testsuites name="gco-spec" tests="2" failures="1" errors="0" skipped="0">"#
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            r#"<testcase name="{good}" classname="gco-spec.validate" file="{good}"/>"#
        )),
        "{out}"
    );
    assert!(out.contains(&format!("<failure message=\"1 error, 1 warning\" type=\"gco-spec\">{file}:6:29: mooncake.topology.prefill")), "{out}");
}

#[test]
fn warnings_fail_a_run_only_when_asked() {
    let warned = temp_file(
        "warned.gco.json",
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "colour": 1}"#,
    );
    let (code, out) = run(&["validate", &warned], "");
    assert_eq!(code, 0);
    assert!(
        out.contains(":1:59: mooncake.colour: warning: unknown key 'colour'"),
        "{out}"
    );
    assert_eq!(run(&["validate", "--warnings-as-errors", &warned], "").0, 1);
    let (_, out) = run(&["validate", "--output-format", "junit", &warned], "");
    assert!(
        out.contains("<system-out>") && out.contains("failures=\"0\""),
        "{out}"
    );
    let (_, out) = run(
        &[
            "validate",
            "--output-format",
            "junit",
            "--warnings-as-errors",
            &warned,
        ],
        "",
    );
    assert!(
        out.contains("<failure message=\"0 errors, 1 warning\""),
        "{out}"
    );
    assert_eq!(
        run(&["validate", "--output-format", "xml", &warned], "").0,
        2
    );
}

/// Checks a SARIF log against the published SARIF 2.1.0 schema kept in the
/// repository, with Python's `jsonschema` (scripts/setup-tests.sh installs
/// it): the schema's errors, none when it is valid.
fn sarif_schema_errors(log: &str) -> String {
    const CHECK: &str = "import json, sys\n\
        from jsonschema import Draft4Validator, FormatChecker\n\
        schema = json.load(open(sys.argv[1]))\n\
        Draft4Validator.check_schema(schema)\n\
        log = json.load(sys.stdin)\n\
        for e in Draft4Validator(schema, format_checker=FormatChecker()).iter_errors(log):\n\
        \x20   print(list(e.absolute_path), e.message)\n";
    let schema = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/schemas/sarif-schema-2.1.0.json"
    );
    let mut child = Command::new("python3")
        .args(["-c", CHECK, schema])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(log.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the schema check itself failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sarif_is_valid_against_the_published_schema_with_a_rule_per_kind() {
    let file = sample();
    let unreadable = "/nonexistent/x.gco.json";
    let bad_json = temp_file("bad json.gco.json", "{\"mode\": }");
    let (code, out) = run(
        &[
            "validate",
            "--output-format",
            "sarif",
            &file,
            unreadable,
            &bad_json,
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(sarif_schema_errors(&out), "");
    let log = json_of(&out);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), gco_spec::message_kind::KINDS.len());
    for rule in rules {
        assert!(rule["helpUri"].as_str().unwrap().starts_with("https://"));
        assert!(
            rule["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .contains("GCO's source: ")
        );
    }
    let results = run["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["GCO108", "GCO101", "GCO002", "GCO001"]);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
    }
    let region = &results[0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 6);
    assert_eq!(region["byteOffset"], 144);
    assert_eq!(region["byteLength"], 1);
    assert!(
        results[3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("bad%20json.gco.json")
    );
    // The check can fail: a log the schema refuses.
    let broken = out.replacen("\"level\": \"error\"", "\"level\": \"fatal\"", 1);
    assert!(sarif_schema_errors(&broken).contains("'fatal' is not one of"));
}

/// The repository's pre-commit hook, run as pre-commit runs it: its entry
/// with the staged files its pattern picks.
#[test]
fn the_pre_commit_hook_checks_gco_json_files() {
    let hooks = concat!(env!("CARGO_MANIFEST_DIR"), "/../.pre-commit-hooks.yaml");
    let hooks: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(hooks).unwrap()).unwrap();
    let hook = &hooks[0];
    assert_eq!(hook["id"].as_str(), Some("gco-spec-validate"));
    let entry: Vec<&str> = hook["entry"].as_str().unwrap().split(' ').collect();
    assert_eq!(entry[0], "gco-spec");
    assert_eq!(hook["files"].as_str(), Some(r"\.gco\.json$"));
    let file = sample();
    assert!(file.ends_with(".gco.json"));
    let mut args = entry[1..].to_vec();
    args.push(&file);
    let (code, out) = run(&args, "");
    assert_eq!(code, 1);
    assert!(out.contains(":6:29: mooncake.topology.prefill"), "{out}");
}
