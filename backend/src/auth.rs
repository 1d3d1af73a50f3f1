//! Who may ask: a bearer token for every mutation when one is configured,
//! and requests addressed to a host this console answers to. Either way, a
//! browser page of another site cannot make changes, nor read records.
//!
//! Any web page the user opens could otherwise reach a console on
//! `127.0.0.1` (or on an address of the user's network): with a plain form
//! post (a "simple" cross-site request, sent without asking), or by DNS
//! rebinding (its own name made to resolve to the console's address, so
//! that it reads as the same origin). A token keeps the rebinding page from
//! changing anything, not from reading records and the env values in them;
//! but its requests carry its own name as their `Host`, which the console
//! refuses unless it was told to answer to it.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::ApiError;
use crate::identity::Identity;

/// Who may ask, as configured at start-up.
#[derive(Clone)]
pub struct Access {
    /// The token mutations must present, when one is configured.
    pub token: Option<Arc<str>>,
    pub hosts: AllowedHosts,
}

/// The hosts a request may be addressed to (its `Host`, or the authority of
/// an absolute-form target): loopback names and addresses always; any IP
/// address when the listener is not loopback (a rebinding page cannot send
/// one: its requests name its own host); and the names listed.
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    pub any_address: bool,
    /// Lowercase names; one that starts with `.` admits the name after it
    /// and its subdomains.
    pub names: Arc<[String]>,
}

/// Without the token itself, which no log may hold.
impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl Access {
    /// The rules of a server listening on `addr` that answers to `names`
    /// besides loopback ones (and, off loopback, IP addresses).
    pub fn for_listener(
        addr: std::net::SocketAddr,
        token: Option<String>,
        names: Vec<String>,
    ) -> Access {
        Access {
            token: token.map(Into::into),
            hosts: AllowedHosts {
                any_address: !addr.ip().is_loopback(),
                names: names.into(),
            },
        }
    }

    /// The rules of a server on loopback, with or without a token.
    pub fn loopback(token: Option<&str>) -> Access {
        Access {
            token: token.map(Into::into),
            hosts: AllowedHosts::default(),
        }
    }
}

/// A host as a request names it, without its port.
#[derive(Debug, PartialEq)]
enum Host<'a> {
    Address(IpAddr),
    Name(&'a str),
}

impl<'a> Host<'a> {
    /// `name`, `name:port`, `a.b.c.d[:port]` or `[v6][:port]`; `None` for
    /// anything else (userinfo, a path, an empty or non-numeric port).
    fn parse(text: &'a str) -> Option<Host<'a>> {
        // After the name, nothing or a port: `localhost:evil.example` is not
        // this machine, whatever a lenient reader would make of it.
        let port_or_none = |rest: &str| {
            rest.is_empty()
                || rest
                    .strip_prefix(':')
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        if let Some(v6) = text.strip_prefix('[') {
            let (ip, rest) = v6.split_once(']')?;
            return (port_or_none(rest))
                .then(|| ip.parse().ok().map(|ip| Host::Address(IpAddr::V6(ip))))
                .flatten();
        }
        let (name, rest) = text.find(':').map_or((text, ""), |at| text.split_at(at));
        if !port_or_none(rest) || name.is_empty() {
            return None;
        }
        if let Ok(ip) = name.parse() {
            return Some(Host::Address(IpAddr::V4(ip)));
        }
        let valid = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
        valid.then_some(Host::Name(name))
    }
}

impl AllowedHosts {
    /// Whether `request` is addressed to an allowed host. A request that
    /// names none (HTTP/1.0 without `Host`) passes: browsers always send one.
    fn admit(&self, request: &Request) -> bool {
        let host = match request.uri().authority() {
            // Absolute form: the target's authority is the host (RFC 9112,
            // section 3.2.2), whatever `Host` says.
            Some(authority) => authority.as_str(),
            None => match request.headers().get(header::HOST) {
                None => return true,
                Some(host) => match host.to_str() {
                    Ok(host) => host,
                    Err(_) => return false,
                },
            },
        };
        match Host::parse(host) {
            Some(Host::Address(ip)) => ip.is_loopback() || self.any_address,
            Some(Host::Name(name)) => {
                let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
                // Browsers resolve localhost and its subdomains to loopback
                // themselves.
                name == "localhost"
                    || name.ends_with(".localhost")
                    || self
                        .names
                        .iter()
                        .any(|allowed| match allowed.strip_prefix('.') {
                            Some(domain) => {
                                name == domain
                                    || name
                                        .strip_suffix(domain)
                                        .is_some_and(|sub| sub.ends_with('.'))
                            }
                            None => name == *allowed,
                        })
            }
            None => false,
        }
    }

    /// The refusal of a request addressed elsewhere, saying what is answered.
    fn refusal(&self) -> ApiError {
        let mut answered = vec!["localhost", "127.0.0.1", "[::1]"];
        if self.any_address {
            answered.push("this machine's IP addresses");
        }
        answered.extend(self.names.iter().map(String::as_str));
        ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "this console answers to {} only; list the name it is reached by in --allowed-hosts",
                answered.join(", ")
            ),
        )
    }

