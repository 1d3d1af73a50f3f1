//! Versions that survive the monitors: GCO's monitors write `region_status`
//! and move `updated_at` about every 15 s per region, and a change sent with
//! the `ETag` of an earlier read must still land while nothing it depends on
//! changed, without writing over the status; a change by anyone else is
//! still a 412. Conditional reads answer 304 while nothing changed at all.
//!
//! Against the real binary on dynalite, with status writes made as GCO's
//! monitor makes them (`common::monitor`).

use std::sync::Mutex;
use std::time::Duration;

use crate::common::monitor::{Monitor, Outcome, Running, TABLE};
use crate::common::{Dynalite, Reply, Server, TempDir, canonical, exchange};
use aws_sdk_dynamodb::types::AttributeValue as A;
use gco_spec::Record;
use gco_spec::json::Value;
use gco_spec::time::parse_timestamp;

const STALE: &str = "the endpoint changed since it was read; reload it and apply the change again";

/// One request with extra headers.
fn send(server: &Server, method: &str, path: &str, body: &str, headers: &[(&str, &str)]) -> Reply {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    exchange(server.port, &[head.as_bytes(), body.as_bytes()].concat())
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

fn tag(reply: &Reply) -> String {
    reply
        .header("etag")
        .unwrap_or_else(|| panic!("no ETag: {reply:?}"))
        .to_owned()
}

/// The part of a tag `If-Match` compares: up to the last `.`.
fn content_half(tag: &str) -> &str {
    tag.rsplit_once('.')
        .unwrap_or_else(|| panic!("no content half in {tag}"))
        .0
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn deploy_split(server: &Server, name: &str) -> Reply {
    let body = format!(
        r#"{{"endpoint_name": "{name}", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4, "target_regions": ["us-east-1", "eu-west-1"]}}"#
    );
    let r = server.send("POST", "/api/endpoints", &body);
    assert_eq!(r.status, 201, "{r:?}");
    r
}

/// One status write of `region` as GCO's monitor makes it; panics unless
/// it was written.
fn monitor_write(rt: &tokio::runtime::Runtime, monitor: &Monitor, region: &str, n: i64) -> Value {
    rt.block_on(async {
        let item = monitor.read().await.expect("the record");
        match monitor.write_status(&item, region, "running", n).await {
            Outcome::Written(status) => status,
            other => panic!("the monitor's write: {other:?}"),
        }
    })
}

fn status_of(reply: &Reply, region: &str) -> String {
    canonical(&reply.get(&format!("region_status.{region}")))
}

#[test]
fn a_monitor_write_between_read_and_change_keeps_both() {
    let (db, rt) = (Dynalite::start(), runtime());
    let server = Server::dynamodb(&db.endpoint());
    let monitor = rt.block_on(Monitor::new(&db, "pd"));
    let read = tag(&deploy_split(&server, "pd"));

    let status = monitor_write(&rt, &monitor, "us-east-1", 2);
    let now = server.send("GET", "/api/endpoints/pd", "");
    assert_ne!(tag(&now), read, "a status write moves the whole tag");
    assert_eq!(
        content_half(&tag(&now)),
        content_half(&read),
        "and leaves what changes depend on"
    );

    let r = send(
        &server,
        "PUT",
        "/api/endpoints/pd/topology",
        r#"{"prefill": 3, "decode": 5}"#,
        &[("If-Match", &read)],
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.get("spec.mooncake.topology.prefill").to_json(), "3");
    assert_eq!(status_of(&r, "us-east-1"), canonical(&status));
    assert_ne!(content_half(&tag(&r)), content_half(&read));

    // The table holds both writes.
    let item = rt.block_on(monitor.read()).unwrap();
    let A::M(statuses) = &item["region_status"] else {
        panic!("{item:?}")
    };
    assert_eq!(
        statuses["us-east-1"].as_m().unwrap()["replicas_ready"],
        A::N("2".into())
    );
    // A status write after the change, then a change from the change's tag.
    let after = tag(&r);
    let second = monitor_write(&rt, &monitor, "eu-west-1", 4);
    let r = send(
        &server,
        "POST",
        "/api/endpoints/pd/stop",
        "",
        &[("If-Match", &after)],
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.str("desired_state"), "stopped");
    assert_eq!(status_of(&r, "us-east-1"), canonical(&status));
    assert_eq!(status_of(&r, "eu-west-1"), canonical(&second));
}

/// Changes by others between the read and the change: GCO's CLI scaling
/// (`SET spec.replicas`), another console page stopping the endpoint or
/// adding a region, the monitor promoting `deploying` to `running`. Each is
/// a 412 for the earlier tag, with a status write after it too, and the
/// other writer's change is kept.
#[test]
fn changes_by_others_are_still_412() {
    let (db, rt) = (Dynalite::start(), runtime());
    let server = Server::dynamodb(&db.endpoint());
    let monitor = rt.block_on(Monitor::new(&db, "plain"));
    let client = rt.block_on(db.client());
    let r = server.send(
        "POST",
        "/api/endpoints",
        r#"{"endpoint_name": "plain", "image": "img:1", "target_regions": ["us-east-1"]}"#,
    );
    assert_eq!(r.status, 201, "{r:?}");

    let update = |expression: &str, values: &[(&str, A)]| {
        rt.block_on(async {
            let mut call = client
                .update_item()
                .table_name(TABLE)
                .key("endpoint_name", A::S("plain".into()))
                .update_expression(expression);
            for (name, value) in values {
                call = call.expression_attribute_values(*name, value.clone());
            }
            call.send().await.expect("the other writer's update");
        })
    };
    let at = |s: &str| A::S(format!("2099-01-01T00:00:0{s}.000000+00:00"));
    type OtherWrite<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str, &'a str);
    let others: [OtherWrite; 4] = [
        (
            "GCO's CLI scales",
            Box::new(|| {
                update(
                    "SET spec.replicas = :r, updated_at = :u",
                    &[(":r", A::N("5".into())), (":u", at("1"))],
                )
            }),
            "spec.replicas",
            "5",
        ),
        (
            "the monitor promotes",
            Box::new(|| {
                update(
                    "SET desired_state = :s, updated_at = :u",
                    &[(":s", A::S("running".into())), (":u", at("2"))],
                )
            }),
            "desired_state",
            "\"running\"",
        ),
        (
            "another page adds a region",
            Box::new(|| {
                let r = server.send(
                    "POST",
                    "/api/endpoints/plain/regions",
                    r#"{"region": "eu-west-1"}"#,
                );
                assert_eq!(r.status, 200, "{r:?}");
            }),
            "target_regions",
            r#"["us-east-1", "eu-west-1"]"#,
        ),
        (
            "another page stops it",
            Box::new(|| {
                assert_eq!(
                    server.send("POST", "/api/endpoints/plain/stop", "").status,
                    200
                );
            }),
            "desired_state",
            "\"stopped\"",
        ),
    ];
    for (n, (who, write, field, kept)) in others.iter().enumerate() {
        let read = tag(&server.send("GET", "/api/endpoints/plain", ""));
        write();
        monitor_write(&rt, &monitor, "us-east-1", n as i64);
        let before = server.send("GET", "/api/endpoints/plain", "");
        let r = send(
            &server,
            "PUT",
            "/api/endpoints/plain/replicas",
            r#"{"replicas": 9}"#,
            &[("If-Match", &read)],
        );
        assert_eq!(
            (r.status, r.str("error")),
            (412, STALE.into()),
            "{who}: {r:?}"
        );
        let after = server.send("GET", "/api/endpoints/plain", "");
        assert_eq!(after.body, before.body, "{who}: the refused change wrote");
        assert_eq!(after.get(field).to_json(), *kept, "{who}");
    }
}

/// The open page's poll: 304 while nothing changed, a new tag and the body
/// once a monitor wrote, on the record and on the list (every page of it).
#[test]
fn conditional_reads_answer_304_until_anything_changes() {
    let (db, rt) = (Dynalite::start(), runtime());
    let server = Server::dynamodb(&db.endpoint());
    let monitor = rt.block_on(Monitor::new(&db, "pd"));
    deploy_split(&server, "pd");
    let routes = [
        "/api/endpoints/pd",
        "/api/endpoints",
        "/api/endpoints?limit=1",
    ];
    let tags: Vec<String> = routes
        .iter()
        .map(|path| tag(&server.send("GET", path, "")))
        .collect();
    assert_ne!(tags[1], tags[2], "another body, another tag");
    for (path, tag) in routes.iter().zip(&tags) {
        let weak = format!("W/{tag}");
        let listed = format!(r#""elsewhere", {tag}"#);
        for held in [tag.as_str(), &weak, &listed, "*"] {
            let r = send(&server, "GET", path, "", &[("If-None-Match", held)]);
            assert_eq!(r.status, 304, "{path} {held}: {r:?}");
            assert_eq!(r.body, "", "{path}");
            assert_eq!(r.header("etag"), Some(tag.as_str()), "{path}");
            assert_eq!(r.header("cache-control"), Some("no-store"), "{path}");
        }
        let r = send(
            &server,
            "GET",
            path,
            "",
            &[("If-None-Match", r#""elsewhere""#)],
        );
        assert_eq!(
            (r.status, tag.as_str()),
            (200, self::tag(&r).as_str()),
            "{path}"
        );
        // A header that is not ASCII lists no tag of ours: the full answer.
        let mixed = format!("{tag}, \"caf\u{e9}\"");
        let r = send(&server, "GET", path, "", &[("If-None-Match", &mixed)]);
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }

    let status = monitor_write(&rt, &monitor, "eu-west-1", 1);
    let written = std::time::Instant::now();
    for (path, old) in routes.iter().zip(&tags) {
        // Pages read the console's view of the table: a write made
        // elsewhere shows within one refresh interval (3 s), and until
        // then the answer is still 304.
        let r = loop {
            let r = send(&server, "GET", path, "", &[("If-None-Match", old)]);
            if r.status != 304 {
                break r;
            }
            assert!(
                written.elapsed() < std::time::Duration::from_secs(5),
                "{path}: the status write not shown after {:?}",
                written.elapsed()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(r.status, 200, "{path} after a status write: {r:?}");
        assert_ne!(&tag(&r), old, "{path}");
        let record = if *path == routes[0] {
            r.get("region_status.eu-west-1")
        } else {
            r.get("endpoints.0.region_status.eu-west-1")
        };
        assert_eq!(canonical(&record), canonical(&status), "{path}");
        let again = send(&server, "GET", path, "", &[("If-None-Match", &tag(&r))]);
        assert_eq!(again.status, 304, "{path}");
    }
    let r = send(
        &server,
        "GET",
        "/api/endpoints/ghost",
        "",
        &[("If-None-Match", "*")],
    );
    assert_eq!(r.status, 404, "{r:?}");
}

/// The embedded store answers conditional reads the same way.
#[test]
fn conditional_reads_on_the_embedded_store() {
    let data = TempDir::new("versions");
    let server = Server::embedded(data.path());
    deploy_split(&server, "pd");
    for path in ["/api/endpoints/pd", "/api/endpoints"] {
        let held = tag(&server.send("GET", path, ""));
        let r = send(&server, "GET", path, "", &[("If-None-Match", &held)]);
        assert_eq!(
            (r.status, r.header("etag")),
            (304, Some(held.as_str())),
            "{path}"
        );
        let r = send(
            &server,
            "PUT",
            "/api/endpoints/pd/image",
            &format!(r#"{{"image": "img:{}"}}"#, path.len()),
            &[],
        );
        assert_eq!(r.status, 200, "{r:?}");
        let r = send(&server, "GET", path, "", &[("If-None-Match", &held)]);
        assert_eq!(r.status, 200, "{path} after a change");
    }
}

/// An open page under a busy monitor (a status write every few ms, where
/// GCO's write every 15 s per region): every change sent with the tag of
/// the read before it lands, and the monitor's last status stays.
#[test]
fn a_busy_monitor_refuses_no_change() {
    let db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    deploy_split(&server, "pd");
    let monitor = Running::start(&db, "pd", Duration::from_millis(2));
    let mut moved = 0;
    for n in 1..=25 {
        let read = server.send("GET", "/api/endpoints/pd", "");
        // The user reads the page; the monitor keeps writing.
        std::thread::sleep(Duration::from_millis(15));
        let r = send(
            &server,
            "PUT",
            "/api/endpoints/pd/image",
            &format!(r#"{{"image": "img:{n}"}}"#),
            &[("If-Match", &tag(&read))],
        );
        assert_eq!(r.status, 200, "change {n}: {r:?}");
        assert_eq!(r.str("spec.image"), format!("img:{n}"));
        if read.get("region_status").to_json() != r.get("region_status").to_json() {
            moved += 1;
        }
    }
    let log = monitor.stop();
    // A status write falls between nearly every read and change; a machine
    // too loaded to run the monitor that often still shows most.
    assert!(
        moved >= 15,
        "the monitor wrote between read and change only {moved} times of 25"
    );
    let last = server.send("GET", "/api/endpoints/pd", "");
    assert_eq!(last.str("spec.image"), "img:25");
    log.assert_intact(&last.get("region_status"));
    eprintln!("monitor: {}", log.summary());
}

/// What a client saw and got.
struct PinnedChange {
    read: String,
    /// The status the client read with the tag.
    read_status: String,
    image: String,
    reply: Reply,
}

/// Clients at once, each reading and changing with `If-Match`, under a busy
/// monitor: each answer is a 200 or a 412, and the acknowledged changes form
/// one chain, each made to the content the one before it left (so none was
/// applied to content its client had not seen, and none was lost), while
/// the monitor's last status stays.
#[test]
fn pinned_changes_from_many_pages_under_a_monitor_lose_nothing() {
    let db = Dynalite::start();
    let server = Server::dynamodb(&db.endpoint());
    let deployed = tag(&deploy_split(&server, "pd"));
    let monitor = Running::start(&db, "pd", Duration::from_millis(3));
    let changes = Mutex::new(Vec::<PinnedChange>::new());
    std::thread::scope(|s| {
        for client in 0..4 {
            let (server, changes) = (&server, &changes);
            s.spawn(move || {
                for i in 0..15 {
                    let read = server.send("GET", "/api/endpoints/pd", "");
                    let read_status = canonical(&read.get("region_status"));
                    let read = tag(&read);
                    let image = format!("img:{client}-{i}");
                    let reply = send(
                        server,
                        "PUT",
                        "/api/endpoints/pd/image",
                        &format!(r#"{{"image": "{image}"}}"#),
                        &[("If-Match", &read)],
                    );
                    changes.lock().unwrap().push(PinnedChange {
                        read,
                        read_status,
                        image,
                        reply,
                    });
                }
            });
        }
    });
    let log = monitor.stop();
    let changes = changes.into_inner().unwrap();
    let mut acked: Vec<&PinnedChange> = Vec::new();
    for c in &changes {
        match c.reply.status {
            200 => acked.push(c),
            412 => assert_eq!(c.reply.str("error"), STALE),
            _ => panic!("{:?}", c.reply),
        }
    }
    let version = |c: &&PinnedChange| {
        let record = Record::from_value(&c.reply.json()).unwrap();
        parse_timestamp(&record.updated_at).unwrap()
    };
    acked.sort_by_key(version);
    let mut content = content_half(&deployed).to_owned();
    for c in &acked {
        assert_eq!(c.reply.str("spec.image"), c.image);
        assert_eq!(
            content_half(&c.read),
            content,
            "{} was applied to content its client had not read",
            c.image
        );
        content = content_half(&tag(&c.reply)).to_owned();
    }
    let last = server.send("GET", "/api/endpoints/pd", "");
    assert_eq!(
        content_half(&tag(&last)),
        content,
        "the last change is not the record"
    );
    log.assert_intact(&last.get("region_status"));
    // Not a vacuous run: changes landed, and status writes fell between
    // the read and the change of some.
    assert!(
        acked.len() >= 8,
        "only {} of 60 changes landed",
        acked.len()
    );
    let among_status_writes = acked
        .iter()
        .filter(|c| canonical(&c.reply.get("region_status")) != c.read_status)
        .count();
    assert!(
        among_status_writes >= 1,
        "no status write fell between a read and its change"
    );
    eprintln!(
        "{} of {} pinned changes acknowledged ({among_status_writes} after a status write), {} refused with 412; monitor: {}",
        acked.len(),
        changes.len(),
        changes.len() - acked.len(),
        log.summary()
    );
}
