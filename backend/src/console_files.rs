//! The console's files (`--dist`): its page, and the assets the build names
//! by content (`scripts/build-web.sh`).
//!
//! - An asset's name carries a digest of its bytes (`gco-web-<16 hex>.js`),
//!   so a name always means the same bytes: it is cached for a year and
//!   never asked again (`immutable`). A new release has new names.
//! - The page (`index.html`, answered for every console path) names the
//!   release's assets, so it must never be used without asking: `no-cache`,
//!   with an `ETag` of its bytes and a bodiless 304 while it is unchanged.
//!   It is read at each request (it is about a kilobyte), so a `dist/`
//!   replaced under a running console serves the new release at once.
//! - The build writes each asset's brotli and gzip forms beside it
//!   (`.br`, `.gz`); `ServeDir` sends the best form `Accept-Encoding`
//!   allows, and the plain file otherwise. Ranges are ignored (RFC 9110
//!   lets a server), so no client ever gets a slice of a compressed form.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tracing::Level;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::ApiError;

/// Console pages may run their own script and wasm and talk to this origin,
/// and nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// How an asset named by its content is cached: for a year, never revalidated.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// How the page is cached: kept, but asked again (a 304 while unchanged)
/// before each use. Behind a load balancer that signs users in, that is
/// also what makes "reload the page to sign in again" reach the load
/// balancer: a page taken from the cache would load without signing in.
pub const REVALIDATE: &str = "no-cache";

/// Hex digits of the content digest in an asset's name.
const DIGEST_HEX: usize = 16;

/// The console's files under `dist`, as a router to merge after the API's.
pub fn router(dist: &Path) -> Router {
    let page = axum::routing::any(console_page).with_state(dist.join("index.html"));
    let files = ServeDir::new(dist)
        .precompressed_br()
        .precompressed_gzip()
        // `/` is the page, answered with its tag like every other path.
        .append_index_html_on_directories(false)
        .fallback(page);
    Router::new()
        .fallback_service(files)
        .layer(axum::middleware::from_fn(cache_policy))
        .layer(axum::middleware::map_request(without_ranges))
        .layer(SetResponseHeaderLayer::overriding(
            header::ACCEPT_RANGES,
            HeaderValue::from_static("none"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
}

/// Whether the last segment of `path` is an asset named by its content:
/// `<stem>-<16 lowercase hex>.<extension>`.
pub fn is_content_named(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    let Some((_, digest)) = stem.rsplit_once('-') else {
        return false;
    };
    !extension.is_empty()
        && digest.len() == DIGEST_HEX
        && digest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Sets each answer's `Cache-Control` by what it is: a content-named asset
/// found is immutable; anything else (the page, a 404) is asked again.
/// Every file answer varies with `Accept-Encoding` (its compressed forms).
async fn cache_policy(request: Request, next: Next) -> Response {
    let content_named = is_content_named(request.uri().path());
    let mut response = next.run(request).await;
    let found =
        response.status() == StatusCode::OK || response.status() == StatusCode::NOT_MODIFIED;
    let policy = if content_named && found {
        IMMUTABLE
    } else {
        REVALIDATE
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    if content_named {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    response
}

/// The console's files are answered whole: a server may ignore `Range`
/// (RFC 9110, section 14.2), and the files are small. `ServeDir` would
/// answer 416 to a range unit it does not know, which the RFC says to
/// ignore, and a range of a precompressed form is no range of the file.
async fn without_ranges(mut request: Request<Body>) -> Request<Body> {
    request.headers_mut().remove(header::RANGE);
    request
}

/// What a path that is no console file gets: the console's page, whose
/// script picks what to show from the path (`/endpoints/pd`), unless the
/// request is for a file (a name with an extension, asked for without
/// asking for a page): a missing `app.js`, or an asset of a release no
/// longer served, is a 404, not a page served as script.
async fn console_page(State(index): State<PathBuf>, request: Request<Body>) -> Response {
    let headers = request.headers();
    let asks_for_page = headers
        .get_all(header::ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.contains("text/html")));
    let last_segment = request.uri().path().rsplit('/').next().unwrap_or("");
    if !asks_for_page && last_segment.contains('.') {
        return ApiError::new(StatusCode::NOT_FOUND, "no such console file").into_response();
    }
    match tokio::fs::read(&index).await {
        Ok(page) => page_answer(page, headers),
        Err(error) => ApiError::new(
            StatusCode::NOT_FOUND,
            "the console's page is not built (scripts/build-web.sh)",
        )
        .logged(
            Level::ERROR,
            "the console's page cannot be read",
            format!("{}: {error}", index.display()),
        )
        .into_response(),
    }
}

/// The page with its tag, or a bodiless 304 when the request holds it.
fn page_answer(page: Vec<u8>, request: &HeaderMap) -> Response {
    let tag = format!("\"{:016x}\"", xxh3_64(&page));
    let tag = HeaderValue::from_str(&tag).expect("hex in quotes is a header value");
    let held = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t.as_bytes() == tag.as_bytes());
    let mut response = if held {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            )],
            page,
        )
            .into_response()
    };
    response.headers_mut().insert(header::ETAG, tag);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_names() {
        for name in [
            "/gco-web-0123456789abcdef.js",
            "/gco-web_bg-0123456789abcdef.wasm",
            "/style-fedcba9876543210.css",
            "/snippets/x/inline0-0123456789abcdef.js",
        ] {
            assert!(is_content_named(name), "{name}");
        }
        for name in [
            "/",
            "/index.html",
            "/gco-web.js",
            "/gco-web-0123456789ABCDEF.js",
            "/gco-web-0123456789abcde.js",
            "/gco-web-0123456789abcdef0.js",
            "/gco-web-0123456789abcdef",
            "/endpoints/chat-0123456789abcdef",
            "/gco-web-0123456789abcdeg.js",
            "/-0123456789abcdef.",
        ] {
            assert!(!is_content_named(name), "{name}");
        }
    }

    #[test]
    fn the_page_is_asked_again_by_its_tag() {
        let first = page_answer(b"<!doctype html>".to_vec(), &HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        let tag = first.headers()[header::ETAG].clone();
        for held in [
            tag.to_str().unwrap().to_owned(),
            format!("W/{}", tag.to_str().unwrap()),
            format!("\"other\", {}", tag.to_str().unwrap()),
            "*".to_owned(),
        ] {
            let mut request = HeaderMap::new();
            request.insert(header::IF_NONE_MATCH, HeaderValue::from_str(&held).unwrap());
            let again = page_answer(b"<!doctype html>".to_vec(), &request);
            assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{held}");
            assert_eq!(again.headers()[header::ETAG], tag);
        }
        let mut request = HeaderMap::new();
        request.insert(header::IF_NONE_MATCH, tag);
        let changed = page_answer(b"<!doctype html><p>new".to_vec(), &request);
        assert_eq!(changed.status(), StatusCode::OK, "a new page is sent");
    }
}
