//! The attacks of a hostile probe of sign-in, roles and history (issue 42),
//! each refused: foreign-scheme origins and odd `Host` ports, repeated
//! identity headers, labels a client invents for the metrics, metrics
//! without an identity, floods of unknown ALB key ids, names an identity
//! provider sends unproven, client-chosen request ids, and sign-outs that
//! must hold at every console and across restarts, and a sign-in's `next`
//! that a browser reads as another site (also followed in a browser in
//! tests/e2e/oidc.test.cjs). What the probe found holding is
//! tested where it was: forged ALB headers in `identity`, roles and
//! cross-site changes in `api_access`, bad input in `hostile`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use gco_console::auth::alb::AlbVerifier;
use gco_console::auth::alb_keys::MAX_FETCHES_PER_MINUTE;
use gco_console::auth::roles::RolesMap;
use gco_console::auth::tokens::Tokens;
use gco_console::auth::{Access, Authenticator};
use gco_console::store::SignOuts;

use crate::common::alb::{ARN, KeyServer, alb_header, alb_token, claims, now};
use crate::common::app::{Api, TOKEN};
use crate::common::{self, Server, TempDir, hex_sha256, oidc};

const DEPLOY: &str = r#"{"endpoint_name": "web", "image": "nginx:1"}"#;

fn alb_api(keys: &KeyServer) -> Api {
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    let roles = RolesMap::parse("default = \"operator\"").unwrap();
    Api::with_access(Access::on_loopback(Authenticator::Alb {
        verifier,
        roles,
        sign_out: Default::default(),
    }))
}

fn signed(keys: &KeyServer, claims: serde_json::Value) -> String {
    let exp = now() + 600;
    alb_token(&keys.key, alb_header(keys.kid, ARN, exp), claims)
}

