//! The session cookie of `--auth oidc`: who signed in, their groups, and
//! until when, encrypted and authenticated with the console's key (the
//! `cookie` crate's private jar: AES-256-GCM with the cookie's name bound
//! in), so a browser can neither read nor forge it, and one console's
//! cookie is noise to a console with another key. axum-extra's jars read
//! the `Cookie` header and write the `Set-Cookie` ones.

use axum::http::{HeaderMap, header};
use axum_extra::extract::cookie::{Cookie, CookieJar, Key, PrivateCookieJar, SameSite};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

pub const SESSION_COOKIE: &str = "gco_session";

/// A signed-in user, as the session cookie holds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    #[serde(rename = "n")]
    pub name: String,
    #[serde(rename = "g")]
    pub groups: Vec<String>,
    /// Expiry, seconds since the epoch.
    #[serde(rename = "e")]
    pub expires: u64,
    /// This session's id: a sign-out refuses it until it expires.
    #[serde(rename = "s")]
    pub id: String,
}

impl Session {
    /// A new session (a new id: sessions are never reused across sign-ins).
    pub fn new(name: String, groups: Vec<String>, expires: u64) -> Session {
        Session {
            name,
            groups,
            expires,
            id: random_text(),
        }
    }
}

/// Why a request carries no valid session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSession {
    Missing,
    /// Not this console's (another key, or changed).
    Unreadable,
    Expired,
    SignedOut,
    /// Whether it was signed out cannot be told (the store's list of
    /// sign-outs could not be read).
    Unchecked,
}

impl NoSession {
    pub fn message(self) -> &'static str {
        match self {
            NoSession::Missing => "sign in first",
            NoSession::Unreadable => "the session cookie is not this console's; sign in again",
            NoSession::Expired => "your session has expired; sign in again",
            NoSession::SignedOut => "you signed out; sign in again",
            NoSession::Unchecked => {
                "the console cannot check its sign-outs right now; try again in a moment"
            }
        }
    }

    /// 401 (sign in), or 503 when the session could not be checked.
    pub fn status(self) -> axum::http::StatusCode {
        match self {
            NoSession::Unchecked => axum::http::StatusCode::SERVICE_UNAVAILABLE,
            _ => axum::http::StatusCode::UNAUTHORIZED,
        }
    }
}

/// Reads and makes session cookies with one key.
pub struct SessionCookies {
    key: Key,
    /// Whether cookies are sent over https only.
    pub secure: bool,
}

impl SessionCookies {
    pub fn new(key: Key, secure: bool) -> SessionCookies {
        SessionCookies { key, secure }
    }

    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The session a request's cookie holds, unless it has expired at `now`
    /// (seconds since the epoch).
    pub fn read(&self, headers: &HeaderMap, now: u64) -> Result<Session, NoSession> {
        let Some(sealed) = CookieJar::from_headers(headers)
            .get(SESSION_COOKIE)
            .cloned()
        else {
            // A session cookie too garbled to parse (its percent-encoding
            // broken) is a changed one, not none.
            let named = headers
                .get_all(header::COOKIE)
                .iter()
                .any(|v| v.to_str().is_ok_and(|t| t.contains(SESSION_COOKIE)));
            return Err(if named {
                NoSession::Unreadable
            } else {
                NoSession::Missing
            });
        };
        let session: Session = PrivateCookieJar::new(self.key.clone())
            .decrypt(sealed)
            .and_then(|c| serde_json::from_str(c.value()).ok())
            .ok_or(NoSession::Unreadable)?;
        if session.expires <= now {
            return Err(NoSession::Expired);
        }
        Ok(session)
    }

    /// A cookie named `name` on `path`, HttpOnly and SameSite=Lax.
    pub fn cookie(&self, name: &'static str, value: String, path: &'static str) -> Cookie<'static> {
        Cookie::build((name, value))
            .path(path)
            .http_only(true)
            .secure(self.secure)
            .same_site(SameSite::Lax)
            .build()
    }

    /// An empty jar whose cookies are encrypted with this key.
    pub fn private_jar(&self) -> PrivateCookieJar {
        PrivateCookieJar::new(self.key.clone())
    }

    /// `session`'s cookie, lasting `seconds`, encrypted into `jar`.
    pub fn put(&self, jar: PrivateCookieJar, session: &Session, seconds: u64) -> PrivateCookieJar {
        let value = serde_json::to_string(session).expect("a session serializes");
        let mut cookie = self.cookie(SESSION_COOKIE, value, "/");
        cookie.set_max_age(cookie::time::Duration::seconds(seconds as i64));
        jar.add(cookie)
    }
}

/// 128 random bits, base64url.
pub fn random_text() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use axum::response::IntoResponse;

    use super::*;

    /// The `Cookie` header a browser sends back after `jar`'s answer.
    fn headers_of(jar: PrivateCookieJar) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let answer = jar.into_response();
        let pairs: Vec<String> = answer
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| {
                let cookie = Cookie::parse_encoded(v.to_str().unwrap().to_owned()).unwrap();
                cookie.stripped().encoded().to_string()
            })
            .collect();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&pairs.join("; ")).unwrap(),
        );
        headers
    }

    #[test]
    fn a_session_reads_back_only_with_its_key_and_in_time() {
        let cookies = SessionCookies::new(Key::generate(), false);
        let session = Session::new("ada@example.com".into(), vec!["ml".into()], 1_000);
        let headers = headers_of(cookies.put(cookies.private_jar(), &session, 600));
        assert_eq!(cookies.read(&headers, 999), Ok(session.clone()));
        assert_eq!(cookies.read(&headers, 1_000), Err(NoSession::Expired));
        let other = SessionCookies::new(Key::generate(), false);
        assert_eq!(other.read(&headers, 999), Err(NoSession::Unreadable));
        assert_eq!(
            cookies.read(&HeaderMap::new(), 999),
            Err(NoSession::Missing)
        );
        // One bit changed is no session.
        let text = headers[header::COOKIE].to_str().unwrap().to_owned();
        let flipped = text.replacen('A', "B", 1).replacen('a', "b", 1);
        let mut tampered = HeaderMap::new();
        tampered.insert(header::COOKIE, HeaderValue::from_str(&flipped).unwrap());
        assert_eq!(cookies.read(&tampered, 999), Err(NoSession::Unreadable));
        // Its percent-encoding broken: still a changed cookie, not none.
        let mut broken = HeaderMap::new();
        broken.insert(
            header::COOKIE,
            HeaderValue::from_static("gco_session=ab%AFcd"),
        );
        assert_eq!(cookies.read(&broken, 999), Err(NoSession::Unreadable));
        assert_ne!(
            Session::new("a".into(), vec![], 1).id,
            Session::new("a".into(), vec![], 1).id
        );
    }
}
