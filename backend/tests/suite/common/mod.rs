//! Shared test fixtures: temporary directories, a real dynalite server, the
//! real `gco-console` binary with a raw HTTP/1.1 client, the service over
//! either store, and the whole application in process (`app`).

#![allow(dead_code)]

pub mod alb;
pub mod app;
pub mod monitor;
pub mod oidc;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gco_console::auth::identity::Identity;
use gco_console::service::{Actor, Service};
use gco_console::store::{Author, DynamoConfig, DynamoStore, EmbeddedStore, Store};

pub const REGIONS: [&str; 2] = ["us-east-1", "eu-west-1"];

/// The hex SHA-256 of `text`, as a tokens file gives a token's.
pub fn hex_sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What `start` makes, on a runtime of its own thread that runs for the
/// rest of the test process (a server for a test without a runtime).
pub fn on_own_thread<T, F>(start: impl FnOnce() -> F + Send + 'static) -> T
where
    T: Send + 'static,
    F: std::future::Future<Output = T>,
{
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            sender.send(start().await).unwrap();
            std::future::pending::<()>().await;
        });
    });
    receiver.recv().unwrap()
}

/// A directory removed when dropped (`tempfile`'s), named for its test.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("gco-console-test-{tag}-"))
            .tempdir()
            .expect("a temporary directory");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// A deterministic stream from `seed` (xorshift64), so that a generated
/// run replays from its seed.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// A port nothing listens on, and that no other test of this binary got.
/// The kernel may hand out a just-released port again; two tests running in
/// parallel then started their servers on one port, the second server failed
/// to bind, and its test talked to the first one until that one stopped.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if GIVEN.lock().unwrap().insert(port) {
            return port;
        }
    }
}

pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A dynalite server (npm `dynalite@4.0.0`, installed by scripts/setup.sh)
/// on a free port with its LevelDB files in a temporary directory, stopped
/// when dropped. It can be killed and restarted on the same port and data.
pub struct Dynalite {
    child: Child,
    pub port: u16,
    dir: TempDir,
}

impl Dynalite {
    pub fn start() -> Dynalite {
        let dir = TempDir::new("dynalite");
        let port = free_port();
        let child = Dynalite::spawn(port, dir.path());
        Dynalite { child, port, dir }
    }

    fn spawn(port: u16, data: &Path) -> Child {
        let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/dynalite");
        assert!(
            bin.exists(),
            "{} is missing: run scripts/setup.sh",
            bin.display()
        );
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--path"])
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dynalite starts");
        wait_for_port(port);
        child
    }

    /// SIGKILL: the server vanishes mid-conversation, as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A new server on the same port over the same LevelDB files.
    pub fn restart(&mut self) {
        self.child = Dynalite::spawn(self.port, self.dir.path());
    }

    /// SIGSTOP / SIGCONT: the server still accepts connections (the kernel
    /// does) but never answers, as a hung or partitioned server.
    pub fn pause(&self) {
        assert!(signal(&self.child, "STOP"), "kill -STOP failed");
    }

    pub fn resume(&self) {
        assert!(signal(&self.child, "CONT"), "kill -CONT failed");
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A client of the server, writing as another program would.
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        Dynalite::client_on(self.port)
    }

    /// A client of the server on `port`.
    pub fn client_on(port: u16) -> aws_sdk_dynamodb::Client {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
            .endpoint_url(format!("http://127.0.0.1:{port}"))
            .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
                "local", "local", None, None, "test",
            ))
            .build();
        aws_sdk_dynamodb::Client::from_conf(config)
    }

    pub async fn store(&self) -> DynamoStore {
        let cfg = DynamoConfig {
            table: "gco-inference-endpoints".into(),
            region: "us-east-1".into(),
            endpoint: Some(self.endpoint()),
            // dynalite has no TransactWriteItems.
            history_table: None,
        };
        let store = DynamoStore::connect(&cfg).await;
        store.create_table().await.expect("table created");
        store
    }
}

impl Drop for Dynalite {
    fn drop(&mut self) {
        // A paused process takes SIGKILL too.
        self.kill();
    }
}

