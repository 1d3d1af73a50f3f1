//! A hostile-request corpus against the real binary over real HTTP:
//! malformed and truncated JSON, deep nesting, huge bodies, invalid UTF-8,
//! wrong content types, huge numbers, path traversal, overlong names and
//! headers, odd methods. Every answer is a 4xx with the API's error shape
//! (never a 5xx), nothing leaks, and the server stays up throughout.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{Reply, Server, TempDir, exchange};

/// A deploy request every truncation of which is invalid.
const DEPLOY: &str = r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4, "labels": {"team": "ml"}}"#;

/// What must never appear in an answer: the file outside the console
/// directory, and internals.
const SECRET: &str = "top-secret-outside-dist";

/// A request as raw bytes: HTTP/1.1, closing after the answer.
fn raw(method: &str, path: &[u8], headers: &[(&str, &[u8])], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path);
    out.extend_from_slice(b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

fn json(method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    raw(
        method,
        path.as_bytes(),
        &[("Content-Type", b"application/json")],
        body,
    )
}

/// A body sent chunked, so no length is declared up front.
fn chunked(method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(64 * 1024) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// Requests the application answers: each must get a 4xx with the error shape.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| cases.push((name.to_owned(), bytes));

    // Malformed JSON, on every route that reads a body.
    let malformed: [&[u8]; 16] = [
        b"",
        b"{",
        b"}",
        b"{\"a\" 1}",
        b"{\"a\": }",
        b"[1,]",
        b"{'a': 1}",
        b"nul",
        b"\"\\u12\"",
        b"{\"a\": 1} trailing",
        b"\0",
        b"\xef\xbb\xbf{}",
        b"{\"a\": \"unterminated",
        b"{\"a\": 01}",
        b"{\"a\": -}",
        b"{\"a\": 1e}",
    ];
    let routes = [
        ("POST", "/api/endpoints"),
        ("POST", "/api/validate"),
        ("PUT", "/api/endpoints/pd/topology"),
        ("PUT", "/api/endpoints/pd/store"),
        ("PUT", "/api/endpoints/pd/image"),
        ("PUT", "/api/endpoints/pd/replicas"),
        ("POST", "/api/endpoints/pd/regions"),
    ];
    for (method, path) in routes {
        for body in malformed {
            add(
                &format!(
                    "malformed {method} {path} {}",
                    String::from_utf8_lossy(body)
                ),
                json(method, path, body),
            );
        }
    }
    // Every truncation of a valid request.
    for end in 0..DEPLOY.len() {
        add(
            &format!("truncated at {end}"),
            json("POST", "/api/endpoints", &DEPLOY.as_bytes()[..end]),
        );
    }

    // Nesting 10,000 deep: closed, unclosed, and inside a valid request.
    let deep_list = "[".repeat(10_000) + &"]".repeat(10_000);
    let deep_object = r#"{"a": "#.repeat(10_000) + "1" + &"}".repeat(10_000);
    add(
        "10,000 nested lists",
        json("POST", "/api/validate", deep_list.as_bytes()),
    );
    add(
        "10,000 nested objects",
        json("POST", "/api/endpoints", deep_object.as_bytes()),
    );
    add(
        "10,000 unclosed lists",
        json("POST", "/api/endpoints", "[".repeat(10_000).as_bytes()),
    );
    let nested_labels =
        format!(r#"{{"endpoint_name": "deep", "image": "x", "labels": {deep_object}}}"#);
    add(
        "nested labels",
        json("POST", "/api/endpoints", nested_labels.as_bytes()),
    );

    // 10 MB bodies: declared, and chunked with no length, on JSON routes
    // and on routes that read no body.
    let ten_mb = format!(
        r#"{{"endpoint_name": "big", "image": "{}"}}"#,
        "a".repeat(10 << 20)
    )
    .into_bytes();
    add("10 MB declared", json("POST", "/api/endpoints", &ten_mb));
    add("10 MB chunked", chunked("POST", "/api/endpoints", &ten_mb));
    // Another site's page: a plain form post, and a rebound DNS name.
    add(
        "cross-site form stop",
        raw(
            "POST",
            b"/api/endpoints/pd/stop",
            &[
                ("Origin", b"http://evil.example"),
                ("Content-Type", b"application/x-www-form-urlencoded"),
            ],
            b"x=1",
        ),
    );
    add(
        "rebound host",
        b"GET /api/endpoints HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n"
            .to_vec(),
    );
    add(
        "second host",
        raw("GET", b"/healthz", &[("Host", b"localhost")], b""),
    );
    add("double slash redirect", raw("GET", b"//snippets", &[], b""));
    add(
        "gzip then chunked",
        raw(
            "POST",
            b"/api/validate",
            &[
                ("Content-Type", b"application/json"),
                ("Transfer-Encoding", b"gzip, chunked"),
            ],
            b"2\r\n{}\r\n0\r\n\r\n",
        ),
    );
    add(
        "10 MB chunked topology",
        chunked("PUT", "/api/endpoints/pd/topology", &ten_mb),
    );
    add(
        "10 MB declared to stop",
        json("POST", "/api/endpoints/pd/stop", &ten_mb),
    );
    add("10 MB declared to a page", raw("GET", b"/", &[], &ten_mb));

    // Invalid UTF-8: in the body, the path and header values.
    for body in [
        &b"{\"endpoint_name\": \"\xff\"}"[..],
        b"{\"image\": \"\xc0\xaf\"}",
        b"\"\xed\xa0\x80\"",
        b"\xfe\xff",
    ] {
        add(
            &format!("invalid UTF-8 body {body:?}"),
            json("POST", "/api/endpoints", body),
        );
    }
    add(
        "invalid UTF-8 in a name",
        json("GET", "/api/endpoints/%ff%fe", b""),
    );
    add(
        "invalid UTF-8 in a region",
        json("DELETE", "/api/endpoints/pd/regions/%c0%af", b""),
    );
    add(
        "invalid UTF-8 in a query",
        json("GET", "/api/endpoints?desired_state=%ff", b""),
    );
    let if_match: &[u8] = b"\"\xff\"";
    add(
        "invalid UTF-8 If-Match",
        raw(
            "POST",
            b"/api/endpoints/pd/stop",
            &[("If-Match", if_match)],
            b"",
        ),
    );

    // Wrong content types.
    for content_type in [
        &b"text/plain"[..],
        b"application/xml",
        b"multipart/form-data; boundary=x",
        b"application/json-seq",
        b"json",
        b"application/\xffjson",
    ] {
        let name = format!("content type {}", String::from_utf8_lossy(content_type));
        add(
            &name,
            raw(
                "POST",
                b"/api/endpoints",
                &[("Content-Type", content_type)],
                DEPLOY.as_bytes(),
            ),
        );
    }
    add(
        "no content type",
        raw("POST", b"/api/endpoints", &[], DEPLOY.as_bytes()),
    );

    // Huge numbers, where the rules read integers.
    let googol_digits = "9".repeat(100_000);
    for number in [
        "1e999999",
        "-1e999999",
        "1e-999999",
        &googol_digits,
        "NaN",
        "Infinity",
        "-0",
        "1.0",
        "1e3",
    ] {
        let topology = format!(r#"{{"prefill": {number}, "decode": {number}}}"#);
        add(
            &format!("topology {:.20}", number),
            json("PUT", "/api/endpoints/pd/topology", topology.as_bytes()),
        );
        let deploy = format!(
            r#"{{"endpoint_name": "n", "image": "x", "port": {number}, "replicas": {number}}}"#
        );
        add(
            &format!("deploy {:.20}", number),
            json("POST", "/api/endpoints", deploy.as_bytes()),
        );
    }

    // Path traversal into and out of the console's files.
    for path in [
        &b"/../secret.txt"[..],
        b"/../../../../etc/passwd",
        b"/%2e%2e/secret.txt",
        b"/%2e%2e%2fsecret.txt",
        b"/assets/..%2f..%2fsecret.txt",
        b"/..%5csecret.txt",
        b"/%2E%2E/%2E%2E/etc/passwd",
        b"/api/../secret.txt",
        b"/x/%00/y",
    ] {
        add(
            &format!("traversal {}", String::from_utf8_lossy(path)),
            raw("GET", path, &[], b""),
        );
    }

    // Overlong names and headers, odd methods.
    let long = "a".repeat(60_000);
    add(
        "overlong name in a body",
        json(
            "POST",
            "/api/endpoints",
            format!(r#"{{"endpoint_name": "{long}", "image": "x"}}"#).as_bytes(),
        ),
    );
    add(
        "overlong name in a path",
        json("GET", &format!("/api/endpoints/{long}"), b""),
    );
    add(
        "overlong region",
        json(
            "POST",
            "/api/endpoints/pd/regions",
            format!(r#"{{"region": "{long}"}}"#).as_bytes(),
        ),
    );
    add(
        "overlong region in a path",
        json("DELETE", &format!("/api/endpoints/pd/regions/{long}"), b""),
    );
    add(
        "overlong header",
        raw(
            "GET",
            b"/api/endpoints",
            &[("X-Junk", long.as_bytes())],
            b"",
        ),
    );
    add(
        "overlong If-Match",
        raw(
            "POST",
            b"/api/endpoints/pd/stop",
            &[("If-Match", long.as_bytes())],
            b"",
        ),
    );
    add(
        "PATCH an API route",
        json("PATCH", "/api/endpoints", DEPLOY.as_bytes()),
    );
    add("BREW an API route", json("BREW", "/api/endpoints/pd", b""));
    add("GET a POST route", json("GET", "/api/validate", b""));
    add("POST a page", json("POST", "/", DEPLOY.as_bytes()));
    add(
        "HTTP/1.0 with two Host headers",
        b"POST /api/endpoints/pd/stop HTTP/1.0\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nContent-Length: 0\r\n\r\n".to_vec(),
    );
    // Authority-form targets (CONNECT's): no path for any route.
    for method in ["GET", "POST", "DELETE"] {
        add(
            &format!("{method} to an authority-form target"),
            raw(method, b"localhost:80", &[], b""),
        );
    }
    for host in ["localhost:evil.example", "127.0.0.1:80@evil.example"] {
        add(
            &format!("Host {host}"),
            format!("GET /api/endpoints HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .into_bytes(),
        );
    }
    cases
}

/// Requests hyper refuses before the application sees them (not HTTP, or a
/// head beyond its buffers): a bare 4xx, and the server stays up.
fn unparseable() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec()),
        ("raw 0xff in the path", raw("GET", b"/api/endpoints/\xff", &[], b"")),
        ("space in the path", raw("GET", b"/api/end points", &[], b"")),
        ("1 MB header", raw("GET", b"/", &[("X-Junk", "a".repeat(1 << 20).as_bytes())], b"")),
        ("200 headers", {
            let names: Vec<String> = (0..200).map(|i| format!("X-H{i}")).collect();
            let headers: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"v"[..])).collect();
            raw("GET", b"/", &headers, b"")
        }),
        ("length and chunked", b"POST /api/endpoints HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n0\r\n\r\n".to_vec()),
        ("bad length", b"POST /api/endpoints HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".to_vec()),
        ("100 KB URI", raw("GET", format!("/api/endpoints/{}", "a".repeat(100_000)).as_bytes(), &[], b"")),
    ]
}

fn console_with_a_secret_next_to_it() -> (TempDir, std::path::PathBuf) {
    let root = TempDir::new("hostile-root");
    let dist = root.path().join("dist");
    std::fs::create_dir_all(dist.join("assets")).unwrap();
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><title>GCO console</title>",
    )
    .unwrap();
    std::fs::write(root.path().join("secret.txt"), SECRET).unwrap();
    (root, dist)
}

