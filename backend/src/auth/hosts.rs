//! The hosts a request may be addressed to: the console refuses requests
//! naming another host, which keeps other sites' pages out by DNS
//! rebinding (their requests carry their own name as `Host`).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::uri::Authority;
use axum::http::{StatusCode, header};

use crate::error::ApiError;

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

/// A host as a request names it, without its port.
#[derive(Debug, PartialEq)]
enum Host<'a> {
    Address(IpAddr),
    Name(&'a str),
}

impl<'a> Host<'a> {
    /// `name`, `name:port`, `a.b.c.d[:port]` or `[v6][:port]`, read by
    /// `http`'s [`Authority`]; `None` for anything else (userinfo, a path, an
    /// empty or non-numeric port).
    fn parse(text: &'a str) -> Option<Host<'a>> {
        let authority: Authority = text.parse().ok()?;
        // `Authority` takes a user (`user@host`), and after the host
        // anything (`host:`, `localhost:evil.example`), with no port to
        // show for it: no request's Host names either.
        if text.contains('@') {
            return None;
        }
        // Without a user, the host is where the text starts. A port is
        // plain digits: `Authority` reads `+8715` as a number too.
        let host = &text[..authority.host().len()];
        if let Some(port) = text[host.len()..].strip_prefix(':') {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
        } else if host.len() < text.len() {
            return None;
        }
        if host.len() < text.len() && authority.port_u16().is_none() {
            return None;
        }
        if let Some(v6) = host.strip_prefix('[') {
            let ip = v6.strip_suffix(']')?.parse().ok()?;
            return Some(Host::Address(IpAddr::V6(ip)));
        }
        if let Ok(ip) = host.parse() {
            return Some(Host::Address(IpAddr::V4(ip)));
        }
        let valid = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
        valid.then_some(Host::Name(host))
    }
}

impl AllowedHosts {
    /// Whether `request` is addressed to an allowed host. A request that
    /// names none (HTTP/1.0 without `Host`) passes: browsers always send one.
    pub fn admit(&self, request: &Request) -> bool {
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
    pub fn refusal(&self) -> ApiError {
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
            "localhost:+8715",
            "127.0.0.1:-1",
            "localhost: 80",
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
}
