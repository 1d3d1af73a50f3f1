//! Faults, against the real binary over real HTTP: the DynamoDB server
//! killed or hung mid-run, `kill -9` of the backend during a write storm on
//! the embedded store, and a thousand concurrent mixed changes to one
//! endpoint checked against the acknowledged operations.
//!
//! `GCO_SLOW_TESTS=1` adds the long variants (see README, Testing).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::monitor::{Running, StatusLog};
use crate::common::{Dynalite, Reply, Server, TempDir, canonical, eventually, request};
use gco_spec::json::{Value, parse};
use gco_spec::time::parse_timestamp;
use gco_spec::{Change, Record, apply};

/// A request that failed before writing anything.
const UNAVAILABLE: &str = "the endpoint store is unavailable; try again shortly";
/// A write the store never confirmed: it may have landed.
const UNCONFIRMED: &str = "the endpoint store did not confirm the change, which may or may not have been saved; reload before trying again";

fn slow_tests() -> bool {
    std::env::var_os("GCO_SLOW_TESTS").is_some_and(|v| v == "1")
}

fn deploy_split(server: &Server, name: &str) -> Reply {
    let body = format!(
        r#"{{"endpoint_name": "{name}", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4, "target_regions": ["us-east-1"]}}"#
    );
    let r = server.send("POST", "/api/endpoints", &body);
    assert_eq!(r.status, 201, "{r:?}");
    r
}

fn record_of(reply: &Reply) -> Record {
    Record::from_value(&reply.json()).unwrap_or_else(|e| panic!("{e:?}: {}", reply.body))
}

/// The version a write got: `updated_at` in microseconds (the ETag's order).
fn version(reply: &Reply) -> i64 {
    parse_timestamp(&record_of(reply).updated_at).expect("updated_at is a timestamp")
}

/// A record as read back must be one GCO accepts: whole, never half-written.
fn assert_valid_record(v: &Value) {
    let report = gco_spec::document::check_document(v, &gco_spec::Frameworks::CURRENT);
    assert!(report.is_ok(), "{report:?} in {}", v.to_json());
}

/// A 503 with the error shape and one of the two fixed messages: clients
/// get no store internals.
fn assert_unavailable(r: &Reply) {
    assert_eq!(r.status, 503, "{r:?}");
    r.assert_error_shape();
    assert!(
        [UNAVAILABLE, UNCONFIRMED].contains(&r.str("error").as_str()),
        "{r:?}"
    );
}

// ---------------------------------------------------------------------------
// DynamoDB down

/// One request of every kind the store serves (scan, get, create, changes)
/// with its message when the store is down. A change reads first, so it
/// fails before writing; a deploy is a write straight away.
const STORE_REQUESTS: [(&str, &str, &str, &str); 6] = [
    ("GET", "/api/endpoints", "", UNAVAILABLE),
    ("GET", "/api/endpoints/pd", "", UNAVAILABLE),
    (
        "POST",
        "/api/endpoints",
        r#"{"endpoint_name": "late", "image": "img:1"}"#,
        UNCONFIRMED,
    ),
    (
        "PUT",
        "/api/endpoints/pd/topology",
        r#"{"prefill": 7, "decode": 7}"#,
        UNAVAILABLE,
    ),
    ("POST", "/api/endpoints/pd/stop", "", UNAVAILABLE),
    (
        "POST",
        "/api/endpoints/pd/regions",
        r#"{"region": "eu-west-1"}"#,
        UNAVAILABLE,
    ),
];

/// Every store request answers 503 with the error shape, each within `limit`
/// (sent in parallel, so a hang shows as one slow request, not six).
fn assert_all_unavailable_within(server: &Server, limit: Duration) -> Duration {
    let slowest = Mutex::new(Duration::ZERO);
    std::thread::scope(|s| {
        for (method, path, body, message) in STORE_REQUESTS {
            let slowest = &slowest;
            s.spawn(move || {
                let started = Instant::now();
                let r = server.send(method, path, body);
                let took = started.elapsed();
                assert_unavailable(&r);
                assert_eq!(r.str("error"), message, "{method} {path}");
                assert!(
                    took < limit,
                    "{method} {path} took {took:?} with the store down"
                );
                let mut slowest = slowest.lock().unwrap();
                *slowest = (*slowest).max(took);
            });
        }
    });
    assert_eq!(
        server.send("GET", "/healthz", "").status,
        200,
        "the server stays up"
    );
    assert!(
        server.log().contains("store unavailable"),
        "the detail goes to the log:\n{}",
        server.log()
    );
    slowest.into_inner().unwrap()
}