/// moto's DynamoDB server (PyPI `moto[server]`, installed by
/// scripts/setup.sh) on a free port, stopped when dropped: a
/// DynamoDB-compatible server with TransactWriteItems, which dynalite
/// lacks. It keeps its tables in memory. It runs as `moto_server` does,
/// one request at a time (`moto_server.py` says why).
pub struct Moto {
    child: Child,
    pub port: u16,
}

/// The history table's name beside [`monitor::TABLE`].
pub const HISTORY_TABLE: &str = "gco-inference-endpoints-history";

impl Moto {
    pub fn start() -> Moto {
        let port = free_port();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/common/moto_server.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts (scripts/setup.sh installs moto[server])");
        wait_for_port(port);
        Moto { child, port }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A client of the server, writing as another program would.
    pub fn client(&self) -> aws_sdk_dynamodb::Client {
        Dynalite::client_on(self.port)
    }

    /// The tables' configuration, recording history.
    pub fn config(&self) -> DynamoConfig {
        DynamoConfig {
            table: monitor::TABLE.into(),
            region: "us-east-1".into(),
            endpoint: Some(self.endpoint()),
            history_table: Some(HISTORY_TABLE.into()),
        }
    }

    /// The store over both tables, created.
    pub async fn store(&self) -> DynamoStore {
        let store = DynamoStore::connect(&self.config()).await;
        store.create_table().await.expect("tables created");
        store
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends a signal with kill(1) (no libc needed); false when it failed.
fn signal(child: &Child, name: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// The real `gco-console` binary on a free port, killed when dropped. Its
/// output goes to a file, so tests can read the log and look for panics.
pub struct Server {
    child: Child,
    pub port: u16,
    log: TempDir,
}

impl Server {
    /// On the embedded store in `data`.
    pub fn embedded(data: &Path) -> Server {
        Server::spawn(&[
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--dist".as_ref(),
            "/nonexistent".as_ref(),
        ])
    }

    /// On dynalite at `endpoint`, creating the table; no history (dynalite
    /// has no TransactWriteItems).
    pub fn dynamodb(endpoint: &str) -> Server {
        Server::dynamodb_with(endpoint, &[])
    }

    /// On dynalite at `endpoint`, as [`Server::dynamodb`], with more flags.
    pub fn dynamodb_with(endpoint: &str, flags: &[&std::ffi::OsStr]) -> Server {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "--dynamodb-endpoint".as_ref(),
            endpoint.as_ref(),
            "--create-table".as_ref(),
            "--history-table".as_ref(),
            "off".as_ref(),
            "--dist".as_ref(),
            "/nonexistent".as_ref(),
        ];
        args.extend_from_slice(flags);
        Server::spawn(&args)
    }

    /// On moto at `endpoint`, creating both tables: every change recorded.
    pub fn moto(endpoint: &str) -> Server {
        Server::spawn(&[
            "--dynamodb-endpoint".as_ref(),
            endpoint.as_ref(),
            "--create-table".as_ref(),
            "--dist".as_ref(),
            "/nonexistent".as_ref(),
        ])
    }

    /// On the embedded store in `data`, with more flags.
    pub fn embedded_with(data: &Path, flags: &[&std::ffi::OsStr]) -> Server {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--dist".as_ref(),
            "/nonexistent".as_ref(),
        ];
        args.extend_from_slice(flags);
        Server::spawn(&args)
    }

    /// Serving the console files of `dist` too (else only the API).
    pub fn embedded_with_dist(data: &Path, dist: &Path) -> Server {
        Server::spawn(&[
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--dist".as_ref(),
            dist.as_os_str(),
        ])
    }

    /// With more flags.
    pub fn with_args(args: &[&std::ffi::OsStr]) -> Server {
        Server::spawn(args)
    }

    fn spawn(args: &[&std::ffi::OsStr]) -> Server {
        let port = free_port();
        let log = TempDir::new("server-log");
        // The log goes to stdout, errors at start-up to stderr.
        let log_file = std::fs::File::create(log.path().join("log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_gco-console"))
            .args([
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--regions",
                "us-east-1",
            ])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .expect("gco-console starts");
        wait_for_port(port);
        Server { child, port, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no chance to flush or finish anything.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path().join("log")).unwrap_or_default()
    }

    /// One JSON request; panics when the server does not answer.
    pub fn send(&self, method: &str, path: &str, body: &str) -> Reply {
        self.try_send(method, path, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// One JSON request; an error when the connection fails (e.g. the server
    /// was killed).
    pub fn try_send(&self, method: &str, path: &str, body: &str) -> std::io::Result<Reply> {
        request(self.port, method, path, body)
    }

    /// SIGTERM, then the exit status once it stopped.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        assert!(signal(&self.child, "TERM"), "kill -TERM failed");
        self.child.wait().unwrap()
    }
}

/// One JSON request to the server on `port`.
pub fn request(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<Reply> {
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    exchange(port, &[head.as_bytes(), body.as_bytes()].concat())
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An HTTP response, read until the server closed the connection.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> gco_spec::json::Value {
        gco_spec::json::parse(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// A member of the JSON body by dotted path (`errors.0.message`).
    pub fn get(&self, path: &str) -> gco_spec::json::Value {
        at(self.json(), path)
    }

    pub fn str(&self, path: &str) -> String {
        self.get(path).as_str().unwrap_or_default().to_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// Panics unless this is the API's error shape:
    /// `{"error": "<summary>", "errors": [{"path": ..., "message": ...}]}`.
    pub fn assert_error_shape(&self) {
        let v = self.json();
        let o = v
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {self:?}"));
        assert!(
            o.get("error")
                .and_then(|e| e.as_str())
                .is_some_and(|e| !e.is_empty()),
            "no error summary: {self:?}"
        );
        let Some(gco_spec::json::Value::List(errors)) = o.get("errors") else {
            panic!("no errors list: {self:?}")
        };
        for e in errors {
            let e = e
                .as_object()
                .unwrap_or_else(|| panic!("an error is not an object: {self:?}"));
            assert!(e.get("path").and_then(|p| p.as_str()).is_some(), "{self:?}");
            assert!(
                e.get("message").and_then(|m| m.as_str()).is_some(),
                "{self:?}"
            );
        }
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
    }
}

/// Sends raw bytes and reads the response until the server closes. A write
/// the server cut short (it may answer before reading a whole body) still
/// reads whatever response came.
pub fn exchange(port: u16, request: &[u8]) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let written = stream.write_all(request);
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    if raw.is_empty() {
        written?;
        read?;
    }
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    })
}

/// Runs `f` until it returns true, for at most `limit`.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A JSON value with every object's keys sorted: key order is not part of a
/// record's meaning (DynamoDB maps are unordered).
pub fn canonical(v: &gco_spec::json::Value) -> String {
    v.with_sorted_keys().to_json()
}

/// Who the tests' changes are made by: the loopback user, with every role.
pub fn actor() -> Actor {
    Actor::new(Identity::local(), Some("req-test".into()))
}

/// The author of a store write made by a test.
pub fn author() -> Author {
    Author::new("local", "test", Some("req-test"))
}

pub fn service(store: Arc<dyn Store>) -> Service {
    Service::new(
        store,
        REGIONS.iter().map(|r| r.to_string()).collect(),
        "vllm/vllm-openai:v0.27.1".into(),
    )
}

pub fn embedded(dir: &TempDir) -> Arc<dyn Store> {
    Arc::new(EmbeddedStore::open(dir.path()).unwrap())
}

/// The member of `v` at a dotted path (`errors.0.message`), null when
/// there is none: how every test reads an answer.
#[allow(dead_code)] // each test binary uses its part of this module
pub fn at(mut v: gco_spec::json::Value, path: &str) -> gco_spec::json::Value {
    use gco_spec::json::Value;
    for key in path.split('.') {
        v = match &v {
            Value::Object(o) => o.get(key).cloned().unwrap_or(Value::Null),
            Value::List(l) => key
                .parse::<usize>()
                .ok()
                .and_then(|i| l.get(i).cloned())
                .unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    v
}
