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

use crate::common::app::Api;

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
