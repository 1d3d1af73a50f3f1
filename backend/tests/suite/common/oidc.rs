//! The provider's side of `--auth oidc`, as far as a console looks at it
//! before anyone signs in: a discovery document and its (empty) key set,
//! so the real binary starts with `--auth oidc`. Sessions are then made
//! with the console's own key (`--session-key-file`), as a sign-in would
//! make them: the tests here are about what happens to a session after
//! it, and about where a sign-in starts (the browser tests in
//! tests/e2e/oidc.test.cjs sign in at a real provider).

use std::path::Path;

use axum::Json;
use cookie::{CookieJar, Key};
use gco_console::auth::session::{Session, SessionCookies};

/// A discovery endpoint on its own thread, for the binary to find.
pub struct Provider {
    pub issuer: String,
}

impl Provider {
    pub fn start() -> Provider {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let issuer = format!("http://{}", listener.local_addr().unwrap());
                let metadata = serde_json::json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "jwks_uri": format!("{issuer}/jwks"),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                });
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
                sender.send(issuer).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Provider {
            issuer: receiver.recv().unwrap(),
        }
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
    let mut jar = CookieJar::new();
    cookies.put(&mut jar, &session, 3600);
    jar.delta()
        .map(|c| c.stripped().encoded().to_string())
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

/// `method path` at the console on `port` with `cookie`, as the console's
/// own page sends it.
pub fn with_cookie(port: u16, method: &str, path: &str, cookie: &str) -> super::Reply {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nCookie: {cookie}\r\nSec-Fetch-Site: same-origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    super::exchange(port, request.as_bytes()).unwrap()
}
