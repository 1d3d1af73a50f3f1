//! Conditional reads: a page polling a record or the list sends the tag it
//! holds in `If-None-Match` and gets a bodiless 304 while nothing changed.
//! Answers stay `Cache-Control: no-store` (the guard's): the console keeps
//! the body and its tag itself, no browser cache does.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::version::if_none_match_holds;

/// A 304 with the tag, when the request's `If-None-Match` lists `tag`
/// (every line of the header is one list). A header that is not ASCII
/// lists no tag of ours: the full answer follows.
pub fn not_modified(headers: &HeaderMap, tag: &str) -> Option<Response> {
    let mut lines = headers.get_all(header::IF_NONE_MATCH).iter().peekable();
    lines.peek()?;
    let lines: Vec<&str> = lines.map(|v| v.to_str()).collect::<Result<_, _>>().ok()?;
    if !if_none_match_holds(&lines.join(", "), tag) {
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
