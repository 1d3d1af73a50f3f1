//! One view of the table per console (`ViewedStore`) on a real dynalite,
//! with the calls the table receives counted by a proxy in front of it:
//! many clients polling cost one scan per interval, an idle console reads
//! nothing, its own writes are in the very next list, an outside write
//! shows within one interval, and a table that stops answering leaves the
//! last view served and marked stale until it heals. And `/metrics` parses
//! as Prometheus text.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::Dynalite;
use crate::common::app::Api;
use gco_console::service::Service;
use gco_console::store::listing::{Filter, Page};
use gco_console::store::{DynamoConfig, DynamoStore, Store, ViewedStore};
use gco_spec::json::parse;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const INTERVAL: Duration = Duration::from_millis(400);

/// A TCP proxy to `upstream` that counts the DynamoDB Scan requests it
/// passes on (by their `X-Amz-Target`).
struct CountingProxy {
    port: u16,
    scans: Arc<AtomicUsize>,
}

impl CountingProxy {
    async fn start(upstream: String) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let scans = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&scans);
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let (upstream, counted) = (upstream.clone(), Arc::clone(&counted));
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let upward = async move {
                        const NEEDLE: &[u8] = b"DynamoDB_20120810.Scan\r\n";
                        let mut carry: Vec<u8> = Vec::new();
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            let n = match client_read.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            carry.extend_from_slice(&buf[..n]);
                            let found =
                                carry.windows(NEEDLE.len()).filter(|w| *w == NEEDLE).count();
                            counted.fetch_add(found, Ordering::SeqCst);
                            let keep = carry.len().saturating_sub(NEEDLE.len() - 1);
                            carry.drain(..keep);
                            if server_write.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    let downward = async move {
                        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                    };
                    tokio::join!(upward, downward);
                });
            }
        });
        CountingProxy { port, scans }
    }

    fn scans(&self) -> usize {
        self.scans.load(Ordering::SeqCst)
    }

    async fn store(&self) -> DynamoStore {
        let store = DynamoStore::connect(&DynamoConfig {
            table: common::monitor::TABLE.into(),
            region: "us-east-1".into(),
            endpoint: Some(format!("http://127.0.0.1:{}", self.port)),
            history_table: None,
        })
        .await;
        store.create_table().await.expect("table created");
        store
    }
}

struct Setup {
    _dynalite: Dynalite,
    proxy: CountingProxy,
    service: Arc<Service>,
    /// The table without the view: another writer of it.
    outside: Arc<dyn Store>,
}

async fn setup() -> Setup {
    let dynalite = Dynalite::start();
    let upstream = dynalite.endpoint().trim_start_matches("http://").to_owned();
    let proxy = CountingProxy::start(upstream).await;
    let table: Arc<dyn Store> = Arc::new(proxy.store().await);
    let viewed: Arc<dyn Store> = Arc::new(ViewedStore::new(Arc::clone(&table), INTERVAL));
    let service = Arc::new(common::service(viewed));
    let outside: Arc<dyn Store> = Arc::new(dynalite.store().await);
    Setup {
        _dynalite: dynalite,
        proxy,
        service,
        outside,
    }
}

async fn names(service: &Service) -> Vec<String> {
    let listing = service
        .list(&Filter::default(), &Page::default())
        .await
        .expect("a list");
    listing
        .records
        .iter()
        .map(|s| s.record.endpoint_name.clone())
        .collect()
}