/// After the outage: the record is as it was (every change failed at its
/// read, so none was written), the unconfirmed deploy is absent or whole as
/// `deploy_may_have_landed` allows, and every kind of request works again.
fn assert_recovered(server: &Server, before: &Reply, deploy_may_have_landed: bool) {
    let after = server.send("GET", "/api/endpoints/pd", "");
    assert_eq!(after.status, 200, "{after:?}");
    assert_eq!(
        canonical(&after.json()),
        canonical(&before.json()),
        "a refused change was written"
    );
    let late = server.send("GET", "/api/endpoints/late", "");
    match late.status {
        404 => {}
        200 if deploy_may_have_landed => assert_valid_record(&late.json()),
        _ => panic!("the refused deploy: {late:?}"),
    }
    assert_eq!(server.send("GET", "/api/endpoints", "").status, 200);
    let r = server.send(
        "POST",
        "/api/endpoints",
        r#"{"endpoint_name": "later", "image": "img:1"}"#,
    );
    assert_eq!(r.status, 201, "{r:?}");
    let r = server.send("PUT", "/api/endpoints/pd/topology", STORE_REQUESTS[3].2);
    // Key order is the store's (DynamoDB's maps come back sorted).
    assert_eq!(
        (r.status, canonical(&r.get("spec.mooncake.topology"))),
        (
            200,
            canonical(&gco_spec::json::parse(r#"{"prefill": 7, "decode": 7}"#).unwrap())
        )
    );
}

#[test]
fn dynamodb_killed_answers_503_fast_and_service_resumes_on_restart() {
    let mut db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    let before = deploy_split(&server, "pd");
    db.kill();
    // A refused connection is retried a few times with short backoff only.
    let slowest = assert_all_unavailable_within(&server, Duration::from_secs(3));
    eprintln!("slowest 503 with the server killed: {slowest:?}");
    db.restart(); // same port, same LevelDB files
    // A refused connection means the deploy was never sent.
    assert_recovered(&server, &before, false);
}

#[test]
fn dynamodb_hung_answers_503_within_seconds_and_resumes() {
    let db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    let before = deploy_split(&server, "pd");
    db.pause();
    // A server that accepts but never answers is bounded by the SDK's
    // operation timeout.
    let slowest = assert_all_unavailable_within(&server, Duration::from_secs(6));
    eprintln!("slowest 503 with the server hung: {slowest:?}");
    db.resume();
    // The hung server had the deploy in its socket buffer, and may apply it
    // once it runs again: that is why the client was told "unconfirmed".
    assert_recovered(&server, &before, true);
}

/// One client's view of a topology write: what it asked for and what came
/// back (no reply: the connection failed).
struct TopologyWrite {
    counts: (u64, u64),
    reply: Reply,
    after_restart: bool,
}

/// Writers keep resizing one endpoint while the DynamoDB server is killed
/// and restarted under them.
#[test]
fn dynamodb_dies_mid_run_nothing_half_written_and_writes_resume() {
    let mut db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    deploy_split(&server, "pd");
    // GCO's monitor keeps writing the status all along, outage included.
    let monitor = Running::start(&db, "pd", MONITOR_EVERY);
    let writes = Mutex::new(Vec::<TopologyWrite>::new());
    let next = AtomicUsize::new(0);
    let (restarted, done) = (AtomicBool::new(false), AtomicBool::new(false));
    let acked_after_restart = || {
        writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.after_restart && w.reply.status == 200)
            .count()
    };
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    // Distinct counts per request, so the final record names its write.
                    let n = next.fetch_add(1, Ordering::Relaxed) as u64;
                    let counts = (1 + n % 1000, 1 + n / 1000);
                    let after_restart = restarted.load(Ordering::SeqCst);
                    let body = format!(r#"{{"prefill": {}, "decode": {}}}"#, counts.0, counts.1);
                    let reply = server.send("PUT", "/api/endpoints/pd/topology", &body);
                    writes.lock().unwrap().push(TopologyWrite {
                        counts,
                        reply,
                        after_restart,
                    });
                }
            });
        }
        std::thread::sleep(Duration::from_millis(500));
        db.kill();
        std::thread::sleep(Duration::from_millis(1000));
        db.restart();
        restarted.store(true, Ordering::SeqCst);
        let status_writes = monitor.written();
        let resumed = eventually(Duration::from_secs(15), || {
            acked_after_restart() >= 20 && monitor.written() >= status_writes + 20
        });
        done.store(true, Ordering::Relaxed);
        assert!(resumed, "writes did not resume after the restart");
    });
    let status_log = monitor.stop();

    let writes = writes.into_inner().unwrap();
    let acked: Vec<&TopologyWrite> = writes.iter().filter(|w| w.reply.status == 200).collect();
    let refused: Vec<&TopologyWrite> = writes.iter().filter(|w| w.reply.status != 200).collect();
    for w in &refused {
        assert_unavailable(&w.reply);
    }
    assert!(!refused.is_empty(), "no request saw the outage");
    assert!(
        acked.iter().any(|w| !w.after_restart),
        "no write before the outage"
    );
    for w in &acked {
        assert_eq!(
            topology(&w.reply.json()),
            w.counts,
            "an acknowledged write answered another's counts"
        );
    }
    let last = acked.iter().max_by_key(|w| version(&w.reply)).unwrap();
    let final_ = server.send("GET", "/api/endpoints/pd", "");
    assert_valid_record(&final_.json());
    // Writes after the restart were all acknowledged, so the last one wins:
    // the record is its content, and the monitor's status writes since
    // moved only the status and the version.
    let final_record = record_of(&final_);
    assert!(
        final_record.updated_at == record_of(&last.reply).updated_at
            || written_by_monitor(&final_record),
        "the last version is neither the last acknowledged write nor a status write"
    );
    assert_eq!(
        content(&record_of(&final_)),
        content(&record_of(&last.reply))
    );
    assert_eq!(topology(&final_.json()), last.counts);
    status_log.assert_intact(&final_.get("region_status"));
    eprintln!(
        "{} writes acknowledged, {} refused with 503; monitor: {}",
        acked.len(),
        refused.len(),
        status_log.summary()
    );
}