#[tokio::test]
async fn a_host_whose_port_is_not_digits_is_misdirected() {
    let api = Api::new();
    for host in ["localhost:+8715", "127.0.0.1:+80", "localhost:0x50"] {
        let r = api
            .send("GET", "/api/endpoints", None, &[("host", host)])
            .await;
        assert_eq!(r.status, StatusCode::MISDIRECTED_REQUEST, "{host}");
    }
    let r = api
        .send("GET", "/api/endpoints", None, &[("host", "localhost:8715")])
        .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn two_load_balancer_headers_are_refused() {
    let keys = KeyServer::start().await;
    let api = alb_api(&keys);
    let token = signed(&keys, claims(now() + 600));
    let headers = [("x-amzn-oidc-data", token.as_str()); 2];
    let r = api.send("GET", "/api/me", None, &headers).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(
        r.first_error(),
        (
            "x-amzn-oidc-data".into(),
            "a request has at most one x-amzn-oidc-data header".into()
        )
    );
    // In a mode that reads no such header too.
    let r = Api::new().send("GET", "/api/me", None, &headers).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_page_of_another_scheme_is_another_site() {
    let bearer = format!("Bearer {TOKEN}");
    let api = Api::with_token(Some(TOKEN));
    // The probe's: an https page, on an http console.
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(DEPLOY),
            &[("authorization", &bearer), ("origin", "https://127.0.0.1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    // Behind the load balancer the console is reached by https.
    let keys = KeyServer::start().await;
    let alb = alb_api(&keys);
    let token = signed(&keys, claims(now() + 600));
    for (origin, status) in [
        ("http://127.0.0.1", StatusCode::FORBIDDEN),
        ("https://127.0.0.1", StatusCode::CREATED),
    ] {
        let headers = [("x-amzn-oidc-data", token.as_str()), ("origin", origin)];
        let r = alb
            .send("POST", "/api/endpoints", Some(DEPLOY), &headers)
            .await;
        assert_eq!(r.status, status, "{origin}: {}", r.text);
    }
}

#[tokio::test]
async fn metrics_labels_take_no_value_a_client_chose() {
    let api = Api::new();
    for i in 0..300 {
        let method = format!("PROBE{i}");
        let r = api.send(&method, "/healthz", None, &[]).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
        let r = api.send(&method, "/api/endpoints/web", None, &[]).await;
        assert!(r.status.is_client_error());
        api.get(&format!("/api/no-such-route-{i}")).await;
    }
    let metrics = api.get("/metrics").await.text;
    assert!(!metrics.contains("PROBE"), "an invented method is a label");
    assert!(!metrics.contains("no-such-route"), "a path is a label");
    assert!(!metrics.contains("{*rest}"), "a 404 has a route label");
    assert!(
        metrics.contains(r#"route="/healthz",method="other",status="405""#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"route="unmatched",method="GET",status="404""#));
}

#[tokio::test]
async fn metrics_need_an_identity_on_the_main_listener() {
    let file = format!(
        "[[token]]\nname = \"prometheus\"\nroles = [\"viewer\"]\nsha256 = \"{}\"\n",
        hex_sha256("scraper-token-0123456789")
    );
    let api = Api::with_access(Access::on_loopback(Authenticator::Token(
        Tokens::parse(&file).unwrap(),
    )));
    let r = api.get("/metrics").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    let r = api
        .send(
            "GET",
            "/metrics",
            None,
            &[("authorization", "Bearer scraper-token-0123456789")],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains("gco_http_requests_total"));
    let keys = KeyServer::start().await;
    assert_eq!(
        alb_api(&keys).get("/metrics").await.status,
        StatusCode::UNAUTHORIZED
    );
}

/// `--metrics-addr` serves them without one, on its own listener.
#[test]
fn the_metrics_listener_serves_them_without_an_identity() {
    let data = TempDir::new("metrics-token");
    let token_file = data.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let metrics_port = common::free_port();
    let addr = format!("127.0.0.1:{metrics_port}");
    let server = Server::embedded_with(
        data.path(),
        &[
            "--auth-token-file".as_ref(),
            token_file.as_os_str(),
            "--metrics-addr".as_ref(),
            addr.as_ref(),
        ],
    );
    common::wait_for_port(metrics_port);
    let r = common::request(metrics_port, "GET", "/metrics", "").unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    // The main listener has none, and tells so to none but a token's holder.
    assert_eq!(server.send("GET", "/metrics", "").status, 401);
    let with_token = format!(
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    let r = common::exchange(server.port, with_token.as_bytes()).unwrap();
    assert_eq!(r.status, 404);
}

/// A header naming key `kid`, signed by the right key (which the console
/// cannot know before it has fetched the key).
fn with_kid(keys: &KeyServer, kid: &str) -> String {
    let exp = now() + 600;
    alb_token(&keys.key, alb_header(kid, ARN, exp), claims(exp))
}

#[tokio::test]
async fn unknown_key_ids_cost_bounded_fetches() {
    let keys = KeyServer::start().await;
    let fetches = || keys.fetches.load(Ordering::SeqCst);
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    // 50 new kids: at most a minute's fetches.
    for i in 0..50 {
        let token = with_kid(&keys, &format!("5a1d0000-0000-4000-8000-{i:012}"));
        assert!(verifier.verify(&token, now()).await.is_err());
    }
    assert_eq!(fetches(), MAX_FETCHES_PER_MINUTE, "50 new kids");

    // One unknown kid, 30 times: fetched once, its failure remembered.
    let keys = KeyServer::start().await;
    let fetches = || keys.fetches.load(Ordering::SeqCst);
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    let token = with_kid(&keys, "0dd00000-0000-4000-8000-000000000001");
    for _ in 0..30 {
        assert!(verifier.verify(&token, now()).await.is_err());
    }
    assert_eq!(fetches(), 1, "one unknown kid 30 times");

    // 20 at once, of an unknown kid and of the real one: one fetch each.
    let verifier = Arc::new(AlbVerifier::new(
        ARN.into(),
        keys.url.clone(),
        "groups".into(),
    ));
    for (kid, valid) in [
        ("0dd00000-0000-4000-8000-000000000002", false),
        (keys.kid, true),
    ] {
        let before = fetches();
        let token = with_kid(&keys, kid);
        let mut all = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (verifier, token) = (Arc::clone(&verifier), token.clone());
            all.spawn(async move { verifier.verify(&token, now()).await.is_ok() });
        }
        while let Some(ok) = all.join_next().await {
            assert_eq!(ok.unwrap(), valid, "{kid}");
        }
        assert_eq!(fetches() - before, 1, "20 at once of {kid}");
    }
}

#[tokio::test]
async fn a_user_is_named_by_a_verified_email_only() {
    let keys = KeyServer::start().await;
    let api = alb_api(&keys);
    let exp = now() + 600;
    let iss = "https://idp.example.com";
    for (claims, name) in [
        (
            serde_json::json!({"sub": "0f3c", "email": "ada@example.com", "iss": iss, "exp": exp}),
            "https://idp.example.com#0f3c",
        ),
        (
            serde_json::json!({"sub": "77aa", "preferred_username": "ci-admin", "iss": iss, "exp": exp}),
            "https://idp.example.com#77aa",
        ),
        (
            serde_json::json!({"sub": "0f3c", "email": "ada@example.com", "email_verified": true, "iss": iss, "exp": exp}),
            "ada@example.com",
        ),
    ] {
        let token = signed(&keys, claims);
        let me = api
            .send("GET", "/api/me", None, &[("x-amzn-oidc-data", &token)])
            .await;
        assert_eq!(me.str("name"), name, "{}", me.text);
    }
    // A named token is `token:<name>` in the history, the shared one `token`.
    let file = format!(
        "[[token]]\nname = \"ci-admin\"\nroles = [\"admin\"]\nsha256 = \"{}\"\n",
        hex_sha256("ci-admin-secret-0123456789")
    );
    let tokens = Tokens::shared(TOKEN).with(Tokens::parse(&file).unwrap());
    let api = Api::with_access(Access::on_loopback(Authenticator::Token(tokens)));
    let named = [("authorization", "Bearer ci-admin-secret-0123456789")];
    let r = api
        .send("POST", "/api/endpoints", Some(DEPLOY), &named)
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let shared = format!("Bearer {TOKEN}");
    let r = api
        .send(
            "POST",
            "/api/endpoints/web/stop",
            None,
            &[("authorization", &shared)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let history = api
        .send("GET", "/api/endpoints/web/history", None, &named)
        .await;
    assert_eq!(history.str("items.0.who"), "token");
    assert_eq!(history.str("items.1.who"), "token:ci-admin");
}

#[tokio::test]
async fn a_clients_request_id_is_kept_beside_the_consoles_own() {
    let api = Api::new();
    // The probe's: another change's id, sent again.
    let sent = [("x-request-id", "req-00000003")];
    let r = api
        .send("POST", "/api/endpoints", Some(DEPLOY), &sent)
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let r = api
        .send("POST", "/api/endpoints/web/stop", None, &sent)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let ours = r.headers["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(r.headers["x-client-request-id"], "req-00000003");
    let history = api.get("/api/endpoints/web/history").await;
    assert_eq!(history.str("items.0.request_id"), ours);
    assert_ne!(
        history.str("items.0.request_id"),
        history.str("items.1.request_id")
    );
    for i in 0..2 {
        assert_eq!(
            history.str(&format!("items.{i}.client_request_id")),
            "req-00000003"
        );
    }
}

/// The store's list of sign-outs: kept, read back, the expired left out.
async fn keeps_sign_outs(store: &dyn SignOuts) {
    let now = now();
    store.sign_out("aa", now + 60).await.unwrap();
    store.sign_out("bb", now - 1).await.unwrap();
    store.sign_out("cc", now + 3600).await.unwrap();
    let mut kept = store.signed_out(now).await.unwrap();
    kept.sort();
    assert_eq!(
        kept,
        [("aa".to_owned(), now + 60), ("cc".to_owned(), now + 3600)]
    );
    assert_eq!(store.signed_out(now + 61).await.unwrap().len(), 1);
}

#[tokio::test]
async fn each_store_keeps_sign_outs() {
    let dir = TempDir::new("sign-outs");
    let embedded = gco_console::store::EmbeddedStore::open(dir.path()).unwrap();
    keeps_sign_outs(&embedded).await;
    drop(embedded);
    // Across a restart.
    let embedded = gco_console::store::EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(embedded.signed_out(now()).await.unwrap().len(), 2);

    // dynalite: no transactions, but puts and queries of the history table.
    let dynalite = common::Dynalite::start();
    let config = gco_console::store::DynamoConfig {
        table: common::monitor::TABLE.into(),
        region: "us-east-1".into(),
        endpoint: Some(dynalite.endpoint()),
        history_table: Some(common::HISTORY_TABLE.into()),
    };
    let store = gco_console::store::DynamoStore::connect(&config).await;
    store.create_table().await.unwrap();
    keeps_sign_outs(&store).await;

    let moto = common::Moto::start();
    keeps_sign_outs(&moto.store().await).await;
}

/// A console's `/api/me` with `cookie`: its status and error.
fn me(port: u16, cookie: &str) -> (u16, String) {
    let r = oidc::with_cookie(port, "GET", "/api/me", cookie);
    (r.status, r.str("error"))
}

/// Issue 43: a sign-out goes on to the provider's `end_session_endpoint`
/// when discovery names one (by a page that refreshes to it: the console's
/// CSP stops a form's redirect to another origin), else to the signed-out
/// page; either way the browser's next sign-in asks the provider to prompt
/// (`prompt=login`), and a sign-in without that mark asks nothing.
#[test]
fn a_sign_out_ends_at_the_provider_and_the_next_sign_in_prompts() {
    let dir = TempDir::new("sign-out-provider");
    let key = oidc::session_key_file(dir.path());
    let header = |r: &common::Reply, name: &str| -> Vec<String> {
        r.head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
            .collect()
    };
    for end_session in [true, false] {
        let provider = oidc::Provider::start_with(end_session);
        let data = dir.path().join(format!("store-{end_session}"));
        let data = data.to_str().unwrap();
        let console = oidc::console(&provider.issuer, &key, &["--data-dir", data]);
        let cookie = oidc::session_cookie("ada@example.com");
        let out = oidc::with_cookie(console.port, "POST", "/auth/sign-out", &cookie);
        let cookies = header(&out, "set-cookie");
        assert!(
            cookies.iter().any(|c| c.starts_with("gco_session=;")),
            "{cookies:?}"
        );
        assert!(
            cookies
                .iter()
                .any(|c| c.starts_with("gco_signed_out=1;") && c.contains("Path=/auth")),
            "{cookies:?}"
        );
        if end_session {
            assert_eq!(out.status, 200, "{}", out.head);
            let to = format!(
                "{}/logout?client_id=gco-console&amp;post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%2Fauth%2Fsigned-out",
                provider.issuer
            );
            assert!(
                out.body.contains(&format!(
                    "<meta http-equiv=\"refresh\" content=\"0; url={to}\">"
                )),
                "{}",
                out.body
            );
        } else {
            assert_eq!(out.status, 303, "{}", out.head);
            assert_eq!(header(&out, "location"), ["/auth/signed-out"]);
        }
        let sign_in = |cookie: &str| {
            let r = oidc::with_cookie(console.port, "GET", "/auth/sign-in?next=%2F", cookie);
            assert_eq!(r.status, 303, "{}", r.head);
            header(&r, "location").join("")
        };
        assert!(sign_in("gco_signed_out=1").contains("&prompt=login"));
        assert!(!sign_in("other=1").contains("prompt="));
    }
}

#[test]
fn a_sign_out_holds_at_every_console_sharing_the_key() {
    let provider = oidc::Provider::start();
    let dir = TempDir::new("two-consoles");
    let key = oidc::session_key_file(dir.path());
    let moto = common::Moto::start();
    let endpoint = moto.endpoint();
    let store = ["--dynamodb-endpoint", &endpoint, "--create-table"];
    let console = || oidc::console(&provider.issuer, &key, &store);
    let (mut first, second) = (console(), console());
    let cookie = oidc::session_cookie("ada@example.com");
    for server in [&first, &second] {
        assert_eq!(me(server.port, &cookie).0, 200, "{}", server.log());
    }
    let out = oidc::with_cookie(first.port, "POST", "/auth/sign-out", &cookie);
    assert_eq!(out.status, 303, "{}", out.body);
    let signed_out = (401, "you signed out; sign in again".to_owned());
    assert_eq!(
        me(first.port, &cookie),
        signed_out,
        "at once where it was made"
    );
    let started = Instant::now();
    let seen = common::eventually(Duration::from_secs(10), || {
        me(second.port, &cookie) == signed_out
    });
    let took = started.elapsed();
    eprintln!("a sign-out reached the second console in {took:?}");
    assert!(seen, "the second console still takes the session");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // A restarted console knows it at once.
    first.kill();
    let third = console();
    assert_eq!(me(third.port, &cookie), signed_out);
    // Another session of the same user is not signed out.
    let other = oidc::session_cookie("ada@example.com");
    assert_eq!(me(third.port, &other).0, 200);
}

/// A console that cannot read the list of sign-outs lets no session in on
/// an old copy of it, and one that cannot write a sign-out says so.
#[test]
fn without_its_store_a_console_neither_trusts_nor_fakes_sign_outs() {
    let provider = oidc::Provider::start();
    let dir = TempDir::new("sign-outs-unreachable");
    let key = oidc::session_key_file(dir.path());
    let moto = common::Moto::start();
    let endpoint = moto.endpoint();
    let server = oidc::console(
        &provider.issuer,
        &key,
        &["--dynamodb-endpoint", &endpoint, "--create-table"],
    );
    let cookie = oidc::session_cookie("ada@example.com");
    assert_eq!(me(server.port, &cookie).0, 200, "{}", server.log());
    drop(moto);
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(
        me(server.port, &cookie),
        (
            503,
            "the console cannot check its sign-outs right now; try again in a moment".to_owned()
        )
    );
    let out = oidc::with_cookie(server.port, "POST", "/auth/sign-out", &cookie);
    assert_eq!(out.status, 503, "{}", out.body);
    assert!(
        out.body.contains("could not record the sign-out"),
        "{}",
        out.body
    );
    assert!(
        !out.head.to_ascii_lowercase().contains("set-cookie"),
        "{}",
        out.head
    );
}

#[test]
fn a_sign_out_outlasts_a_restart_on_the_embedded_store() {
    let provider = oidc::Provider::start();
    let dir = TempDir::new("sign-out-restart");
    let key = oidc::session_key_file(dir.path());
    let data = dir.path().join("data");
    let store = ["--data-dir", data.to_str().unwrap()];
    let console = || oidc::console(&provider.issuer, &key, &store);
    let mut server = console();
    let cookie = oidc::session_cookie("ada@example.com");
    assert_eq!(me(server.port, &cookie).0, 200, "{}", server.log());
    let out = oidc::with_cookie(server.port, "POST", "/auth/sign-out", &cookie);
    assert_eq!(out.status, 303);
    server.terminate();
    let server = console();
    assert_eq!(
        me(server.port, &cookie),
        (401, "you signed out; sign in again".to_owned())
    );
}

/// With nowhere to keep sign-outs, sessions that outlive the process (a
/// shared key) are refused at start-up.
#[test]
fn shared_sessions_need_a_place_for_sign_outs() {
    let provider = oidc::Provider::start();
    let dir = TempDir::new("sign-outs-nowhere");
    let key = oidc::session_key_file(dir.path());
    let dynalite = common::Dynalite::start();
    let mut args: Vec<std::ffi::OsString> = vec![
        "--addr".into(),
        format!("127.0.0.1:{}", common::free_port()).into(),
        "--dynamodb-endpoint".into(),
        dynalite.endpoint().into(),
        "--create-table".into(),
        "--history-table".into(),
        "off".into(),
    ];
    args.extend(oidc::flags(&provider.issuer, &key));
    let log = dir.path().join("log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gco-console"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let exited = common::eventually(Duration::from_secs(20), || {
        child.try_wait().unwrap().is_some()
    });
    let _ = child.kill();
    assert!(exited, "it started");
    assert!(!child.wait().unwrap().success());
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains("--auth oidc with --session-key-file keeps sign-outs in the history table"),
        "{stderr}"
    );
}

/// The probe's open redirect: `next=/%09/evil.example/steal` came back as
/// `Location: /\t/evil.example/steal`, which a browser reads as
/// `//evil.example/steal`.
#[test]
fn a_sign_in_comes_back_to_a_console_page_only() {
    let provider = oidc::Provider::start();
    let dir = TempDir::new("sign-in-next");
    let key = oidc::session_key_file(dir.path());
    let data = dir.path().join("data");
    let server = oidc::console(
        &provider.issuer,
        &key,
        &["--data-dir", data.to_str().unwrap()],
    );
    for refused in [
        "/%09/evil.example/steal",
        "/%09%09/evil.example/steal",
        "/%0d/evil.example",
        "/%0a/evil.example",
        "/%0d%0a/evil.example",
        "/%5cevil.example",
        "%5c/evil.example",
        "/%5c/evil.example",
        "%2f%2fevil.example",
        "/%20/evil.example",
        "https://evil.example/",
        "http://127.0.0.1/",
    ] {
        assert_eq!(
            oidc::next_of_sign_in(server.port, refused),
            "/",
            "{refused}"
        );
    }
    for (kept, next) in [
        (
            "%2Fendpoints%2Fweb%3Ftab%3Dhistory",
            "/endpoints/web?tab=history",
        ),
        // Encoded twice: a path with `%09` in it, on the console.
        ("/%2509/evil.example", "/%09/evil.example"),
        ("/a/../endpoints", "/endpoints"),
    ] {
        assert_eq!(oidc::next_of_sign_in(server.port, kept), next, "{kept}");
    }
}
