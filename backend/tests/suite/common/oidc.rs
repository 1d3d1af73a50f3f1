//! The provider's side of `--auth oidc`, as far as a console looks at it
//! before anyone signs in: a discovery document and its (empty) key set,
//! so the real binary starts with `--auth oidc`. Sessions are then made
//! with the console's own key (`--session-key-file`), as a sign-in would
//! make them: the tests here are about what happens to a session after
//! it, and about where a sign-in starts (the browser tests in
//! tests/e2e/oidc.test.cjs sign in at a real provider).

use std::path::Path;

use axum::Json;
use axum::response::IntoResponse;
use cookie::{CookieJar, Key};
use gco_console::auth::session::{Session, SessionCookies};

/// A discovery endpoint on its own thread, for the binary to find.
pub struct Provider {
    pub issuer: String,
}

impl Provider {
    pub fn start() -> Provider {
        Provider::start_with(false)
    }

    /// One whose discovery names an `end_session_endpoint` (`<issuer>/logout`,
    /// RP-initiated logout) when `end_session`.
    pub fn start_with(end_session: bool) -> Provider {
        super::on_own_thread(move || async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let issuer = format!("http://{}", listener.local_addr().unwrap());
            let mut metadata = serde_json::json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/jwks"),
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
            });
            if end_session {
                metadata["end_session_endpoint"] = format!("{issuer}/logout").into();
            }
            let app = axum::Router::new()
                .route(
                    "/.well-known/openid-configuration",
                    axum::routing::get(move || {
                        let metadata = metadata.clone();
                        async move { Json(metadata) }
                    }),
                )
                .route(
                    "/jwks",
                    axum::routing::get(|| async { Json(serde_json::json!({"keys": []})) }),
                );
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            Provider { issuer }
        })
    }
}

/// The session key's file text: consoles given it share sessions.
pub const SESSION_SECRET: &str = "a-session-key-of-forty-characters-0123456";

/// Writes the session key into `dir`; its path.
pub fn session_key_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("session.key");
    std::fs::write(&path, SESSION_SECRET).unwrap();
    path
}

/// The `Cookie` header of a new session of `name`, lasting an hour, as a
/// console with [`SESSION_SECRET`] signs one in.
pub fn session_cookie(name: &str) -> String {
    let cookies = SessionCookies::new(Key::derive_from(SESSION_SECRET.as_bytes()), false);
    let session = Session::new(name.into(), vec![], super::alb::now() + 3600);
    let answer = cookies
        .put(cookies.private_jar(), &session, 3600)
        .into_response();
    answer
        .headers()
        .get_all(axum::http::header::SET_COOKIE)
        .iter()
        .map(|line| {
            let cookie = cookie::Cookie::parse_encoded(line.to_str().unwrap().to_owned()).unwrap();
            cookie.stripped().encoded().to_string()
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `--auth oidc` flags of a console on `issuer`, sharing the session
/// key in `key_file`.
pub fn flags(issuer: &str, key_file: &Path) -> Vec<std::ffi::OsString> {
    [
        "--auth",
        "oidc",
        "--oidc-issuer",
        issuer,
        "--oidc-client-id",
        "gco-console",
        "--public-url",
        "http://127.0.0.1",
        "--session-key-file",
    ]
    .iter()
    .map(Into::into)
    .chain([key_file.as_os_str().to_owned()])
    .collect()
}

/// A console (the real binary) on `issuer`, sharing the session key in
/// `key_file`, over the store `store` says (`--data-dir DIR`, or
/// `--dynamodb-endpoint URL ...`).
pub fn console(issuer: &str, key_file: &Path, store: &[&str]) -> super::Server {
    let mut args: Vec<std::ffi::OsString> = store.iter().map(Into::into).collect();
    args.extend(["--dist".into(), "/nonexistent".into()]);
    args.extend(flags(issuer, key_file));
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    super::Server::with_args(&args)
}

/// Where a sign-in started at the console on `port` with the query
/// `next=<encoded>` would come back to: the `next` its sign-in cookie
/// holds (the cookie is the console's, read with its key).
pub fn next_of_sign_in(port: u16, encoded: &str) -> String {
    let r = super::request(port, "GET", &format!("/auth/sign-in?next={encoded}"), "").unwrap();
    assert_eq!(r.status, 303, "{}", r.head);
    let mut jar = CookieJar::new();
    for line in r.head.lines() {
        if let Some(value) = line
            .split_once(':')
            .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))
            .map(|(_, value)| value.trim())
        {
            jar.add_original(cookie::Cookie::parse_encoded(value.to_owned()).unwrap());
        }
    }
    let key = Key::derive_from(SESSION_SECRET.as_bytes());
    let pending = jar
        .private(&key)
        .get("gco_sign_in")
        .expect("a sign-in cookie");
    let pending: serde_json::Value = serde_json::from_str(pending.value()).unwrap();
    pending["next"].as_str().unwrap().to_owned()
}

/// `method path` at the console on `port` with `cookie`, as the console's
/// own page sends it.
pub fn with_cookie(port: u16, method: &str, path: &str, cookie: &str) -> super::Reply {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nCookie: {cookie}\r\nSec-Fetch-Site: same-origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    super::exchange(port, request.as_bytes()).unwrap()
}