/// Whether the record's version is a status write's: the monitor sets
/// `updated_at` and the entry's `last_sync` to the same time. Its time is
/// taken before the write is sent, so a status write that lands after a
/// change may carry an earlier version than the change's: the order of
/// versions holds for the changes, not around status writes.
fn written_by_monitor(record: &Record) -> bool {
    record.region_status.str_entries().any(|(_, status)| {
        status
            .as_object()
            .and_then(|s| s.get("last_sync"))
            .and_then(Value::as_str)
            == Some(record.updated_at.as_str())
    })
}

/// How often the monitor-like writer writes a status while writers keep
/// resizing the endpoint through an outage: GCO's monitors write every 15 s
/// per region; every few ms puts status writes between the console's reads
/// and writes all the time.
const MONITOR_EVERY: Duration = Duration::from_millis(5);

/// The same for the mixed changes, where 16 clients already contend for one
/// record: each status write that lands between a change's read and write
/// costs it a round, so at every 5 ms on a loaded machine some change ran
/// out of rounds. Every 20 ms is still 750 times GCO's rate, and a few
/// hundred status writes fall among the changes.
const MONITOR_AMONG_MIXED_CHANGES: Duration = Duration::from_millis(20);

/// What a change depends on and acknowledges, as canonical text: the record
/// without what the monitors write (`region_status` and the `updated_at`
/// their writes move).
fn content(record: &Record) -> String {
    let mut r = record.clone();
    r.region_status = gco_spec::json::Object::new();
    r.updated_at = String::new();
    canonical(&r.to_value())
}

