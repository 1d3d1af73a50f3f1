//! Who may ask what, through the whole HTTP application on the embedded
//! store: tokens on mutations, other sites' pages, host names on loopback,
//! and the start-up checks that keep a non-loopback server from running
//! without a token.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use crate::common::TempDir;
use crate::common::app::{Api, TOKEN};
use gco_console::auth::tokens::Tokens;
use gco_console::auth::{Access, Authenticator};
use gco_spec::json::{Value, parse};
use http_body_util::BodyExt;

#[tokio::test]
async fn tokens_guard_every_request() {
    let api = Api::with_token(Some(TOKEN));
    let body = r#"{"endpoint_name": "web", "image": "x"}"#;
    let r = api.post("/api/endpoints", body).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.str("error"), "this request needs a valid bearer token");
    assert_eq!(r.headers["www-authenticate"], "Bearer");
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(body),
            &[("authorization", "Bearer wrong-token-0000000")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let bearer = format!("Bearer {TOKEN}");
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(body),
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        api.send("DELETE", "/api/endpoints/web", None, &[])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    // Reads need it too: the records hold env values.
    for (method, path) in [
        ("GET", "/api/endpoints/web"),
        ("GET", "/api/endpoints"),
        ("GET", "/api/me"),
        ("POST", "/api/validate"),
    ] {
        let r = api.send(method, path, Some(body), &[]).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method} {path}");
        let r = api
            .send(method, path, Some(body), &[("authorization", &bearer)])
            .await;
        assert_eq!(r.status, StatusCode::OK, "{method} {path}: {}", r.text);
    }
    let me = api
        .send("GET", "/api/me", None, &[("authorization", &bearer)])
        .await;
    assert_eq!(
        me.text,
        r#"{"name": "token", "roles": ["viewer", "operator", "admin"]}"#
    );
    // The deploy defaults are read before anyone signs in.
    assert_eq!(api.get("/api/config").await.status, StatusCode::OK);
    let lowercase = format!("bearer {TOKEN}");
    let r = api
        .send(
            "POST",
            "/api/endpoints/web/stop",
            None,
            &[("authorization", &lowercase)],
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "the scheme is case-insensitive: {}",
        r.text
    );
}

