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
