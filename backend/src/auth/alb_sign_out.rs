//! `--auth alb`: Sign out. The load balancer keeps its session in its own
//! cookies (`AWSELBAuthSessionCookie-0`, `-1`, ...: one session split in
//! shards), which it forwards to the console with every request. Signing
//! out expires every shard, as AWS's guide says an application does, then
//! sends the browser to the identity provider's logout URL
//! (`--alb-logout-url`); without one, the provider's own session stays and
//! the page says that the next visit may sign the same user in unasked.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use gco_api::route;

use super::oidc::{go_on, page, removal};

/// The name the ALB gives its session cookie's shards, before `-<n>`.
pub const SESSION_COOKIE_PREFIX: &str = "AWSELBAuthSessionCookie-";
/// Shards expired even when the request does not carry them (a browser may
/// hold ones this path did not receive): the ALB splits a session cookie
/// over a few shards of up to 4 KB each.
const SHARDS: usize = 4;

/// Where a sign-out behind the load balancer goes on.
#[derive(Default)]
pub struct AlbSignOut {
    /// `--alb-logout-url`: the identity provider's logout URL.
    pub logout_url: Option<String>,
}

impl AlbSignOut {
    /// `POST /auth/sign-out`.
    pub fn router<S>(self: Arc<Self>) -> Router<S> {
        Router::new()
            .route(route::SIGN_OUT, axum::routing::post(sign_out))
            .with_state(self)
    }
}

/// Removals of every shard of the ALB's session cookie: those the request
/// carries and the first [`SHARDS`].
fn expired_shards(headers: &HeaderMap) -> CookieJar {
    let mut names: Vec<String> = (0..SHARDS)
        .map(|n| format!("{SESSION_COOKIE_PREFIX}{n}"))
        .collect();
    for cookie in CookieJar::from_headers(headers).iter() {
        let name = cookie.name();
        if name.starts_with(SESSION_COOKIE_PREFIX) && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
        .into_iter()
        .fold(CookieJar::new(), |jar, name| jar.add(removal(name, "/")))
}

async fn sign_out(State(out): State<Arc<AlbSignOut>>, headers: HeaderMap) -> Response {
    let jar = expired_shards(&headers);
    tracing::info!(
        logout = out.logout_url.is_some(),
        "signed out of the load balancer's session"
    );
    let page = match &out.logout_url {
        Some(url) => go_on(
            url,
            "The load balancer's session has ended; on to your identity provider, to end its session too.",
        ),
        None => page(
            StatusCode::OK,
            "Signed out",
            "The load balancer's session has ended. Your identity provider may still sign you in again without asking: this console has no --alb-logout-url to end its session too.",
            ("/", "Sign in again"),
        ),
    };
    (jar, page).into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderValue, header};

    use super::*;

    #[test]
    fn every_shard_is_expired() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static(
                "AWSELBAuthSessionCookie-0=a; AWSELBAuthSessionCookie-7=b; other=c",
            ),
        );
        let jar = expired_shards(&headers);
        let mut set: Vec<String> = jar.iter().map(|c| c.encoded().to_string()).collect();
        set.sort();
        assert_eq!(set.len(), 5, "{set:?}");
        for n in [0, 1, 2, 3, 7] {
            let line = set
                .iter()
                .find(|l| l.starts_with(&format!("AWSELBAuthSessionCookie-{n}=;")))
                .unwrap_or_else(|| panic!("shard {n} in {set:?}"));
            assert!(
                line.contains("Path=/") && line.contains("Max-Age=0"),
                "{line}"
            );
        }
        assert!(!set.iter().any(|l| l.starts_with("other=")));
    }
}
