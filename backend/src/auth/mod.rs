//! Who may ask, and what they may do.
//!
//! Every request must be addressed to a host this console answers to
//! ([`hosts`]), and no change may come from another site's page. Under
//! `/api`, every request but `GET /api/config` then needs an identity, by
//! `--auth`: `none` (loopback only: `local`, every role), `token` (bearer
//! tokens, [`tokens`]), `oidc` (the console's own sign-in and session
//! cookie, [`oidc`]) or `alb` (the load balancer's signed header, [`alb`]).
//! The identity's roles ([`roles`]) must grant what the route needs; the
//! handlers get it as an extractor ([`Identity`]).
//!
//! Any web page the user opens could otherwise reach a console on
//! `127.0.0.1` (or on an address of the user's network): with a plain form
//! post (a "simple" cross-site request, sent without asking), or by DNS
//! rebinding (its own name made to resolve to the console's address, so
//! that it reads as the same origin). A rebinding page's requests carry its
//! own name as their `Host`, which the console refuses unless told to
//! answer to it.

pub mod alb;
pub mod alb_keys;
pub mod alb_sign_out;
pub mod hosts;
pub mod identity;
pub mod oidc;
pub mod roles;
pub mod session;
pub mod sign_outs;
pub mod tokens;

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use gco_api::{AuthMode, Role, route};
use tracing::Level;

pub use hosts::AllowedHosts;

use crate::error::ApiError;
use alb::AlbVerifier;
use identity::Identity;
use oidc::Oidc;
use roles::RolesMap;
use tokens::Tokens;

/// How identities are verified (`--auth`).
pub enum Authenticator {
    None,
    Token(Tokens),
    Oidc {
        oidc: Arc<Oidc>,
        /// Bearer tokens for automation beside the sign-in (`--tokens-file`).
        tokens: Tokens,
        roles: RolesMap,
    },
    Alb {
        verifier: AlbVerifier,
        roles: RolesMap,
        /// Sign out: the load balancer's cookies expired, then its
        /// identity provider's logout URL.
        sign_out: Arc<alb_sign_out::AlbSignOut>,
    },
}

impl Authenticator {
    pub fn mode(&self) -> AuthMode {
        match self {
            Authenticator::None => AuthMode::None,
            Authenticator::Token(_) => AuthMode::Token,
            Authenticator::Oidc { .. } => AuthMode::Oidc,
            Authenticator::Alb { .. } => AuthMode::Alb,
        }
    }

    /// The scheme users reach the console by, unless `--public-url` says.
    fn scheme(&self) -> &'static str {
        match self {
            Authenticator::Alb { .. } => "https",
            Authenticator::Oidc { oidc, .. } if oidc.origin().starts_with("https:") => "https",
            _ => "http",
        }
    }
}

/// Who may ask, as configured at start-up.
#[derive(Clone)]
pub struct Access {
    pub hosts: AllowedHosts,
    pub auth: Arc<Authenticator>,
    /// The scheme users reach the console by, which a page's `Origin` must
    /// name: `--public-url`'s, else https behind the load balancer (which
    /// ends TLS), else http (the console serves no TLS itself).
    pub scheme: &'static str,
}

