//! The attacks of a hostile probe of sign-in, roles and history (issue 42),
//! each refused: foreign-scheme origins and odd `Host` ports, repeated
//! identity headers, labels a client invents for the metrics, metrics
//! without an identity, floods of unknown ALB key ids, names an identity
//! provider sends unproven, client-chosen request ids, and sign-outs that
//! must hold at every console and across restarts. (The open redirect
//! after sign-in is checked in `auth::oidc`'s unit tests and, in a
//! browser, in tests/e2e/oidc.test.cjs.) What the probe found holding is
//! tested where it was: forged ALB headers in `identity`, roles and
//! cross-site changes in `api_access`, bad input in `hostile`.

use axum::http::StatusCode;
use gco_console::auth::alb::AlbVerifier;
use gco_console::auth::roles::RolesMap;
use gco_console::auth::{Access, Authenticator};

use crate::common::alb::{ARN, KeyServer, alb_header, alb_token, claims, now};
use crate::common::app::{Api, TOKEN};
use crate::common::{self, oidc};

const DEPLOY: &str = r#"{"endpoint_name": "web", "image": "nginx:1"}"#;

fn alb_api(keys: &KeyServer) -> Api {
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    let roles = RolesMap::parse("default = \"operator\"").unwrap();
    Api::with_access(Access::on_loopback(Authenticator::Alb { verifier, roles }))
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
