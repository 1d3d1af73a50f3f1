//! What a client can hold: `server::serve` with short limits, over real
//! sockets. A stalled head or an idle connection is closed at the head
//! deadline, an answer nobody reads at the write deadline, and connections
//! beyond the cap wait until one closes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::TempDir;
use gco_console::auth::Access;
use gco_console::server::{ServeLimits, serve};
use gco_console::service::Service;
use gco_console::store::EmbeddedStore;

const HEAD_DEADLINE: Duration = Duration::from_millis(300);
const WRITE_DEADLINE: Duration = Duration::from_millis(300);

/// A server on a free port with [`HEAD_DEADLINE`], [`WRITE_DEADLINE`] and
/// `connections`, serving `dir/dist` as the console; it stops when the
/// returned sender is dropped.
fn start(dir: &Path, connections: usize) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let store = Arc::new(EmbeddedStore::open(dir).expect("the store opens"));
    let service = Service::new(
        store,
        vec!["us-east-1".into()],
        "vllm/vllm-openai:v0.27.1".into(),
    );
    let app = gco_console::app::app(service, Access::loopback(None), &dir.join("dist"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let limits = ServeLimits {
                header_timeout: HEAD_DEADLINE,
                write_timeout: WRITE_DEADLINE,
                connections,
                shutdown_grace: Duration::from_secs(1),
            };
            serve(listener, app, limits, async {
                let _ = stopped.await;
            })
            .await;
        });
    });
    (port, stop)
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Reads until the server closes the connection; how long that took.
fn time_to_close(stream: &mut TcpStream) -> Duration {
    let start = Instant::now();
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink);
    start.elapsed()
}

fn get_healthz(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("an answer");
    reply
}

#[test]
fn a_stalled_head_and_an_idle_connection_are_closed_at_the_deadline() {
    let dir = TempDir::new("connections-deadline");
    let (port, _stop) = start(dir.path(), 16);

    let mut half_head = connect(port);
    half_head
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let waited = time_to_close(&mut half_head);
    assert!(
        waited >= HEAD_DEADLINE / 2 && waited < HEAD_DEADLINE * 10,
        "closed after {waited:?}"
    );

    // Keep-alive: one answer, then nothing; the next head has a deadline too.
    let mut idle = connect(port);
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let waited = time_to_close(&mut idle);
    assert!(waited < HEAD_DEADLINE * 10, "closed after {waited:?}");

    assert!(get_healthz(&mut connect(port)).starts_with("HTTP/1.1 200"));
}

/// A client that asks for answers and never reads them does not keep the
/// connection: once the socket buffers are full and nothing moves for the
/// write deadline, the server closes it.
#[test]
fn an_answer_nobody_reads_is_given_up_at_the_write_deadline() {
    const FILE_BYTES: usize = 4 << 20;
    const ASKED: usize = 20;
    let dir = TempDir::new("connections-unread");
    std::fs::create_dir_all(dir.path().join("dist")).unwrap();
    std::fs::write(dir.path().join("dist/big.bin"), vec![b'x'; FILE_BYTES]).unwrap();
    let (port, _stop) = start(dir.path(), 16);

    let mut reader = connect(port);
    let ask = b"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    reader.write_all(&ask.repeat(ASKED)).unwrap();
    std::thread::sleep(WRITE_DEADLINE * 4);
    // Reading now drains what the kernel buffered, then meets the close;
    // a server still waiting would send every answer and then keep the
    // connection open past the read timeout.
    let mut received = Vec::new();
    let read = reader.read_to_end(&mut received);
    assert!(read.is_ok(), "the connection was not closed: {read:?}");
    assert!(
        received.len() < FILE_BYTES * ASKED,
        "every answer was sent ({} bytes)",
        received.len()
    );
    assert!(get_healthz(&mut connect(port)).starts_with("HTTP/1.1 200"));
}

#[test]
fn connections_beyond_the_cap_wait_for_a_free_one() {
    let dir = TempDir::new("connections-cap");
    let (port, _stop) = start(dir.path(), 2);
    // Two clients hold both connections and send nothing.
    let holders: Vec<TcpStream> = (0..2).map(|_| connect(port)).collect();
    std::thread::sleep(Duration::from_millis(50));

    let start = Instant::now();
    let reply = get_healthz(&mut connect(port));
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    // Answered once the head deadline freed a connection, not before.
    assert!(
        start.elapsed() >= HEAD_DEADLINE / 2,
        "answered after {:?}",
        start.elapsed()
    );
    drop(holders);
}

#[test]
fn the_server_stops_when_asked_and_answers_until_then() {
    let dir = TempDir::new("connections-stop");
    let (port, stop) = start(dir.path(), 16);
    assert!(get_healthz(&mut connect(port)).starts_with("HTTP/1.1 200"));
    drop(stop);
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after the stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}