/// Without secrets, which no log may hold.
impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("auth", &self.auth.mode())
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl Access {
    /// The rules of a server listening on `addr` that answers to `names`
    /// besides loopback ones (and, off loopback, IP addresses).
    pub fn for_listener(
        addr: std::net::SocketAddr,
        auth: Authenticator,
        names: Vec<String>,
    ) -> Access {
        Access {
            hosts: AllowedHosts {
                any_address: !addr.ip().is_loopback(),
                names: names.into(),
            },
            scheme: auth.scheme(),
            auth: Arc::new(auth),
        }
    }

    /// Users reach the console at `public_url` (`--public-url`): its
    /// scheme is the one pages' origins name.
    pub fn reached_at(mut self, public_url: &url::Url) -> Result<Access, String> {
        self.scheme = match public_url.scheme() {
            "https" => "https",
            "http" => "http",
            other => {
                return Err(format!(
                    "--public-url {public_url}: the scheme must be http or https, not {other:?}"
                ));
            }
        };
        Ok(self)
    }

    /// The rules of a server on loopback: `--auth none`, or the shared
    /// token when one is given.
    pub fn loopback(token: Option<&str>) -> Access {
        Access::on_loopback(match token {
            Some(token) => Authenticator::Token(Tokens::shared(token)),
            None => Authenticator::None,
        })
    }

    pub fn on_loopback(auth: Authenticator) -> Access {
        Access {
            hosts: AllowedHosts::default(),
            scheme: auth.scheme(),
            auth: Arc::new(auth),
        }
    }

    pub fn mode(&self) -> AuthMode {
        self.auth.mode()
    }

    /// The rules of `--metrics-addr`'s own listener: the same hosts, and no
    /// identity (it serves `GET /metrics` alone, to a scraper; the README
    /// says to keep it private).
    pub fn for_metrics(&self) -> Access {
        Access {
            hosts: self.hosts.clone(),
            auth: Arc::new(Authenticator::None),
            scheme: self.scheme,
        }
    }

    /// What the console says at start-up of who may ask.
    pub fn describe(&self) -> String {
        let roles = |roles: &RolesMap| {
            format!(
                "signed-in users without a mapped group are {}; {} group(s) mapped",
                roles.default.map_or("refused".into(), |r| format!("{r}s")),
                roles.groups.len()
            )
        };
        match &*self.auth {
            Authenticator::None => {
                "auth none: loopback only; every request is `local`, with every role".into()
            }
            Authenticator::Token(tokens) => format!(
                "auth token: every API request needs one of {} bearer token(s)",
                tokens.len()
            ),
            Authenticator::Oidc {
                oidc,
                tokens,
                roles: map,
            } => format!(
                "auth oidc: users sign in at {}; {}; {} bearer token(s) for automation",
                oidc.issuer(),
                roles(map),
                tokens.len()
            ),
            Authenticator::Alb {
                verifier,
                roles: map,
                sign_out,
            } => format!(
                "auth alb: users are signed in by {}; {}; signing out goes to {}",
                verifier.signer(),
                roles(map),
                sign_out.logout_url.as_deref().unwrap_or(
                    "no logout URL (--alb-logout-url): the identity provider's session stays"
                )
            ),
        }
    }

    /// The sign-out route behind the load balancer, under `--auth alb`.
    pub fn alb_sign_out(&self) -> Option<Arc<alb_sign_out::AlbSignOut>> {
        match &*self.auth {
            Authenticator::Alb { sign_out, .. } => Some(Arc::clone(sign_out)),
            _ => None,
        }
    }

    /// The sign-in routes, under `--auth oidc`.
    pub fn oidc(&self) -> Option<Arc<Oidc>> {
        match &*self.auth {
            Authenticator::Oidc { oidc, .. } => Some(Arc::clone(oidc)),
            _ => None,
        }
    }
}

/// What a request is, as [`authorize`] and [`require_role`] judge it: from
/// its route in `gco_api::route::ROUTES` (found by the template axum
/// matched, never by matching the path again), or, for a method or path no
/// route serves (answered 405 or 404 further on), from its method alone.
struct Judged {
    changes_state: bool,
    /// Whether it needs an identity.
    identified: bool,
    /// The role it needs beyond that.
    needs: Option<Role>,
    action: &'static str,
}

fn judge(method: &Method, matched: Option<&str>, path: &str) -> Judged {
    let served = matched
        .zip(gco_api::Method::of_request(method.as_str()))
        .and_then(|(template, method)| route::served(method, template));
    if let Some(route) = served {
        return Judged {
            changes_state: route.changes_state,
            identified: route.identified,
            needs: route.needs,
            action: route.doing,
        };
    }
    let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    // The metrics tell the console's traffic and the table's size: on the
    // main listener they need an identity too (`--metrics-addr` serves
    // them on a listener of their own, with [`Access::for_metrics`]).
    if path == crate::metrics::PATH {
        return Judged {
            changes_state,
            identified: true,
            needs: Some(Role::Viewer),
            action: "reading metrics",
        };
    }
    let api = path == "/api" || path.starts_with("/api/");
    Judged {
        changes_state,
        identified: api,
        // Unknown paths under /api ask who is asking before saying 404,
        // so that they tell nothing to anyone else.
        needs: api.then_some(if changes_state {
            Role::Operator
        } else {
            Role::Viewer
        }),
        action: if changes_state {
            "changing endpoints"
        } else {
            "reading endpoints"
        },
    }
}