    /// A `--allowed-hosts` entry as kept: lowercase, checked.
    pub fn entry(text: &str) -> Result<String, String> {
        let name = text.trim().to_ascii_lowercase();
        let bare = name.strip_prefix('.').unwrap_or(&name);
        match Host::parse(bare) {
            Some(Host::Name(n)) if n == bare => Ok(name),
            _ => Err(format!(
                "--allowed-hosts: {text:?} is not a host name such as console.example.com (or .example.com for a domain and its subdomains)"
            )),
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

/// Routes that are POSTed to but store nothing.
const READ_ONLY_POSTS: [&str; 2] = ["/api/validate", "/api/manifests"];

/// A request that changes something: any method but GET/HEAD/OPTIONS, except
/// [`READ_ONLY_POSTS`].
fn is_mutation(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
        && !READ_ONLY_POSTS.contains(&path)
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

pub async fn require_token(
    State(access): State<Access>,
    mut request: Request,
    next: Next,
) -> Response {
    let mutation = is_mutation(request.method(), request.uri().path());
    if mutation && is_cross_site(&request) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "changes are refused from other sites' pages",
        )
        .into_response();
    }
    if !access.hosts.admit(&request) {
        return access.hosts.refusal().into_response();
    }
    let Some(expected) = &access.token else {
        request.extensions_mut().insert(Identity::local());
        return next.run(request).await;
    };
    request.extensions_mut().insert(Identity {
        name: "token".into(),
        roles: gco_api::Role::ALL.to_vec(),
    });
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
    fn admits_the_hosts_it_answers_to() {
        let loopback = AllowedHosts::default();
        let listed = AllowedHosts {
            any_address: true,
            names: vec!["console.example.com".into(), ".corp.example".into()].into(),
        };
        let admits = |hosts: &AllowedHosts, host: &str| hosts.admit(&request(&[("host", host)]));
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "app.localhost:1",
            "localhost.",
            "127.0.0.1",
            "127.1.2.3:8080",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(admits(&loopback, host), "{host}");
            assert!(admits(&listed, host), "{host}");
        }
        assert!(loopback.admit(&request(&[])));
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
            "console.example.com",
        ] {
            assert!(!admits(&loopback, host), "{host}");
        }
        for host in [
            "10.0.0.1:8080",
            "[2001:db8::1]:80",
            "Console.Example.com",
            "console.example.com.:443",
            "corp.example",
            "a.b.corp.example",
        ] {
            assert!(admits(&listed, host), "{host}");
        }
        for host in [
            "evil.example",
            "console.example.com.evil.example",
            "xcorp.example",
            "corp.example.evil",
            "10.0.0.1:80@evil.example",
        ] {
            assert!(!admits(&listed, host), "{host}");
        }
        // An absolute-form target names the host, not `Host`.
        let absolute = Request::builder()
            .uri("http://evil.example/api/endpoints")
            .header("host", "127.0.0.1")
            .body(Body::empty())
            .unwrap();
        assert!(!loopback.admit(&absolute));
    }

    #[test]
    fn checks_allowed_host_entries() {
        assert_eq!(
            AllowedHosts::entry(" Console.Example.com "),
            Ok("console.example.com".into())
        );
        assert_eq!(
            AllowedHosts::entry(".corp.example"),
            Ok(".corp.example".into())
        );
        for bad in [
            "",
            ".",
            "a:80",
            "a/b",
            "a b",
            "user@a",
            "10.0.0.1",
            "[::1]",
            "*.example",
        ] {
            assert!(AllowedHosts::entry(bad).is_err(), "{bad:?}");
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