/// The start of a reply, for failure messages (bodies can be megabytes).
fn brief(reply: &Reply) -> String {
    format!("{} {:.300}", reply.status, reply.body)
}

fn assert_harmless(name: &str, reply: &Reply) {
    assert!(
        !reply.body.contains(SECRET) && !reply.body.contains("root:x:0"),
        "{name} escaped: {}",
        brief(reply)
    );
    for internal in ["redb", "panicked", "/tmp/", "backtrace"] {
        assert!(
            !reply.body.contains(internal),
            "{name} leaks {internal:?}: {}",
            brief(reply)
        );
    }
}

#[test]
fn hostile_requests_get_4xx_with_the_error_shape_and_the_server_stays_up() {
    let data = TempDir::new("hostile");
    let (_root, dist) = console_with_a_secret_next_to_it();
    let server = Server::embedded_with_dist(data.path(), &dist);
    survives_the_corpus(server, None);
}

/// The corpus again as a signed-in user (the load balancer's verified
/// header, with a role that reaches every route): past the identity
/// check, every request still meets the same refusals.
#[test]
fn hostile_requests_from_a_signed_in_user_are_refused_alike() {
    let keys = common::alb::KeyServer::start_on_own_thread();
    let exp = common::alb::now() + 3600;
    let header = common::alb::alb_token(
        &keys.key,
        common::alb::alb_header(keys.kid, common::alb::ARN, exp),
        common::alb::claims(exp),
    );
    let data = TempDir::new("hostile-signed-in");
    let (_root, dist) = console_with_a_secret_next_to_it();
    let server = Server::with_args(&[
        "--data-dir".as_ref(),
        data.path().as_os_str(),
        "--dist".as_ref(),
        dist.as_os_str(),
        "--auth".as_ref(),
        "alb".as_ref(),
        "--alb-arn".as_ref(),
        common::alb::ARN.as_ref(),
        "--alb-public-keys".as_ref(),
        keys.url.as_ref(),
        "--roles".as_ref(),
        "default = \"admin\"".as_ref(),
    ]);
    survives_the_corpus(server, Some(&header));
}