async fn deploy(service: &Service, name: &str) {
    let request = parse(&format!(
        r#"{{"endpoint_name": "{name}", "image": "img:1"}}"#
    ))
    .unwrap();
    service
        .deploy(request, &common::actor())
        .await
        .expect("deployed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_pollers_cost_one_scan_per_interval_and_idle_costs_none() {
    let s = setup().await;
    deploy(&s.service, "chat").await;
    let before = s.proxy.scans();
    let polling = Duration::from_millis(2_000);
    let started = Instant::now();
    let lists = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..25)
        .map(|_| {
            let (service, lists) = (Arc::clone(&s.service), Arc::clone(&lists));
            tokio::spawn(async move {
                while started.elapsed() < polling {
                    assert_eq!(names(&service).await, ["chat"]);
                    lists.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        })
        .collect();
    for c in clients {
        c.await.unwrap();
    }
    let scans = s.proxy.scans() - before;
    let lists = lists.load(Ordering::SeqCst);
    // One read at the start, then one per interval.
    let most = (polling.as_millis() / INTERVAL.as_millis()) as usize + 2;
    assert!(
        scans <= most,
        "{scans} scans for {lists} lists in {polling:?}: at most {most}"
    );
    assert!(lists > 500, "only {lists} lists");

    // Idle: after two intervals nobody asked, nothing is read.
    tokio::time::sleep(INTERVAL * 3).await;
    let idle = s.proxy.scans();
    tokio::time::sleep(INTERVAL * 4).await;
    assert_eq!(s.proxy.scans(), idle, "an idle console reads nothing");

    // The next list after idling reads the table again.
    assert_eq!(names(&s.service).await, ["chat"]);
    assert_eq!(s.proxy.scans(), idle + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn own_writes_are_in_the_next_list_and_outside_writes_within_an_interval() {
    let s = setup().await;
    assert!(names(&s.service).await.is_empty());
    // Through this console: at once.
    deploy(&s.service, "mine").await;
    assert_eq!(names(&s.service).await, ["mine"]);
    let changed = s
        .service
        .change(
            "mine",
            gco_spec::Change::Scale {
                replicas: gco_spec::Value::int(3),
            },
            None,
            &common::actor(),
        )
        .await
        .unwrap();
    let shown = s.service.read("mine").await.unwrap();
    assert_eq!(shown.etag(), changed.etag(), "the page reads its own write");

    // Elsewhere: within one interval (and a little for the read itself).
    let other = Service::new(
        Arc::clone(&s.outside),
        vec!["us-east-1".into()],
        "img".into(),
    );
    other
        .deploy(
            parse(r#"{"endpoint_name": "theirs", "image": "img:2"}"#).unwrap(),
            &common::actor(),
        )
        .await
        .unwrap();
    let written = Instant::now();
    loop {
        let listed = names(&s.service).await;
        if listed.contains(&"theirs".to_owned()) {
            break;
        }
        assert!(
            written.elapsed() < INTERVAL + Duration::from_millis(600),
            "an outside write not shown after {:?}",
            written.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A page of a record the view does not have yet reads the table.
    other
        .deploy(
            parse(r#"{"endpoint_name": "newest", "image": "img:3"}"#).unwrap(),
            &common::actor(),
        )
        .await
        .unwrap();
    assert_eq!(
        s.service.read("newest").await.unwrap().record.endpoint_name,
        "newest"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_table_leaves_the_last_view_served_and_marked_stale() {
    let s = setup().await;
    deploy(&s.service, "chat").await;
    assert_eq!(names(&s.service).await, ["chat"]);
    assert_eq!(s.service.freshness().unwrap().failing, None);

    s._dynalite.pause();
    let paused = Instant::now();
    // The refresher's read times out (4 s); lists meanwhile are answered
    // from the view, at once.
    loop {
        let asked = Instant::now();
        assert_eq!(names(&s.service).await, ["chat"]);
        assert!(
            asked.elapsed() < Duration::from_millis(500),
            "a list waited for the table"
        );
        if s.service.freshness().unwrap().failing.is_some() {
            break;
        }
        assert!(
            paused.elapsed() < Duration::from_secs(12),
            "no failed refresh"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stale = s.service.freshness().unwrap();
    assert!(stale.age >= INTERVAL, "{stale:?}");

    s._dynalite.resume();
    let resumed = Instant::now();
    while s.service.freshness().unwrap().failing.is_some() {
        names(&s.service).await;
        assert!(
            resumed.elapsed() < Duration::from_secs(70),
            "the view did not heal"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(s.service.freshness().unwrap().age < Duration::from_secs(5));
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text() {
    let api = Api::new();
    assert_eq!(api.get("/api/endpoints").await.status, 200);
    assert_eq!(api.get("/api/endpoints/nope").await.status, 404);
    let reply = api.get("/metrics").await;
    assert_eq!(reply.status, 200);
    let content_type = reply.headers.get("content-type").unwrap().to_str().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let mut samples = 0;
    for line in reply.text.lines().filter(|l| !l.is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            let words: Vec<&str> = comment.split_whitespace().collect();
            assert!(
                matches!(words.first(), Some(&"TYPE") | Some(&"HELP")),
                "a comment that is neither TYPE nor HELP: {line}"
            );
            continue;
        }
        // name{label="value",...} number
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("not a number: {line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "a bad metric name: {line}"
        );
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            }
            // Route templates, never a name someone asked for.
            assert!(
                !labels.contains("nope"),
                "an endpoint's name in a label: {line}"
            );
        }
        samples += 1;
    }
    assert!(samples > 0);
    assert!(
        reply.text.contains(
            r#"gco_http_requests_total{route="/api/endpoints/{name}",method="GET",status="404"}"#
        ),
        "{}",
        reply.text
    );
}

/// `--metrics-addr`: the metrics on their own listener, not beside the API.
#[test]
fn metrics_can_have_their_own_address() {
    let data = common::TempDir::new("metrics-addr");
    let metrics_port = common::free_port();
    let addr = format!("127.0.0.1:{metrics_port}");
    let server = common::Server::with_args(&[
        "--data-dir".as_ref(),
        data.path().as_os_str(),
        "--dist".as_ref(),
        "/nonexistent".as_ref(),
        "--metrics-addr".as_ref(),
        addr.as_ref(),
    ]);
    assert_eq!(server.send("GET", "/api/endpoints", "").status, 200);
    common::wait_for_port(metrics_port);
    let metrics = common::request(metrics_port, "GET", "/metrics", "").unwrap();
    assert_eq!(metrics.status, 200);
    assert!(
        metrics.body.contains(
            r#"gco_http_requests_total{route="/api/endpoints",method="GET",status="200"}"#
        ),
        "{}",
        metrics.body
    );
    // Its own listener answers nothing else, and the API's has no metrics.
    assert_eq!(
        common::request(metrics_port, "GET", "/api/endpoints", "")
            .unwrap()
            .status,
        404
    );
    assert!(
        !server
            .send("GET", "/metrics", "")
            .body
            .contains("gco_http_requests_total")
    );
}
