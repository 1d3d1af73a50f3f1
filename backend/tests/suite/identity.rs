//! Who is asking, through the whole application: named tokens and their
//! roles, and the load balancer's signed header verified against keys a
//! real HTTP server hands out, as the ALB's endpoint does. Forged
//! identities get 401 and write nothing.

use std::sync::atomic::Ordering;

use crate::common::alb::{ARN, KeyServer, alb_header, alb_token, claims, now};
use crate::common::app::Api;
use crate::common::hex_sha256;
use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use gco_console::auth::alb::AlbVerifier;
use gco_console::auth::roles::RolesMap;
use gco_console::auth::tokens::Tokens;
use gco_console::auth::{Access, Authenticator};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};

const DEPLOY: &str = r#"{"endpoint_name": "web", "image": "nginx:1"}"#;

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test]
async fn each_named_token_does_what_its_roles_allow() {
    let file = ["viewer", "operator", "admin"]
        .iter()
        .map(|role| {
            format!(
                "[[token]]\nname = \"{role}-bot\"\nroles = [\"{role}\"]\nsha256 = \"{}\"\n",
                hex_sha256(&format!("{role}-secret-0123456789"))
            )
        })
        .collect::<String>();
    let tokens = Tokens::parse(&file).unwrap();
    let api = Api::with_access(Access::on_loopback(Authenticator::Token(tokens)));
    let as_ = |role: &str| bearer(&format!("{role}-secret-0123456789"));
    let (viewer, operator, admin) = (as_("viewer"), as_("operator"), as_("admin"));

    let me = api
        .send("GET", "/api/me", None, &[("authorization", &viewer)])
        .await;
    assert_eq!(
        me.text,
        r#"{"name": "token:viewer-bot", "roles": ["viewer"]}"#
    );

    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(DEPLOY),
            &[("authorization", &viewer)],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.str("error"),
        "deploying an endpoint needs the operator role; token:viewer-bot has the viewer role"
    );
    let r = api
        .send(
            "POST",
            "/api/validate",
            Some(DEPLOY),
            &[("authorization", &viewer)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "a viewer validates");
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(DEPLOY),
            &[("authorization", &operator)],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = api
        .send(
            "DELETE",
            "/api/endpoints/web",
            None,
            &[("authorization", &operator)],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.str("error"),
        "deleting an endpoint needs the admin role; token:operator-bot has the operator role"
    );
    let r = api
        .send(
            "GET",
            "/api/endpoints/web",
            None,
            &[("authorization", &viewer)],
        )
        .await;
    assert_eq!(
        r.str("desired_state"),
        "deploying",
        "the delete was refused"
    );
    // Each change is refused in the words of its row of the table of
    // changes, by the one role check; a method the path does not serve is
    // judged by its method.
    for (method, path, body, refusal) in [
        (
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 2}"#),
            "scaling an endpoint needs the operator role; token:viewer-bot has the viewer role",
        ),
        (
            "DELETE",
            "/api/endpoints/web/regions/us-east-1",
            None,
            "removing a region from an endpoint needs the operator role; token:viewer-bot has the viewer role",
        ),
        (
            "PUT",
            "/api/endpoints/web",
            None,
            "changing endpoints needs the operator role; token:viewer-bot has the viewer role",
        ),
    ] {
        let r = api
            .send(method, path, body, &[("authorization", &viewer)])
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{method} {path}");
        assert_eq!(r.str("error"), refusal, "{method} {path}");
    }
    let r = api
        .send(
            "DELETE",
            "/api/endpoints/web",
            None,
            &[("authorization", &admin)],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

async fn alb_api(keys: &KeyServer) -> Api {
    let roles =
        RolesMap::parse("default = \"viewer\"\n[groups]\nml-oncall = \"operator\"\n").unwrap();
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    Api::with_access(Access::on_loopback(Authenticator::Alb {
        verifier,
        roles,
        sign_out: Default::default(),
    }))
}

#[tokio::test]
async fn the_load_balancers_signed_header_is_the_identity() {
    let keys = KeyServer::start().await;
    let api = alb_api(&keys).await;
    let exp = now() + 60;
    let token = alb_token(&keys.key, alb_header(keys.kid, ARN, exp), claims(exp));
    assert!(token.contains('='), "the ALB pads: {token}");
    let header = [("x-amzn-oidc-data", token.as_str())];
    let me = api.send("GET", "/api/me", None, &header).await;
    assert_eq!(
        me.text,
        r#"{"name": "ada@example.com", "roles": ["operator"]}"#
    );
    let r = api
        .send("POST", "/api/endpoints", Some(DEPLOY), &header)
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    for _ in 0..5 {
        api.send("GET", "/api/endpoints", None, &header).await;
    }
    assert_eq!(
        keys.fetches.load(Ordering::SeqCst),
        1,
        "each key is fetched once"
    );

    // Without an email, the subject qualified by the issuer (the header's);
    // without a mapped group, the default.
    let plain = serde_json::json!({"sub": "0f3c", "exp": exp});
    let token = alb_token(&keys.key, alb_header(keys.kid, ARN, exp), plain);
    let me = api
        .send("GET", "/api/me", None, &[("x-amzn-oidc-data", &token)])
        .await;
    assert_eq!(
        me.text,
        r#"{"name": "https://idp.example.com#0f3c", "roles": ["viewer"]}"#
    );
}

/// Issue 43: Sign out behind the load balancer expires every shard of its
/// session cookie; without --alb-logout-url it says that the IdP's session
/// stays, with it it goes on there. From another site's page, nothing.
#[tokio::test]
async fn sign_out_behind_the_alb_expires_its_session_cookies() {
    let keys = KeyServer::start().await;
    for logout_url in [None, Some("https://idp.example.com/logout?client_id=gco")] {
        let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
        let api = Api::with_access(Access::on_loopback(Authenticator::Alb {
            verifier,
            roles: RolesMap::default(),
            sign_out: std::sync::Arc::new(gco_console::auth::alb_sign_out::AlbSignOut {
                logout_url: logout_url.map(str::to_owned),
            }),
        }));
        let from_page = [
            ("sec-fetch-site", "same-origin"),
            (
                "cookie",
                "AWSELBAuthSessionCookie-0=a; AWSELBAuthSessionCookie-5=b",
            ),
        ];
        let r = api.send("POST", "/auth/sign-out", None, &from_page).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let mut expired: Vec<String> = r
            .headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap())
            .filter(|c| c.contains("Max-Age=0"))
            .map(|c| c.split('=').next().unwrap().to_owned())
            .collect();
        expired.sort();
        assert_eq!(
            expired,
            [0, 1, 2, 3, 5].map(|n| format!("AWSELBAuthSessionCookie-{n}"))
        );
        match logout_url {
            None => assert!(
                r.text.contains("this console has no --alb-logout-url"),
                "{}",
                r.text
            ),
            Some(url) => assert!(
                r.text
                    .contains(&format!("url={}", url.replace('&', "&amp;"))),
                "{}",
                r.text
            ),
        }
        let cross = api
            .send(
                "POST",
                "/auth/sign-out",
                None,
                &[("sec-fetch-site", "cross-site")],
            )
            .await;
        assert_eq!(cross.status, StatusCode::FORBIDDEN);
        assert!(cross.headers.get("set-cookie").is_none());
    }
}

