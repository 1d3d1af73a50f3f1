//! Who may ask: a bearer token for every mutation when one is configured;
//! on a loopback listener (the only one allowed without a token), requests
//! must be addressed to a loopback name. Either way, a browser page of
//! another site cannot make changes.
//!
//! Any web page the user opens could otherwise reach a console on
//! `127.0.0.1`: with a plain form post (a "simple" cross-site request, sent
//! without asking), or by DNS rebinding (its own name made to resolve to
//! `127.0.0.1`, so that it reads as the same origin). A token keeps the
//! rebinding page from changing anything, not from reading records and the
//! env values in them: so the name check holds with a token too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::ApiError;

/// Who may ask, as configured at start-up.
#[derive(Clone)]
pub struct Access {
    /// The token mutations must present, when one is configured.
    pub token: Option<Arc<str>>,
    /// Whether requests must name a loopback host: true on a loopback
    /// listener, which only this machine's clients (and pages of any site
    /// its browser opens) can reach. Elsewhere the server has a name of its
    /// own, behind which the token guards changes.
    pub loopback_names_only: bool,
}

/// Without the token itself, which no log may hold.
impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("loopback_names_only", &self.loopback_names_only)
            .finish()
    }
}

impl Access {
    /// The rules of a server listening on `addr`.
    pub fn for_listener(addr: std::net::SocketAddr, token: Option<String>) -> Access {
        Access {
            token: token.map(Into::into),
            loopback_names_only: addr.ip().is_loopback(),
        }
    }

    /// The rules of a server on loopback, with or without a token.
    pub fn loopback(token: Option<&str>) -> Access {
        Access {
            token: token.map(Into::into),
            loopback_names_only: true,
        }
    }
}

/// Compares in time independent of where the inputs differ, so response
/// timing does not reveal a prefix of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0xFF);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// A request that changes something: any method but GET/HEAD/OPTIONS, except
/// `/api/validate`, which stores nothing.
fn is_mutation(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) && path != "/api/validate"
}

/// Whether a browser says this request comes from another site: its
/// `Sec-Fetch-Site`, or else an `Origin` other than the address it was sent
/// to. Clients that are not browsers send neither.
fn is_cross_site(request: &Request) -> bool {
    let headers = request.headers();
    if let Some(site) = headers.get("sec-fetch-site") {
        return !matches!(site.as_bytes(), b"same-origin" | b"none");
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let authority = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, authority)| authority);
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    match (authority, host) {
        (Some(authority), Some(host)) => !authority.eq_ignore_ascii_case(host),
        // `Origin: null` (a sandboxed frame, a file), or no Host to compare.
        _ => true,
    }
}

/// Whether `Host` names this machine's loopback interface: `localhost` (and
/// its subdomains, which browsers resolve to loopback themselves), an address
/// in 127.0.0.0/8 or `[::1]`, with any port. A request without `Host` (HTTP/1.0)
/// passes: browsers always send one.
fn is_loopback_host(request: &Request) -> bool {
    let Some(host) = request.headers().get(header::HOST) else {
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    // After the name, nothing or a port: `localhost:evil.example` is not
    // this machine, whatever a lenient reader would make of it.
    let port_or_none = |rest: &str| {
        rest.is_empty()
            || rest
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => {
            return v6.split_once(']').is_some_and(|(ip, rest)| {
                port_or_none(rest)
                    && ip
                        .parse::<std::net::Ipv6Addr>()
                        .is_ok_and(|ip| ip.is_loopback())
            });
        }
        None => {
            let (name, rest) = host.find(':').map_or((host, ""), |at| host.split_at(at));
            if !port_or_none(rest) {
                return false;
            }
            name
        }
    };
    let localhost = |n: &str| n.eq_ignore_ascii_case("localhost");
    localhost(name)
        || name.rsplit_once('.').is_some_and(|(_, top)| localhost(top))
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

pub async fn require_token(State(access): State<Access>, request: Request, next: Next) -> Response {
    let mutation = is_mutation(request.method(), request.uri().path());
    if mutation && is_cross_site(&request) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "changes are refused from other sites' pages",
        )
        .into_response();
    }
    if access.loopback_names_only && !is_loopback_host(&request) {
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "listening on loopback, this console answers to localhost, 127.0.0.1 or [::1] only",
        )
        .into_response();
    }
    let Some(expected) = &access.token else {
        return next.run(request).await;
    };
    if !mutation {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        // The scheme is case-insensitive (RFC 9110, section 11.1).
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("Bearer"))
        .map(|(_, token)| token.trim());
    match presented {
        Some(p) if constant_time_eq(p.as_bytes(), expected.as_bytes()) => next.run(request).await,
        _ => {
            let mut response = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this change needs a valid bearer token",
            )
            .into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut r = Request::builder().method("POST").uri("/api/endpoints");
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.body(Body::empty()).unwrap()
    }

    #[test]
    fn tells_cross_site_requests() {
        let host = ("host", "127.0.0.1:8080");
        for same in [
            vec![],
            vec![host],
            vec![host, ("origin", "http://127.0.0.1:8080")],
            vec![host, ("origin", "HTTP://127.0.0.1:8080")],
            vec![
                host,
                ("sec-fetch-site", "same-origin"),
                ("origin", "http://127.0.0.1:8080"),
            ],
            vec![("sec-fetch-site", "none")],
        ] {
            assert!(!is_cross_site(&request(&same)), "{same:?}");
        }
        for cross in [
            vec![host, ("origin", "http://evil.example")],
            vec![host, ("origin", "http://127.0.0.1:9999")],
            vec![host, ("origin", "null")],
            vec![("origin", "http://127.0.0.1:8080")],
            vec![host, ("sec-fetch-site", "cross-site")],
            vec![
                host,
                ("sec-fetch-site", "same-site"),
                ("origin", "http://127.0.0.1:8080"),
            ],
        ] {
            assert!(is_cross_site(&request(&cross)), "{cross:?}");
        }
    }

    #[test]
    fn tells_loopback_hosts() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "app.localhost:1",
            "127.0.0.1",
            "127.1.2.3:8080",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_host(&request(&[("host", host)])), "{host}");
        }
        assert!(is_loopback_host(&request(&[])));
        for host in [
            "evil.example",
            "evil.example:8080",
            "10.0.0.1:8080",
            "localhost.evil.example",
            "[::2]:80",
            "[::1",
            "127.0.0.1.evil.example",
            "localhost:evil.example",
            "localhost:",
            "127.0.0.1:80@evil.example",
            "localhost:8080/evil",
            "[::1]evil.example",
            "[::1]:80x",
        ] {
            assert!(!is_loopback_host(&request(&[("host", host)])), "{host}");
        }
    }

    #[test]
    fn compares_whole_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