fn topology(record: &Value) -> (u64, u64) {
    let t = record
        .as_object()
        .and_then(|o| o.get("spec"))
        .and_then(|s| s.as_object())
        .and_then(|s| s.get("mooncake"));
    let t = t
        .and_then(|m| m.as_object())
        .and_then(|m| m.get("topology"))
        .and_then(|t| t.as_object())
        .expect("a topology");
    let count = |role| {
        t.get(role)
            .and_then(|v| v.to_json().parse().ok())
            .expect("a count")
    };
    (count("prefill"), count("decode"))
}

// ---------------------------------------------------------------------------
// kill -9 of the backend on the embedded store

/// A write the storm sent and what became of it.
enum StormWrite {
    /// A deploy of a new endpoint.
    Deploy {
        name: String,
        reply: std::io::Result<Reply>,
    },
    /// A new image for the shared endpoint `hot`.
    Image {
        image: String,
        reply: std::io::Result<Reply>,
    },
}

#[test]
fn kill_9_during_a_write_storm_loses_no_acknowledged_write() {
    let data = TempDir::new("storm");
    let mut server = Server::embedded(data.path());
    deploy_split(&server, "hot");
    let port = server.port;
    let writes = Mutex::new(Vec::<StormWrite>::new());
    let acked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (writes, acked) = (&writes, &acked);
            s.spawn(move || {
                for i in 0.. {
                    let write = if i % 2 == 0 {
                        let name = format!("ep-{t}-{i}");
                        let body =
                            format!(r#"{{"endpoint_name": "{name}", "image": "img:{t}-{i}"}}"#);
                        StormWrite::Deploy {
                            reply: request(port, "POST", "/api/endpoints", &body),
                            name,
                        }
                    } else {
                        let image = format!("img:hot-{t}-{i}");
                        let body = format!(r#"{{"image": "{image}"}}"#);
                        StormWrite::Image {
                            reply: request(port, "PUT", "/api/endpoints/hot/image", &body),
                            image,
                        }
                    };
                    let (StormWrite::Deploy { reply, .. } | StormWrite::Image { reply, .. }) =
                        &write;
                    let gone = reply.is_err();
                    if reply.as_ref().is_ok_and(|r| r.status < 300) {
                        acked.fetch_add(1, Ordering::Relaxed);
                    }
                    writes.lock().unwrap().push(write);
                    if gone {
                        return;
                    }
                }
            });
        }
        assert!(
            eventually(Duration::from_secs(20), || acked.load(Ordering::Relaxed)
                >= 300),
            "the storm stalled"
        );
        server.kill();
    });

    let server = Server::embedded(data.path());
    let list = server.send("GET", "/api/endpoints", "");
    assert_eq!(
        list.status, 200,
        "the store does not open cleanly: {list:?}"
    );
    let Value::List(records) = list.get("endpoints") else {
        panic!("{list:?}")
    };
    for r in &records {
        assert_valid_record(r);
    }

    let writes = writes.into_inner().unwrap();
    let mut hot_acked = Vec::new();
    let mut hot_unacked = Vec::new();
    for write in &writes {
        match write {
            StormWrite::Deploy {
                name,
                reply: Ok(reply),
            } if reply.status == 201 => {
                let now = server.send("GET", &format!("/api/endpoints/{name}"), "");
                assert_eq!(now.status, 200, "acknowledged deploy {name} lost");
                assert_eq!(now.body, reply.body, "acknowledged deploy {name} changed");
            }
            StormWrite::Image {
                reply: Ok(reply), ..
            } if reply.status == 200 => hot_acked.push(reply),
            StormWrite::Image { image, .. } => hot_unacked.push(image.as_str()),
            StormWrite::Deploy { .. } => {}
        }
        if let StormWrite::Deploy { reply: Ok(r), .. } | StormWrite::Image { reply: Ok(r), .. } =
            write
        {
            assert!(r.status < 500, "{r:?}");
        }
    }
    let last = hot_acked
        .iter()
        .max_by_key(|r| version(r))
        .expect("an acknowledged image change");
    let hot = server.send("GET", "/api/endpoints/hot", "");
    // The last acknowledged image, unless a write in flight at the kill
    // (never acknowledged) landed after it.
    assert!(
        version(&hot) >= version(last),
        "acknowledged image change lost"
    );
    if version(&hot) == version(last) {
        assert_eq!(hot.body, last.body);
    } else {
        assert!(
            hot_unacked.contains(&hot.str("spec.image").as_str()),
            "{hot:?}"
        );
    }
    assert!(!server.log().contains("panicked"), "{}", server.log());
    eprintln!(
        "{} writes acknowledged before the kill",
        acked.load(Ordering::Relaxed)
    );
}