/// Why a request has no identity: a 401 saying what to do, the reason
/// logged (never a token).
struct Unidentified {
    message: &'static str,
    reason: String,
    bearer: bool,
    /// 401, or 503 when who it is could not be checked.
    status: StatusCode,
}

impl IntoResponse for Unidentified {
    fn into_response(self) -> Response {
        let mut response = ApiError::new(self.status, self.message)
            .logged(Level::WARN, "request refused: no identity", self.reason)
            .into_response();
        if self.bearer {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// An identity, and whether it came with a cookie (which a browser sends
/// by itself, so a change must also prove its origin).
struct Identified {
    identity: Identity,
    by_cookie: bool,
    /// The session's times, for a signed-in session of the console's own.
    session: Option<SessionTimes>,
}

/// When the session a request came with ends (`--auth oidc`), put in the
/// request's extensions for `GET /api/me`, which tells the page so it can
/// warn before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTimes {
    /// Seconds since the epoch.
    pub expires: u64,
    /// The session's whole length (`--session-lifetime`).
    pub lifetime: u64,
}

impl Authenticator {
    async fn identify(&self, headers: &HeaderMap) -> Result<Identified, Unidentified> {
        let by_token = |tokens: &Tokens| {
            let token = tokens::bearer(headers)?;
            Some(tokens.identify(token).ok_or(Unidentified {
                message: "this request needs a valid bearer token",
                reason: "a bearer token this console does not accept".into(),
                bearer: true,
                status: StatusCode::UNAUTHORIZED,
            }))
        };
        let plain = |identity| Identified {
            identity,
            by_cookie: false,
            session: None,
        };
        match self {
            Authenticator::None => Ok(plain(Identity::local())),
            Authenticator::Token(tokens) => match by_token(tokens) {
                Some(found) => found.map(plain),
                None => Err(Unidentified {
                    message: "this request needs a valid bearer token",
                    reason: "no bearer token".into(),
                    bearer: true,
                    status: StatusCode::UNAUTHORIZED,
                }),
            },
            Authenticator::Oidc {
                oidc,
                tokens,
                roles,
            } => {
                if let Some(found) = by_token(tokens) {
                    return found.map(plain);
                }
                // Boxed, as is the load balancer's check below: their
                // futures (a table read, a key fetch) would make every
                // request's, in every mode, kilobytes to move.
                let session = Box::pin(oidc.session(headers))
                    .await
                    .map_err(|no| Unidentified {
                        message: no.message(),
                        reason: format!("{no:?}"),
                        bearer: false,
                        status: no.status(),
                    })?;
                Ok(Identified {
                    identity: Identity {
                        roles: roles.roles_of(&session.groups),
                        name: session.name,
                    },
                    by_cookie: true,
                    session: Some(SessionTimes {
                        expires: session.expires,
                        lifetime: oidc.session_lifetime(),
                    }),
                })
            }
            Authenticator::Alb {
                verifier, roles, ..
            } => {
                let refused = |reason: alb::AlbRefusal| Unidentified {
                    message: "the load balancer's sign-in header is missing or not valid; reload the page",
                    reason: reason.to_string(),
                    bearer: false,
                    status: StatusCode::UNAUTHORIZED,
                };
                let token = headers
                    .get(alb::HEADER)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| refused(alb::AlbRefusal::Missing))?;
                let user = Box::pin(verifier.verify(token, crate::clock::unix_seconds()))
                    .await
                    .map_err(refused)?;
                Ok(plain(Identity {
                    roles: roles.roles_of(&user.groups),
                    name: user.name,
                }))
            }
        }
    }
}

/// [`judge`] of a request routed by axum.
fn judged(request: &Request) -> Judged {
    let matched = request.extensions().get::<MatchedPath>();
    judge(
        request.method(),
        matched.map(MatchedPath::as_str),
        request.uri().path(),
    )
}

/// Who is asking, in front of every route (a layer of the whole router,
/// so that it knows the route axum matched): the host, another site's
/// page, the identity where the route needs one, a session's origin, and
/// the role the route needs.
pub async fn authorize(State(access): State<Access>, mut request: Request, next: Next) -> Response {
    let judged = judged(&request);
    let mutation = judged.changes_state;
    if mutation && is_cross_site(&request, access.scheme) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "changes are refused from other sites' pages",
        )
        .into_response();
    }
    if !access.hosts.admit(&request) {
        return access.hosts.refusal().into_response();
    }
    if !judged.identified {
        return next.run(request).await;
    }
    let identified = match access.auth.identify(request.headers()).await {
        Ok(identified) => identified,
        Err(unidentified) => return unidentified.into_response(),
    };
    // A cookie comes with every request the browser makes, so a change
    // made with one must name this console's page as its origin.
    if identified.by_cookie
        && mutation
        && let Some(oidc) = access.oidc()
        && !from_page_of(request.headers(), oidc.origin())
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!("changes with a session must come from {}", oidc.origin()),
        )
        .into_response();
    }
    tracing::Span::current().record("who", identified.identity.name.as_str());
    if let Err(refused) = judged.require_role(&identified.identity) {
        return refused.into_response();
    }
    if let Some(session) = identified.session {
        request.extensions_mut().insert(session);
    }
    request.extensions_mut().insert(identified.identity);
    next.run(request).await
}