#[tokio::test]
async fn other_sites_pages_cannot_make_changes() {
    let api = Api::new();
    api.deploy_split("pd").await;
    // A plain HTML form on another site: no preflight, no JSON.
    let form = [
        ("origin", "http://evil.example"),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    for (method, path) in [
        ("POST", "/api/endpoints/pd/stop"),
        ("DELETE", "/api/endpoints/pd"),
        ("POST", "/api/endpoints"),
    ] {
        let r = api.send(method, path, Some("x=1"), &form).await;
        assert_eq!(
            r.status,
            StatusCode::FORBIDDEN,
            "{method} {path}: {}",
            r.text
        );
        assert_eq!(
            r.str("error"),
            "changes are refused from other sites' pages"
        );
    }
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[("sec-fetch-site", "cross-site")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        api.get("/api/endpoints/pd").await.str("desired_state"),
        "deploying"
    );
    // The console itself: same origin.
    let r = api
        .send(
            "POST",
            "/api/endpoints/pd/stop",
            None,
            &[
                ("origin", "http://127.0.0.1"),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn on_loopback_only_loopback_names_are_answered() {
    // DNS rebinding: another site's name made to resolve to 127.0.0.1. A
    // token does not stop it reading records, env values and all.
    for api in [Api::new(), Api::with_token(Some(TOKEN))] {
        for host in ["evil.example:8080", "10.1.2.3"] {
            let r = api
                .send("GET", "/api/endpoints", None, &[("host", host)])
                .await;
            assert_eq!(r.status, StatusCode::MISDIRECTED_REQUEST, "{host}");
            assert_eq!(
                r.str("error"),
                "this console answers to localhost, 127.0.0.1, [::1] only; list the name it is reached by in --allowed-hosts"
            );
        }
        let bearer = format!("Bearer {TOKEN}");
        for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080"] {
            let r = api
                .send(
                    "GET",
                    "/api/endpoints",
                    None,
                    &[("host", host), ("authorization", &bearer)],
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{host}");
        }
    }
    // Listening elsewhere: IP addresses and the listed names are answered,
    // other names (a rebinding page's) are not, and the token guards
    // changes.
    let api = Api::with_access(Access::for_listener(
        "0.0.0.0:8080".parse().unwrap(),
        Authenticator::Token(Tokens::shared(TOKEN)),
        vec!["console.example.com".into()],
    ));
    let bearer = format!("Bearer {TOKEN}");
    for host in ["console.example.com", "10.1.2.3:8080"] {
        let r = api
            .send("GET", "/api/endpoints", None, &[("host", host)])
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
        let r = api
            .send(
                "GET",
                "/api/endpoints",
                None,
                &[("host", host), ("authorization", &bearer)],
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let host = [("host", host)];
        let r = api
            .send("POST", "/api/endpoints/pd/stop", None, &host)
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    }
    let r = api
        .send(
            "GET",
            "/api/endpoints",
            None,
            &[("host", "evil.example:8080")],
        )
        .await;
    assert_eq!(
        (r.status, r.str("error")),
        (
            StatusCode::MISDIRECTED_REQUEST,
            "this console answers to localhost, 127.0.0.1, [::1], this machine's IP addresses, console.example.com only; list the name it is reached by in --allowed-hosts".to_owned()
        )
    );
    let api = Api::new();
    for (name, field, value) in [
        ("content-type", "Content-Type", "application/json"),
        ("authorization", "Authorization", "Bearer x"),
    ] {
        let r = api
            .send(
                "POST",
                "/api/validate",
                Some("{}"),
                &[(name, "text/plain"), (name, value)],
            )
            .await;
        assert_eq!(
            (r.status, r.first_error()),
            (
                StatusCode::BAD_REQUEST,
                (
                    field.to_owned(),
                    format!("a request has at most one {field} header")
                )
            )
        );
    }
    let two_hosts = [("host", "127.0.0.1"), ("host", "127.0.0.1")];
    let r = api.send("GET", "/healthz", None, &two_hosts).await;
    assert_eq!(
        (r.status, r.str("errors.0.path").as_str()),
        (StatusCode::BAD_REQUEST, "Host")
    );
    assert_eq!(
        r.str("errors.0.message"),
        "an HTTP/1.1 request needs exactly one Host header"
    );
    // HTTP/1.0 may leave Host out, but not give it twice.
    let old_two_hosts = Request::post("/api/endpoints/pd/stop")
        .version(axum::http::Version::HTTP_10)
        .header(header::HOST, "127.0.0.1")
        .header(header::HOST, "evil.example")
        .body(Body::empty())
        .unwrap();
    let response = api.app.clone().oneshot(old_two_hosts).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = parse(&String::from_utf8_lossy(&bytes)).unwrap();
    assert_eq!(
        (
            status,
            body.as_object().and_then(|o| o.get("error")).cloned()
        ),
        (
            StatusCode::BAD_REQUEST,
            Some(Value::str("a request has at most one Host header"))
        )
    );
    let r = api.get("//snippets").await;
    assert_eq!(
        (r.status, r.str("error").as_str()),
        (StatusCode::BAD_REQUEST, "the path is not valid")
    );
    // An authority-form target (CONNECT's), on the API and the console.
    for method in ["GET", "POST"] {
        let r = api.send(method, "localhost:80", None, &[]).await;
        assert_eq!(
            (r.status, r.str("error").as_str()),
            (
                StatusCode::BAD_REQUEST,
                "the request target must be a path (or an absolute URL)"
            ),
            "{method}"
        );
    }
    let r = api
        .send(
            "POST",
            "/api/validate",
            Some("{}"),
            &[("transfer-encoding", "gzip, chunked")],
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::BAD_REQUEST,
            "Transfer-Encoding".into(),
            "only the chunked transfer coding is supported".into()
        )
    );
}

#[tokio::test]
async fn non_loopback_needs_a_token() {
    use clap::Parser;
    let config = gco_console::config::Config::parse_from(["gco-console", "--addr", "0.0.0.0:8080"]);
    assert!(
        config
            .check()
            .await
            .unwrap_err()
            .starts_with("refusing to listen on 0.0.0.0:8080 with --auth none")
    );
    let dir = TempDir::new("token");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let token_file = token_file.to_str().unwrap();
    for (addr, any_address) in [("0.0.0.0:8080", true), ("127.0.0.1:8080", false)] {
        let access = gco_console::config::Config::parse_from([
            "gco-console",
            "--addr",
            addr,
            "--auth-token-file",
            token_file,
            "--allowed-hosts",
            "Console.example.com,.corp.example",
        ])
        .check()
        .await
        .unwrap();
        assert_eq!(access.mode(), gco_api::AuthMode::Token);
        assert_eq!(access.hosts.any_address, any_address, "{addr}");
        assert_eq!(
            &access.hosts.names[..],
            ["console.example.com", ".corp.example"]
        );
    }
    let config = gco_console::config::Config::parse_from([
        "gco-console",
        "--allowed-hosts",
        "console.example.com:8080",
    ]);
    assert!(
        config
            .check()
            .await
            .unwrap_err()
            .starts_with("--allowed-hosts: \"console.example.com:8080\" is not a host name")
    );
    let config =
        gco_console::config::Config::parse_from(["gco-console", "--regions", "us-east-1,mars"]);
    assert_eq!(
        config.check().await.unwrap_err(),
        "--regions: \"mars\" is not an AWS region such as us-east-1"
    );
}