// ---------------------------------------------------------------------------
// Concurrent mixed operations on one endpoint

const REGION_POOL: [&str; 5] = [
    "us-east-1",
    "eu-west-1",
    "ap-south-1",
    "us-west-2",
    "eu-central-1",
];

/// A change a client sends, as the HTTP request and as the core's `Change`.
#[derive(Debug, Clone, Copy)]
enum Op {
    Topology(u64, u64),
    Store(u64),
    Image(u64),
    AddRegion(&'static str),
    RemoveRegion(&'static str),
    Stop,
    Start,
}

impl Op {
    /// A deterministic mix from a seed (xorshift64), so a failure replays.
    fn generate(count: usize, seed: u64) -> Vec<Op> {
        let mut next = crate::common::xorshift(seed);
        (0..count)
            .map(|_| {
                let (kind, a, b) = (next() % 20, next(), next());
                match kind {
                    0..4 => Op::Topology(1 + a % 8, 1 + b % 8),
                    4..7 => Op::Store(1 + a % 16),
                    7..10 => Op::Image(a % 1000),
                    10..14 => Op::AddRegion(REGION_POOL[a as usize % REGION_POOL.len()]),
                    14..17 => Op::RemoveRegion(REGION_POOL[a as usize % REGION_POOL.len()]),
                    // Start lands only on a stopped endpoint: sent more often.
                    17 => Op::Stop,
                    _ => Op::Start,
                }
            })
            .collect()
    }

    fn request(self, name: &str) -> (&'static str, String, String) {
        let at = |route: &str| format!("/api/endpoints/{name}/{route}");
        match self {
            Op::Topology(p, d) => (
                "PUT",
                at("topology"),
                format!(r#"{{"prefill": {p}, "decode": {d}}}"#),
            ),
            Op::Store(gib) => {
                let bytes = gib << 30;
                (
                    "PUT",
                    at("store"),
                    format!(r#"{{"enabled": true, "global_segment_size": "{bytes}"}}"#),
                )
            }
            Op::Image(n) => ("PUT", at("image"), format!(r#"{{"image": "img:{n}"}}"#)),
            Op::AddRegion(r) => ("POST", at("regions"), format!(r#"{{"region": "{r}"}}"#)),
            Op::RemoveRegion(r) => ("DELETE", at(&format!("regions/{r}")), String::new()),
            Op::Stop => ("POST", at("stop"), String::new()),
            Op::Start => ("POST", at("start"), String::new()),
        }
    }

    /// The change the server applied; a region's generation token is random
    /// on the server, so it is taken from the acknowledged record.
    /// The generation token `acked` holds for the op's region: the one the
    /// op minted when it wrote `acked`.
    fn token(self, acked: &Record) -> String {
        let region = match self {
            Op::AddRegion(r) | Op::RemoveRegion(r) => r,
            _ => return String::new(),
        };
        acked
            .region_generations
            .as_ref()
            .and_then(|g| g.get(region))
            .and_then(|g| g.as_str())
            .unwrap_or_default()
            .to_owned()
    }

    fn change(self) -> Change {
        let (_, _, body) = self.request("_");
        let body = if body.is_empty() {
            Value::Null
        } else {
            parse(&body).unwrap()
        };
        let field = |k: &str| {
            body.as_object()
                .and_then(|o| o.get(k))
                .cloned()
                .unwrap_or(Value::Null)
        };
        match self {
            Op::Topology(..) => Change::SetTopology {
                prefill: field("prefill"),
                decode: field("decode"),
            },
            Op::Store(_) => Change::ConfigureStore { store: body },
            Op::Image(_) => Change::UpdateImage {
                image: field("image"),
                with_proxy: Value::Null,
            },
            Op::AddRegion(r) => Change::AddRegion {
                region: Value::str(r),
            },
            Op::RemoveRegion(r) => Change::RemoveRegion {
                region: Value::str(r),
            },
            Op::Stop => Change::Stop,
            Op::Start => Change::Start,
        }
    }
}

/// Sends `ops` from `clients` threads at once to one endpoint, then checks
/// the outcome against what was acknowledged:
/// - every answer is a 200 or a 409 refusal with the error shape (no 5xx);
/// - a version (`updated_at`, the ETag's) is one record: answers that share
///   it are a write and changes that changed nothing, which are not written
///   and answer the record as it stood;
/// - replayed with the core's `apply` in version order from the deployed
///   record, each version is what one of its changes gives when applied to
///   the version before it, and every other change acknowledged with it
///   changes nothing in it: every write was applied to the one acknowledged
///   before it, so none was lost or interleaved;
/// - the final record is the last acknowledged one and passes the core's
///   validation; each acknowledged region add is there unless a later
///   acknowledged remove took it out, and vice versa.
///
/// With `monitor` (a DynamoDB server), a monitor-like writer writes the
/// status of the targets all along, as GCO's monitors do: records are then
/// compared by [`content`] (what the monitors write is theirs), and the
/// monitor's last status write of each region must be in the final record.
fn mixed_ops_on_one_endpoint(
    server: &Server,
    ops: &[Op],
    clients: usize,
    monitor: Option<&Dynalite>,
) {
    let deployed = record_of(&deploy_split(server, "mix"));
    let running = monitor.map(|db| Running::start(db, "mix", MONITOR_AMONG_MIXED_CHANGES));
    let monitored = running.is_some();
    let view = |r: &Record| {
        if monitored {
            content(r)
        } else {
            canonical(&r.to_value())
        }
    };
    let replies: Vec<Mutex<Option<Reply>>> = ops.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(op) = ops.get(i) else { break };
                    let (method, path, body) = op.request("mix");
                    *replies[i].lock().unwrap() = Some(server.send(method, &path, &body));
                }
            });
        }
    });
    let mut replies: Vec<Reply> = replies
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every op answered"))
        .collect();
    // Start lands only on a stopped endpoint, and any change in between
    // redeploys it: a closing stop and start make sure both are exercised.
    let mut ops = ops.to_vec();
    for op in [Op::Stop, Op::Start] {
        let (method, path, body) = op.request("mix");
        replies.push(server.send(method, &path, &body));
        ops.push(op);
    }
    let status_log: Option<StatusLog> = running.map(Running::stop);

    let mut acked: Vec<(Op, Record)> = Vec::new();
    // Changes of nothing answered at a status write's version.
    let mut at_status_writes: Vec<(Op, Record)> = Vec::new();
    for (op, reply) in ops.iter().zip(&replies) {
        match reply.status {
            200 if monitored && written_by_monitor(&record_of(reply)) => {
                at_status_writes.push((*op, record_of(reply)))
            }
            200 => acked.push((*op, record_of(reply))),
            409 => reply.assert_error_shape(),
            _ => panic!("{op:?}: {reply:?}"),
        }
    }
    acked.sort_by_key(|(_, r)| parse_timestamp(&r.updated_at));
    // Such a version's content is one a change left (or the deployed one),
    // and the change answered with it changes nothing in it.
    for (op, r) in &at_status_writes {
        assert!(
            apply(r, &op.change(), &r.updated_at, &mut || op.token(r)).is_ok_and(|after| view(
                &after
            ) == view(
                r
            )),
            "{op:?} answered a status write's version {} but changes it",
            r.updated_at
        );
        assert!(
            std::iter::once(&deployed)
                .chain(acked.iter().map(|(_, a)| a))
                .any(|a| view(a) == view(r)),
            "{op:?} answered content no change left"
        );
    }

    let mut current = deployed.clone();
    for version in acked.chunk_by(|a, b| a.1.updated_at == b.1.updated_at) {
        let record = &version[0].1;
        let at = &record.updated_at;
        let gives = |from: &Record, op: &Op, changed: &Record| {
            apply(from, &op.change(), at, &mut || op.token(changed))
                .is_ok_and(|r| view(&r) == view(record))
        };
        for (op, r) in version {
            assert_eq!(
                view(r),
                view(record),
                "{op:?}: two records share the version {at}"
            );
            assert!(
                gives(&current, op, r) || gives(record, op, r),
                "{op:?} at {at} was neither applied to the write acknowledged before it nor a change of nothing"
            );
        }
        if *at != current.updated_at {
            assert!(
                version.iter().any(|(op, r)| gives(&current, op, r)),
                "no change acknowledged at {at} gives it from the version before"
            );
            current = record.clone();
        }
    }

    let final_ = server.send("GET", "/api/endpoints/mix", "");
    assert_eq!(
        view(&record_of(&final_)),
        view(&current),
        "the final record is not the last acknowledged"
    );
    assert_valid_record(&final_.json());
    if let Some(log) = &status_log {
        log.assert_intact(&final_.get("region_status"));
        eprintln!("monitor: {}", log.summary());
    }
    let final_ = record_of(&final_);
    for (i, (op, _)) in acked.iter().enumerate() {
        let later = &acked[i + 1..];
        match *op {
            Op::AddRegion(r)
                if !later
                    .iter()
                    .any(|(o, _)| matches!(o, Op::RemoveRegion(x) if *x == r)) =>
            {
                assert!(
                    final_.target_regions.iter().any(|t| t == r),
                    "acknowledged add of {r} lost"
                );
            }
            Op::RemoveRegion(r)
                if !later
                    .iter()
                    .any(|(o, _)| matches!(o, Op::AddRegion(x) if *x == r)) =>
            {
                assert!(
                    !final_.target_regions.iter().any(|t| t == r),
                    "acknowledged removal of {r} lost"
                );
            }
            _ => {}
        }
    }
    assert_every_kind_acknowledged(&acked);
    eprintln!(
        "{} of {} ops acknowledged ({} of them at a status write's version)",
        acked.len() + at_status_writes.len(),
        ops.len(),
        at_status_writes.len()
    );
}

/// A run where some kind of change never landed proves nothing about it.
fn assert_every_kind_acknowledged(acked: &[(Op, Record)]) {
    let kind = |op: &Op| std::mem::discriminant(op);
    let all = [
        Op::Topology(1, 1),
        Op::Store(1),
        Op::Image(0),
        Op::AddRegion(""),
        Op::RemoveRegion(""),
        Op::Stop,
        Op::Start,
    ];
    for op in all {
        assert!(
            acked.iter().any(|(o, _)| kind(o) == kind(&op)),
            "no {op:?} was acknowledged"
        );
    }
}

#[test]
fn thousand_concurrent_mixed_ops_on_one_endpoint_embedded() {
    let data = TempDir::new("mixed");
    let server = Server::embedded(data.path());
    mixed_ops_on_one_endpoint(
        &server,
        &Op::generate(1000, 0x9e37_79b9_7f4a_7c15),
        16,
        None,
    );
}

/// Against DynamoDB's conditional writes, with GCO's monitor writing the
/// status all along: 200 ops always, 1,000 with `GCO_SLOW_TESTS=1`
/// (dynalite is slower than the embedded store).
#[test]
fn concurrent_mixed_ops_on_one_endpoint_dynamodb() {
    let db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    let count = if slow_tests() { 1000 } else { 200 };
    mixed_ops_on_one_endpoint(
        &server,
        &Op::generate(count, 0x2545_f491_4f6c_dd1d),
        16,
        Some(&db),
    );
}
