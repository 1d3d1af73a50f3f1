//! The real `gco-console` binary: acknowledged writes survive `kill -9`, and
//! SIGTERM shuts it down cleanly.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{TempDir, free_port, wait_for_port};

fn start(data: &Path, port: u16) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(["--addr", &format!("127.0.0.1:{port}"), "--regions", "us-east-1", "--dist", "/nonexistent"])
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gco-console starts");
    wait_for_port(port);
    child
}

/// One HTTP/1.1 exchange; returns the status code and the body.
fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let data = TempDir::new("kill9");
    let port = free_port();
    let mut server = start(data.path(), port);
    let mut acknowledged = Vec::new();
    for i in 0..20 {
        let name = format!("ep-{i}");
        let (status, body) = http(port, "POST", "/api/endpoints", &format!(r#"{{"endpoint_name": "{name}", "image": "img:{i}"}}"#));
        assert_eq!(status, 201, "{body}");
        acknowledged.push(name);
    }
    let (status, _) = http(port, "PUT", "/api/endpoints/ep-3/image", r#"{"image": "img:new"}"#);
    assert_eq!(status, 200);
    server.kill().unwrap(); // SIGKILL: no chance to flush anything
    server.wait().unwrap();

    let port = free_port();
    let mut server = start(data.path(), port);
    for name in &acknowledged {
        let (status, body) = http(port, "GET", &format!("/api/endpoints/{name}"), "");
        assert_eq!(status, 200, "{name} lost: {body}");
    }
    let (_, body) = http(port, "GET", "/api/endpoints/ep-3", "");
    assert!(body.contains(r#""image": "img:new""#), "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn sigterm_shuts_down_cleanly() {
    let data = TempDir::new("term");
    let port = free_port();
    let mut server = start(data.path(), port);
    assert_eq!(http(port, "GET", "/healthz", "").0, 200);
    let status = Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exit = server.wait().unwrap();
    assert!(exit.success(), "exit status {exit}");
}

#[test]
fn refuses_an_open_address_without_a_token() {
    let out = Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(["--addr", "0.0.0.0:0", "--dist", "/nonexistent"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to listen on 0.0.0.0:0 without --auth-token-file"));
}
