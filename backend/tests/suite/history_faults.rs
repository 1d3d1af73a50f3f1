//! The history table failing under the real binary, on DynamoDB with
//! transactions (moto's server): missing at start-up or dropped while the
//! console runs, and throttled mid-transaction (a proxy in front of the
//! server answers TransactWriteItems as DynamoDB does when throttled). Each
//! time the record is unchanged and the client gets a 503 with the reason,
//! while reads keep working; and `--history-table off` says at start-up
//! that changes are not recorded.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use crate::common::monitor::TABLE;
use crate::common::{HISTORY_TABLE, Moto, Server, TempDir};
use aws_sdk_dynamodb::types::AttributeValue as A;
use gco_console::store::{DynamoConfig, DynamoStore, Span, Store};
use gco_spec::json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PLAIN: &str = r#"{"endpoint_name": "web", "image": "img:1"}"#;

async fn item(moto: &Moto, name: &str) -> Option<HashMap<String, A>> {
    moto.client()
        .get_item()
        .table_name(TABLE)
        .key("endpoint_name", A::S(name.into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

/// The store over moto's tables as the console sees them (history on).
async fn store(moto: &Moto) -> DynamoStore {
    DynamoStore::connect(&moto.config()).await
}

async fn entries(moto: &Moto, name: &str) -> usize {
    store(moto)
        .await
        .history(name, Span::Older(None), 1000)
        .await
        .unwrap()
        .len()
}

/// Runs the blocking client of `common` off the runtime.
async fn send(server: &Arc<Server>, method: &str, path: &str, body: &str) -> common::Reply {
    let (server, method, path, body) = (
        Arc::clone(server),
        method.to_owned(),
        path.to_owned(),
        body.to_owned(),
    );
    tokio::task::spawn_blocking(move || server.send(&method, &path, &body))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_history_table_refuses_changes_by_name_and_reads_work() {
    let moto = Moto::start();
    // Only the endpoints table, and a record another console wrote.
    let without = DynamoStore::connect(&DynamoConfig {
        history_table: None,
        ..moto.config()
    })
    .await;
    without.create_table().await.unwrap();
    let request = gco_spec::json::parse(PLAIN).unwrap();
    common::service(Arc::new(without))
        .deploy(request, &common::actor())
        .await
        .unwrap();
    let before = item(&moto, "web").await.unwrap();

    let server = Arc::new(Server::with_args(&[
        "--dynamodb-endpoint".as_ref(),
        moto.endpoint().as_ref(),
        "--dist".as_ref(),
        "/nonexistent".as_ref(),
    ]));
    assert!(
        common::eventually(std::time::Duration::from_secs(5), || {
            server.log().contains("the history table does not exist")
        }),
        "{}",
        server.log()
    );
    assert!(server.log().contains(HISTORY_TABLE), "{}", server.log());

    // Reads work.
    assert_eq!(
        send(&server, "GET", "/api/endpoints/web", "").await.status,
        200
    );
    assert_eq!(send(&server, "GET", "/api/endpoints", "").await.status, 200);
    let config = send(&server, "GET", "/api/config", "").await;
    assert_eq!(config.get("history"), Value::Bool(true));
    // Changes are refused, naming the table; nothing is written.
    let scale = r#"{"replicas": 3}"#;
    for (method, path, body) in [
        ("PUT", "/api/endpoints/web/replicas", scale),
        (
            "POST",
            "/api/endpoints",
            r#"{"endpoint_name": "new", "image": "img:1"}"#,
        ),
        ("DELETE", "/api/endpoints/web", ""),
    ] {
        let r = send(&server, method, path, body).await;
        assert_eq!(r.status, 503, "{method} {path}: {r:?}");
        r.assert_error_shape();
        let error = r.str("error");
        assert!(
            error.starts_with("the change was not saved: the history table 'gco-inference-endpoints-history' does not exist"),
            "{error}"
        );
    }
    assert_eq!(item(&moto, "web").await.unwrap(), before);
    assert!(item(&moto, "new").await.is_none());
    let r = send(&server, "GET", "/api/endpoints/web/history", "").await;
    assert_eq!(r.status, 503);
    assert!(r.str("error").contains(HISTORY_TABLE), "{r:?}");

    // Created: changes resume, recorded.
    store(&moto).await.create_table().await.unwrap();
    let r = send(&server, "PUT", "/api/endpoints/web/replicas", scale).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(entries(&moto, "web").await, 1);

    // Dropped while the console runs: refused again, by name.
    moto.client()
        .delete_table()
        .table_name(HISTORY_TABLE)
        .send()
        .await
        .unwrap();
    let before = item(&moto, "web").await.unwrap();
    let r = send(
        &server,
        "PUT",
        "/api/endpoints/web/replicas",
        r#"{"replicas": 4}"#,
    )
    .await;
    assert_eq!(r.status, 503, "{r:?}");
    assert!(r.str("error").contains(HISTORY_TABLE), "{r:?}");
    assert_eq!(item(&moto, "web").await.unwrap(), before);
    assert_eq!(
        send(&server, "GET", "/api/endpoints/web", "").await.status,
        200
    );
}

#[test]
fn history_off_is_said_at_start_up_and_in_the_config() {
    let data = TempDir::new("history-off");
    let server = Server::embedded_with(data.path(), &["--history-table".as_ref(), "off".as_ref()]);
    assert!(
        common::eventually(std::time::Duration::from_secs(5), || {
            server.log().contains("changes are NOT recorded")
        }),
        "{}",
        server.log()
    );
    assert_eq!(
        server.send("GET", "/api/config", "").get("history"),
        Value::Bool(false)
    );
    assert_eq!(server.send("POST", "/api/endpoints", PLAIN).status, 201);
    let r = server.send("GET", "/api/endpoints/web/history", "");
    assert_eq!(r.status, 404);
    assert!(r.str("error").contains("--history-table off"), "{r:?}");
}

// ---------------------------------------------------------------------------
// Throttling

/// How the proxy answers a TransactWriteItems.
const PASS: u8 = 0;
/// DynamoDB's answer to a request throttled whole.
const THROTTLED: u8 = 1;
/// DynamoDB's answer when one item of the transaction (the history
/// entry's, the second) is throttled: the transaction is cancelled.
const ENTRY_THROTTLED: u8 = 2;

/// A proxy to `upstream` that reads each HTTP request whole and passes
/// it on, except that a TransactWriteItems gets the fault `mode` says.
struct FaultProxy {
    port: u16,
    mode: Arc<AtomicU8>,
    faults: Arc<AtomicUsize>,
}

/// One HTTP/1.1 message from `stream`: the head and a `Content-Length`
/// body; `None` at the end of the stream.
async fn read_message(stream: &mut TcpStream, carry: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(at) = carry.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        carry.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&carry[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while carry.len() < head_end + length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        carry.extend_from_slice(&buf[..n]);
    }
    let body = carry[head_end..head_end + length].to_vec();
    carry.drain(..head_end + length);
    Some((head, body))
}

fn fault(mode: u8) -> Vec<u8> {
    let body = match mode {
        THROTTLED => r#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}"#.to_owned(),
        _ => r#"{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled, please refer cancellation reasons for specific reasons [None, ThrottlingError]","CancellationReasons":[{"Code":"None"},{"Code":"ThrottlingError","Message":"Throughput exceeds the current capacity of your table or index."}]}"#.to_owned(),
    };
    format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/x-amz-json-1.0\r\nx-amzn-RequestId: fault\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl FaultProxy {
    async fn start(upstream: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(PASS));
        let faults = Arc::new(AtomicUsize::new(0));
        let (m, f) = (Arc::clone(&mode), Arc::clone(&faults));
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let (mode, faults) = (Arc::clone(&m), Arc::clone(&f));
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                        return;
                    };
                    let (mut from_client, mut from_server) = (Vec::new(), Vec::new());
                    while let Some((head, body)) = read_message(&mut client, &mut from_client).await
                    {
                        let mode = mode.load(Ordering::SeqCst);
                        let transaction = head
                            .to_ascii_lowercase()
                            .contains("x-amz-target: dynamodb_20120810.transactwriteitems");
                        if transaction && mode != PASS {
                            faults.fetch_add(1, Ordering::SeqCst);
                            if client.write_all(&fault(mode)).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        let sent = server.write_all(head.as_bytes()).await.is_ok()
                            && server.write_all(&body).await.is_ok();
                        let Some((head, body)) = (if sent {
                            read_message(&mut server, &mut from_server).await
                        } else {
                            None
                        }) else {
                            return;
                        };
                        if client.write_all(head.as_bytes()).await.is_err()
                            || client.write_all(&body).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        FaultProxy { port, mode, faults }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_history_write_changes_nothing_and_says_why() {
    let moto = Moto::start();
    store(&moto).await.create_table().await.unwrap();
    let proxy = FaultProxy::start(moto.port).await;
    let server = Arc::new(Server::with_args(&[
        "--dynamodb-endpoint".as_ref(),
        format!("http://127.0.0.1:{}", proxy.port).as_ref(),
        "--dist".as_ref(),
        "/nonexistent".as_ref(),
    ]));
    assert_eq!(
        send(&server, "POST", "/api/endpoints", PLAIN).await.status,
        201
    );
    let before = item(&moto, "web").await.unwrap();
    let scale = r#"{"replicas": 3}"#;

    for (mode, reason) in [
        (
            THROTTLED,
            "the change was not saved: DynamoDB throttled the write of the change and its history entry",
        ),
        (
            ENTRY_THROTTLED,
            "the change was not saved: the history table 'gco-inference-endpoints-history' is throttled (ThrottlingError)",
        ),
    ] {
        proxy.mode.store(mode, Ordering::SeqCst);
        let faults = proxy.faults.load(Ordering::SeqCst);
        let r = send(&server, "PUT", "/api/endpoints/web/replicas", scale).await;
        assert_eq!(r.status, 503, "{r:?}");
        r.assert_error_shape();
        assert!(r.str("error").starts_with(reason), "{r:?}");
        assert!(
            proxy.faults.load(Ordering::SeqCst) > faults,
            "the fault was met"
        );
        assert_eq!(
            item(&moto, "web").await.unwrap(),
            before,
            "the record is unchanged"
        );
        assert_eq!(entries(&moto, "web").await, 1, "only the deploy's entry");
        // Reads go on.
        assert_eq!(
            send(&server, "GET", "/api/endpoints/web", "").await.status,
            200
        );
    }

    proxy.mode.store(PASS, Ordering::SeqCst);
    let r = send(&server, "PUT", "/api/endpoints/web/replicas", scale).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(entries(&moto, "web").await, 2);
}