impl Judged {
    /// The one role check: `identity` must hold the role the route needs,
    /// or is refused in the route's words ("scaling an endpoint needs the
    /// operator role; ...").
    fn require_role(&self, identity: &Identity) -> Result<(), ApiError> {
        match self.needs {
            Some(role) => Ok(identity.require(role, self.action)?),
            None => Ok(()),
        }
    }
}

/// [`authorize`]'s role check for a layer that puts the identity in
/// `request` itself (the tests' stand-in for sign-in): judged inside the
/// route, so that a method a path does not serve is judged too.
pub fn require_role(request: &Request) -> Result<(), ApiError> {
    let judged = judged(request);
    if judged.needs.is_none() {
        return Ok(());
    }
    let identity = request
        .extensions()
        .get::<Identity>()
        .ok_or_else(identity::no_identity)?;
    judged.require_role(identity)
}

/// Where a browser says a request comes from: `same-origin`, `same-site`,
/// `cross-site` or `none` (typed in).
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// Whether a browser says this request comes from a page of `origin`: its
/// `Origin`, or its `Sec-Fetch-Site` (which pages cannot set). A form post
/// from a page with `Referrer-Policy: no-referrer`, as the console's, sends
/// `Origin: null`, and only the latter tells.
pub fn from_page_of(headers: &HeaderMap, origin: &str) -> bool {
    let site = headers.get(SEC_FETCH_SITE).map(|s| s.as_bytes());
    let sent = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    site == Some(b"same-origin") || sent == Some(origin)
}