/// `request` with `x-amzn-oidc-data: <identity>` after its request line.
fn signed_in(request: &[u8], identity: Option<&str>) -> Vec<u8> {
    let Some(identity) = identity else {
        return request.to_vec();
    };
    let line_end = request
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(request.len(), |at| at + 2);
    let mut out = request[..line_end].to_vec();
    out.extend_from_slice(format!("X-Amzn-Oidc-Data: {identity}\r\n").as_bytes());
    out.extend_from_slice(&request[line_end..]);
    out
}

fn survives_the_corpus(mut server: Server, identity: Option<&str>) {
    let port = server.port;
    let send = |method: &str, path: &str, body: &str| {
        exchange(
            port,
            &signed_in(&json(method, path, body.as_bytes()), identity),
        )
        .unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"))
    };
    let deployed = send("POST", "/api/endpoints", DEPLOY);
    assert_eq!(deployed.status, 201, "{deployed:?}");

    let started = Instant::now();
    let cases = corpus();
    for (name, bytes) in &cases {
        let sent = Instant::now();
        let reply = exchange(server.port, &signed_in(bytes, identity))
            .unwrap_or_else(|e| panic!("{name}: no answer: {e}"));
        assert!(
            (400..500).contains(&reply.status),
            "{name}: {}",
            brief(&reply)
        );
        reply.assert_error_shape();
        assert_harmless(name, &reply);
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{name} took {:?}",
            sent.elapsed()
        );
    }
    for (name, bytes) in unparseable() {
        let reply = exchange(server.port, &signed_in(&bytes, identity))
            .unwrap_or_else(|e| panic!("{name}: no answer: {e}"));
        assert!(
            (400..500).contains(&reply.status),
            "{name}: {}",
            brief(&reply)
        );
        assert_harmless(name, &reply);
    }
    eprintln!(
        "{} hostile requests in {:?}",
        cases.len(),
        started.elapsed()
    );

    assert!(server.is_running(), "the server died");
    assert_eq!(send("GET", "/healthz", "").status, 200);
    let after = send("GET", "/api/endpoints/pd", "");
    assert_eq!(
        after.body, deployed.body,
        "a hostile request changed the endpoint"
    );
    let list = send("GET", "/api/endpoints", "");
    assert_eq!(
        list.get("endpoints")
            .to_json()
            .matches("endpoint_name")
            .count(),
        1,
        "a hostile deploy was stored: {list:?}"
    );
    assert!(!server.log().contains("panicked"), "{}", server.log());
}