/// Issue 43: a user in no mapped group, where the default is no role,
/// is still told who they are (the console names them and offers Sign
/// out); everything else is refused, naming the role.
#[tokio::test]
async fn a_user_without_a_role_may_ask_who_they_are_and_nothing_else() {
    let keys = KeyServer::start().await;
    let verifier = AlbVerifier::new(ARN.into(), keys.url.clone(), "groups".into());
    let api = Api::with_access(Access::on_loopback(Authenticator::Alb {
        verifier,
        roles: RolesMap::parse("default = \"none\"").unwrap(),
        sign_out: Default::default(),
    }));
    let exp = now() + 60;
    let token = alb_token(&keys.key, alb_header(keys.kid, ARN, exp), claims(exp));
    let header = [("x-amzn-oidc-data", token.as_str())];
    let me = api.send("GET", "/api/me", None, &header).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    assert_eq!(me.text, r#"{"name": "ada@example.com", "roles": []}"#);
    let list = api.send("GET", "/api/endpoints", None, &header).await;
    assert_eq!(list.status, StatusCode::FORBIDDEN);
    assert!(
        list.text
            .contains("reading endpoints needs the viewer role; ada@example.com has no role"),
        "{}",
        list.text
    );
    // Still an identity first: no header, no answer.
    assert_eq!(
        api.send("GET", "/api/me", None, &[]).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn forged_load_balancer_headers_are_refused_and_write_nothing() {
    let keys = KeyServer::start().await;
    let api = alb_api(&keys).await;
    let exp = now() + 60;
    let valid = alb_token(&keys.key, alb_header(keys.kid, ARN, exp), claims(exp));
    let (head, rest) = valid.split_once('.').unwrap();
    let (payload, signature) = rest.split_once('.').unwrap();
    let other_alb = ARN.replace("console/50dc6c495c0c9188", "other/1111111111111111");
    let stranger = SigningKey::from_slice(&[9u8; 32]).unwrap();
    let mut admin_claims = claims(exp);
    admin_claims["groups"] = serde_json::json!(["ml-admins"]);
    let unpadded = {
        // Signed over the text without padding, sent padded.
        let h = URL_SAFE_NO_PAD.encode(alb_header(keys.kid, ARN, exp).to_string());
        let p = URL_SAFE_NO_PAD.encode(claims(exp).to_string());
        let signature: Signature = keys.key.sign(format!("{h}.{p}").as_bytes());
        format!(
            "{}.{}.{}",
            URL_SAFE.encode(alb_header(keys.kid, ARN, exp).to_string()),
            URL_SAFE.encode(claims(exp).to_string()),
            URL_SAFE.encode(signature.to_bytes())
        )
    };
    let forged = [
        ("missing", None),
        ("unsigned", Some(format!("{head}.{payload}."))),
        ("two segments", Some(format!("{head}.{payload}"))),
        (
            "alg none",
            Some(format!(
                "{}.{payload}.{signature}",
                URL_SAFE.encode(
                    serde_json::json!({"alg": "none", "kid": keys.kid, "signer": ARN, "exp": exp})
                        .to_string()
                )
            )),
        ),
        (
            "claims changed",
            Some(format!(
                "{head}.{}.{signature}",
                URL_SAFE.encode(admin_claims.to_string())
            )),
        ),
        (
            "another key",
            Some(alb_token(
                &stranger,
                alb_header(keys.kid, ARN, exp),
                claims(exp),
            )),
        ),
        (
            "expired",
            Some(alb_token(
                &keys.key,
                alb_header(keys.kid, ARN, now() - 1),
                claims(exp),
            )),
        ),
        (
            "foreign signer",
            Some(alb_token(
                &keys.key,
                alb_header(keys.kid, &other_alb, exp),
                claims(exp),
            )),
        ),
        (
            "unknown key",
            Some(alb_token(
                &keys.key,
                alb_header("5f0e0000-0000-0000-0000-000000000000", ARN, exp),
                claims(exp),
            )),
        ),
        (
            "key id as a path",
            Some(alb_token(
                &keys.key,
                alb_header("../../etc/passwd", ARN, exp),
                claims(exp),
            )),
        ),
        ("padding stripped before signing", Some(unpadded)),
    ];
    for (what, token) in &forged {
        let mut headers = vec![];
        if let Some(token) = token {
            headers.push(("x-amzn-oidc-data", token.as_str()));
        }
        for (method, path, body) in [
            ("POST", "/api/endpoints", Some(DEPLOY)),
            ("GET", "/api/endpoints", None),
        ] {
            let r = api.send(method, path, body, &headers).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}: {}", r.text);
            assert_eq!(
                r.str("error"),
                "the load balancer's sign-in header is missing or not valid; reload the page",
                "{what}"
            );
        }
    }
    let listed = api
        .send(
            "GET",
            "/api/endpoints",
            None,
            &[("x-amzn-oidc-data", &valid)],
        )
        .await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(
        listed.get("endpoints"),
        gco_spec::json::parse("[]").unwrap(),
        "nothing written"
    );
}

#[tokio::test]
async fn the_load_balancers_header_means_nothing_in_other_modes() {
    let keys = KeyServer::start().await;
    let exp = now() + 60;
    let valid = alb_token(&keys.key, alb_header(keys.kid, ARN, exp), claims(exp));
    let tokens = Tokens::shared("0123456789abcdef-test-token");
    let api = Api::with_access(Access::on_loopback(Authenticator::Token(tokens)));
    let r = api
        .send(
            "POST",
            "/api/endpoints",
            Some(DEPLOY),
            &[("x-amzn-oidc-data", &valid)],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let me = api
        .send(
            "GET",
            "/api/me",
            None,
            &[
                ("x-amzn-oidc-data", &valid),
                ("authorization", "Bearer 0123456789abcdef-test-token"),
            ],
        )
        .await;
    assert_eq!(me.str("name"), "token");
    let local = Api::new();
    let me = local
        .send("GET", "/api/me", None, &[("x-amzn-oidc-data", &valid)])
        .await;
    assert_eq!(me.str("name"), "local");
    assert_eq!(
        keys.fetches.load(Ordering::SeqCst),
        0,
        "never even looked at"
    );
}

#[tokio::test]
async fn an_alb_named_by_pattern_signs_in_and_no_other_name_does() {
    // `--alb-arn .../app/<name>/*` (the Helm chart's: the controller makes
    // the ALB, so its id is not known): that name's ALB, any id.
    let keys = KeyServer::start().await;
    let named = ARN.replace("console/50dc6c495c0c9188", "console/*");
    let verifier = AlbVerifier::new(named, keys.url.clone(), "groups".into());
    let api = Api::with_access(Access::on_loopback(Authenticator::Alb {
        verifier,
        roles: RolesMap::default(),
        sign_out: Default::default(),
    }));
    let exp = now() + 60;
    for (signer, status) in [
        (ARN.to_owned(), StatusCode::OK),
        (
            ARN.replace("50dc6c495c0c9188", "0123456789abcdef"),
            StatusCode::OK,
        ),
        (
            ARN.replace("app/console/", "app/console-x/"),
            StatusCode::UNAUTHORIZED,
        ),
        (
            ARN.replace("123456789012", "999999999999"),
            StatusCode::UNAUTHORIZED,
        ),
    ] {
        let token = alb_token(&keys.key, alb_header(keys.kid, &signer, exp), claims(exp));
        let me = api
            .send("GET", "/api/me", None, &[("x-amzn-oidc-data", &token)])
            .await;
        assert_eq!(me.status, status, "{signer}: {}", me.text);
    }
}
