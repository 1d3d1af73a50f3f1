//! Shared test fixtures: temporary directories, a real dynalite server, and
//! the service over either store.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use gco_console::service::Service;
use gco_console::store::{DynamoConfig, DynamoStore, EmbeddedStore, Store};

pub const REGIONS: [&str; 2] = ["us-east-1", "eu-west-1"];

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "gco-console-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A dynalite server (npm `dynalite@4.0.0`, installed by scripts/setup.sh)
/// on a free port, stopped when dropped.
pub struct Dynalite {
    child: Child,
    pub port: u16,
    _dir: TempDir,
}

impl Dynalite {
    pub fn start() -> Dynalite {
        let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/dynalite");
        assert!(bin.exists(), "{} is missing: run scripts/setup.sh", bin.display());
        let dir = TempDir::new("dynalite");
        let port = free_port();
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--path"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dynalite starts");
        wait_for_port(port);
        Dynalite { child, port, _dir: dir }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub async fn store(&self) -> DynamoStore {
        let cfg = DynamoConfig {
            table: "gco-inference-endpoints".into(),
            region: "us-east-1".into(),
            endpoint: Some(self.endpoint()),
        };
        let store = DynamoStore::connect(&cfg).await;
        store.create_table().await.expect("table created");
        store
    }
}

impl Drop for Dynalite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn service(store: Arc<dyn Store>) -> Service {
    Service::new(store, REGIONS.iter().map(|r| r.to_string()).collect(), "vllm/vllm-openai:v0.27.1".into())
}

pub fn embedded(dir: &TempDir) -> Arc<dyn Store> {
    Arc::new(EmbeddedStore::open(dir.path()).unwrap())
}
