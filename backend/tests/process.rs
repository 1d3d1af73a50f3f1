//! The real `gco-console` binary's life cycle: SIGTERM shuts it down cleanly,
//! and it refuses an unsafe address. (Crashes are in `faults.rs`.)

mod common;

use std::process::Command;

use common::{Server, TempDir};

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
