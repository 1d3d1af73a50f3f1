//! The real `gco-console` binary's life cycle: SIGTERM shuts it down cleanly,
//! it refuses an unsafe address, and the image's setting refuses the
//! embedded store. (Crashes are in `faults.rs`.)

use std::process::Command;

use crate::common::{Server, TempDir};

#[test]
fn sigterm_shuts_down_cleanly() {
    let data = TempDir::new("term");
    let mut server = Server::embedded(data.path());
    assert_eq!(server.send("GET", "/healthz", "").status, 200);
    let exit = server.terminate();
    assert!(exit.success(), "exit status {exit}");
}

#[test]
fn refuses_an_open_address_without_a_token() {
    let out = Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(["--addr", "0.0.0.0:0", "--dist", "/nonexistent"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("refusing to listen on 0.0.0.0:0 with --auth none")
    );
}

#[test]
fn the_image_setting_refuses_the_embedded_store_and_says_why() {
    // The container image sets GCO_REQUIRE_DYNAMODB=true; with no table
    // configured the console must stop at once, before the address check.
    let out = Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(["--addr", "0.0.0.0:0", "--dist", "/nonexistent"])
        .env("GCO_REQUIRE_DYNAMODB", "true")
        .env_remove("DYNAMODB_REGION")
        .env_remove("GCO_DYNAMODB_ENDPOINT")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no DynamoDB table is configured")
            && stderr.contains("lost when the container is replaced"),
        "{stderr}"
    );
    // GCO_REQUIRE_DYNAMODB=false is off, as any boolean flag's variable.
    let out = Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(["--addr", "0.0.0.0:0", "--dist", "/nonexistent"])
        .env("GCO_REQUIRE_DYNAMODB", "false")
        .env_remove("DYNAMODB_REGION")
        .env_remove("GCO_DYNAMODB_ENDPOINT")
        .output()
        .unwrap();
    assert!(!out.status.success(), "0.0.0.0 without auth is refused");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("DynamoDB"), "{stderr}");
}

#[test]
fn emf_interval_writes_the_view_age_while_someone_looks() {
    let dynalite = crate::common::Dynalite::start();
    let endpoint = dynalite.endpoint();
    let server = Server::dynamodb_with(
        &endpoint,
        &[
            "--refresh-interval".as_ref(),
            "1s".as_ref(),
            "--emf-interval".as_ref(),
            "200ms".as_ref(),
            "--dynamodb-table".as_ref(),
            "emf-table".as_ref(),
        ],
    );
    let emf_lines = |log: &str| -> Vec<serde_json::Value> {
        log.lines()
            .filter(|l| l.starts_with("{\"_aws\""))
            .map(|l| serde_json::from_str(l).expect("an EMF line is JSON"))
            .collect()
    };
    // Nobody has looked: the view is idle and nothing is written.
    std::thread::sleep(std::time::Duration::from_millis(700));
    assert_eq!(emf_lines(&server.log()), Vec::<serde_json::Value>::new());
    assert_eq!(server.send("GET", "/api/endpoints", "").status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let lines = loop {
        let lines = emf_lines(&server.log());
        if lines.len() >= 2 || std::time::Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(lines.len() >= 2, "EMF lines: {lines:?}\n{}", server.log());
    for line in &lines {
        let metrics = &line["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(metrics["Namespace"], "GcoConsole");
        assert_eq!(metrics["Dimensions"], serde_json::json!([["Table"]]));
        assert_eq!(metrics["Metrics"][0]["Name"], "gco_view_age_seconds");
        assert_eq!(line["Table"], "emf-table");
        let age = line["gco_view_age_seconds"].as_f64().unwrap();
        assert!((0.0..5.0).contains(&age), "{age}");
        assert!(line["_aws"]["Timestamp"].as_u64().unwrap() > 1_700_000_000_000);
    }
}

/// Issue 43: a DynamoDB error at start-up is one line with DynamoDB's code
/// and message and what to do, never the SDK's debug dump of the error.
#[test]
fn a_dynamodb_error_at_start_up_says_its_code_and_what_to_do() {
    let dynalite = crate::common::Dynalite::start();
    let endpoint = dynalite.endpoint();
    let closed = format!("http://127.0.0.1:{}", crate::common::free_port());
    for (args, said) in [
        (
            // The issue's `--dynamodb-table t`: a name DynamoDB refuses.
            vec!["--dynamodb-endpoint", &endpoint, "--dynamodb-table", "t"],
            vec![
                "could not tell whether the endpoints table exists: store refused the call: \
                 ValidationException: TableName must be at least 3 characters long and at most 255 characters long. \
                 What to do: check the table names (--dynamodb-table, --history-table)",
            ],
        ),
        (
            // No DynamoDB there: the causes, each once.
            vec![
                "--dynamodb-endpoint",
                &closed,
                "--dynamodb-table",
                "gco-endpoints",
            ],
            vec![
                "Connection refused",
                "What to do: check --dynamodb-endpoint (or --dynamodb-region) and the network path to DynamoDB",
            ],
        ),
    ] {
        let flags: Vec<&std::ffi::OsStr> = args
            .iter()
            .copied()
            .chain(["--history-table", "off", "--dist", "/nonexistent"])
            .map(std::ffi::OsStr::new)
            .collect();
        let mut server = Server::with_args(&flags);
        let log = server.log();
        server.kill();
        for words in said {
            assert!(log.contains(words), "{words:?} not in:\n{log}");
        }
        for dump in [
            "ServiceError",
            "Unhandled",
            "ErrorMetadata",
            "DispatchFailure",
            "ConnectorError",
        ] {
            assert!(!log.contains(dump), "{dump} in:\n{log}");
        }
        let longest = log.lines().map(str::len).max().unwrap_or(0);
        assert!(longest < 500, "a line of {longest} characters:\n{log}");
    }
}
