//! Conditional reads: a page polling a record or the list sends the tag it
//! holds in `If-None-Match` and gets a bodiless 304 while nothing changed.
//! Answers stay `Cache-Control: no-store` (the guard's): the console keeps
//! the body and its tag itself, no browser cache does.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::IfNoneMatch;
use crate::version::if_none_match_holds;

/// A 304 with the tag, when `If-None-Match` (as [`IfNoneMatch`] read it)
/// lists `tag`.
pub fn not_modified(IfNoneMatch(tags): &IfNoneMatch, tag: &str) -> Option<Response> {
    if !if_none_match_holds(tags.as_deref()?, tag) {
        return None;
    }
    Some(with_etag(StatusCode::NOT_MODIFIED.into_response(), tag))
}

/// `response` with `ETag: tag`. Tags are made of header-safe characters
/// (see [`crate::version`]), so the header is always set.
pub fn with_etag(mut response: Response, tag: &str) -> Response {
    if let Ok(tag) = HeaderValue::from_str(tag) {
        response.headers_mut().insert(header::ETAG, tag);
    }
    response
}
