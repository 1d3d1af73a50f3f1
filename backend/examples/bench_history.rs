//! What recording the history costs a write: the same changes with history
//! and without, on the embedded store and on DynamoDB (moto's server, one
//! request at a time, as the tests run it), one run each.
//!
//! Each write is a change as the API makes it (`Service::change`: a
//! consistent read, the core's operation, the conditional write), sent one
//! after another by one client: a scale of one plain endpoint to a new
//! replica count each time. With history, the write is one redb transaction
//! with the entry (embedded) or one TransactWriteItems with it (DynamoDB);
//! without, one redb transaction or one UpdateItem.
//!
//!     cargo run --release -p gco-console --example bench_history [-- --writes N] [--stores embedded,moto]
//!
//! Prints one JSON line per run (for scripts/benchmarks.sh), then a table
//! on stderr. moto is a Python server: its figures say what the extra
//! table and transaction cost relative to a plain write there, not what
//! DynamoDB itself takes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gco_console::auth::identity::Identity;
use gco_console::service::{Actor, Service};
use gco_console::store::{DynamoConfig, DynamoStore, EmbeddedStore, Store};
use gco_spec::Change;
use gco_spec::json::{Value, parse};

struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start() -> Moto {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/moto_server.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 with moto[server] (scripts/setup.sh installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Moto { child, port }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `writes` changes, one after another; the time per write.
async fn run(store: Arc<dyn Store>, writes: usize) -> Duration {
    let service = Service::new(store, vec!["us-east-1".into()], "img:1".into());
    let actor = Actor::new(Identity::local(), Some("bench".into()));
    let request = parse(r#"{"endpoint_name": "bench", "image": "img:1"}"#).unwrap();
    service.deploy(request, &actor).await.expect("deployed");
    // A few first: connections, caches.
    for i in 0..5 {
        let change = Change::Scale {
            replicas: Value::int(100 + i),
        };
        service.change("bench", change, None, &actor).await.unwrap();
    }
    let started = Instant::now();
    for i in 0..writes {
        let change = Change::Scale {
            replicas: Value::int(i as i64 % 50 + 1 + i64::from(i % 50 == 0) * 1000),
        };
        service.change("bench", change, None, &actor).await.unwrap();
    }
    started.elapsed() / writes as u32
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let writes: usize = flag("--writes").map_or(500, |n| n.parse().expect("--writes N"));
    let stores = flag("--stores").unwrap_or_else(|| "embedded,moto".into());
    let mut rows = Vec::new();
    for store in stores.split(',') {
        for history in [false, true] {
            let per_write = match store {
                "embedded" => {
                    let dir = TempDir(std::env::temp_dir().join(format!(
                        "gco-bench-history-{}-{history}",
                        std::process::id()
                    )));
                    let _ = std::fs::remove_dir_all(&dir.0);
                    let opened = EmbeddedStore::open_with(&dir.0, history).unwrap();
                    run(Arc::new(opened), writes).await
                }
                "moto" => {
                    let moto = Moto::start();
                    let table = "gco-inference-endpoints".to_owned();
                    let config = DynamoConfig {
                        history_table: history.then(|| DynamoConfig::default_history_table(&table)),
                        table,
                        region: "us-east-1".into(),
                        endpoint: Some(format!("http://127.0.0.1:{}", moto.port)),
                    };
                    let connected = DynamoStore::connect(&config).await;
                    connected.create_table().await.unwrap();
                    run(Arc::new(connected), writes).await
                }
                other => panic!("unknown store {other}: embedded or moto"),
            };
            let us = per_write.as_secs_f64() * 1e6;
            println!(
                r#"{{"what": "history", "store": "{store}", "history": {history}, "writes": {writes}, "us_per_write": {us:.1}, "writes_per_s": {:.1}}}"#,
                1e6 / us
            );
            rows.push((store.to_owned(), history, us));
        }
    }
    eprintln!(
        "{:<10} {:<8} {:>12} {:>10}",
        "store", "history", "µs/write", "writes/s"
    );
    for (store, history, us) in &rows {
        eprintln!(
            "{store:<10} {:<8} {us:>12.1} {:>10.1}",
            if *history { "on" } else { "off" },
            1e6 / us
        );
    }
}