/// Whether a browser says this request comes from another site: its
/// `Sec-Fetch-Site`, or else an `Origin` other than the address it was sent
/// to (`scheme://Host`: an origin is its scheme too, so an https page is
/// not an http console's). Clients that are not browsers send neither.
fn is_cross_site(request: &Request, scheme: &str) -> bool {
    let headers = request.headers();
    if let Some(site) = headers.get(SEC_FETCH_SITE) {
        return !matches!(site.as_bytes(), b"same-origin" | b"none");
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let origin = origin.to_str().ok().and_then(|o| url::Url::parse(o).ok());
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let addressed = host.and_then(|host| url::Url::parse(&format!("{scheme}://{host}")).ok());
    match (origin, addressed) {
        // Compared as origins: case and default ports do not count.
        (Some(origin), Some(addressed)) => origin.origin() != addressed.origin(),
        // `Origin: null` (a sandboxed frame, a file), or no Host to compare.
        _ => true,
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
            assert!(!is_cross_site(&request(&same), "http"), "{same:?}");
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
            assert!(is_cross_site(&request(&cross), "http"), "{cross:?}");
        }
        // The scheme is part of the origin (the probe's
        // `Origin: https://127.0.0.1:8711` on an http console).
        let https_page = [host, ("origin", "https://127.0.0.1:8080")];
        assert!(is_cross_site(&request(&https_page), "http"));
        assert!(!is_cross_site(&request(&https_page), "https"));
        let behind_alb = [
            ("host", "console.example.com"),
            ("origin", "https://console.example.com"),
        ];
        assert!(!is_cross_site(&request(&behind_alb), "https"));
        assert!(is_cross_site(&request(&behind_alb), "http"));
        let default_port = [
            ("host", "console.example.com:443"),
            ("origin", "https://console.example.com"),
        ];
        assert!(!is_cross_site(&request(&default_port), "https"));
    }

    #[test]
    fn routes_need_the_role_of_what_they_do() {
        // A request as axum routes it: the template it matched, if any.
        let need = |m: Method, matched: Option<&str>, p: &str| judge(&m, matched, p).needs;
        let rest = Some("/api/{*rest}");
        let endpoints = Some(route::ENDPOINTS);
        assert_eq!(
            need(Method::GET, endpoints, "/api/endpoints"),
            Some(Role::Viewer)
        );
        assert_eq!(
            need(Method::POST, Some(route::VALIDATE), route::VALIDATE),
            Some(Role::Viewer)
        );
        assert_eq!(
            need(Method::POST, Some(route::MANIFESTS), route::MANIFESTS),
            Some(Role::Viewer)
        );
        assert_eq!(
            need(Method::POST, endpoints, "/api/endpoints"),
            Some(Role::Operator)
        );
        assert_eq!(
            need(
                Method::PUT,
                Some(route::REPLICAS),
                "/api/endpoints/a/replicas"
            ),
            Some(Role::Operator)
        );
        assert_eq!(
            need(Method::POST, Some(route::REVERT), "/api/endpoints/a/revert"),
            Some(Role::Operator)
        );
        assert_eq!(
            need(Method::DELETE, Some(route::ENDPOINT), "/api/endpoints/a"),
            Some(Role::Admin)
        );
        // A method the path does not serve: by the method alone.
        assert_eq!(
            need(Method::PUT, Some(route::ENDPOINT), "/api/endpoints/a"),
            Some(Role::Operator)
        );
        // Removing a region is a change, not a delete.
        assert_eq!(
            need(
                Method::DELETE,
                Some(route::REGION),
                "/api/endpoints/a/regions/eu-west-1"
            ),
            Some(Role::Operator)
        );
        let config = Some(route::CONFIG);
        assert_eq!(need(Method::GET, config, route::CONFIG), None);
        assert_eq!(need(Method::HEAD, config, route::CONFIG), None);
        assert_eq!(
            need(Method::POST, config, route::CONFIG),
            Some(Role::Operator)
        );
        // Who is asking: any identity, a user with no role too.
        assert_eq!(need(Method::GET, Some(route::ME), route::ME), None);
        assert!(judge(&Method::GET, Some(route::ME), route::ME).identified);
        assert!(!judge(&Method::GET, config, route::CONFIG).identified);
        assert_eq!(need(Method::GET, Some("/api"), "/api"), Some(Role::Viewer));
        assert_eq!(need(Method::GET, rest, "/api/nothing"), Some(Role::Viewer));
        assert_eq!(need(Method::GET, Some(route::HEALTHZ), "/healthz"), None);
        let metrics = Some(crate::metrics::PATH);
        assert_eq!(need(Method::GET, metrics, "/metrics"), Some(Role::Viewer));
        assert_eq!(need(Method::GET, None, "/apis"), None);
        assert_eq!(
            need(Method::GET, Some(route::SIGN_IN), route::SIGN_IN),
            None
        );
        assert_eq!(
            judge(
                &Method::PUT,
                Some(route::REPLICAS),
                "/api/endpoints/a/replicas"
            )
            .action,
            "scaling an endpoint"
        );
        assert!(!judge(&Method::POST, Some(route::VALIDATE), route::VALIDATE).changes_state);
        assert!(judge(&Method::POST, Some(route::SIGN_OUT), route::SIGN_OUT).changes_state);
        assert!(judge(&Method::PATCH, Some(route::ENDPOINT), "/api/endpoints/a").changes_state);
    }
}
