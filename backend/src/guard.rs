//! The outermost checks of every request, and the one error shape on every
//! error response, whoever produced it (a handler, axum's router, the static
//! files), so hostile requests always get a 4xx the client can read; and
//! the headers every response carries.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Version, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::MAX_BODY_BYTES;
use crate::error::ApiError;

/// Largest total size of the request headers (431 beyond). Browsers send a
/// few KiB; hyper itself refuses only far larger heads (about 400 KiB), and
/// without a body.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// The load balancer's signed identity, a header of one value.
const ALB_IDENTITY: HeaderName = HeaderName::from_static(crate::auth::alb::HEADER);

pub async fn guard(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let api = path == "/api" || path.starts_with("/api/");
    let mut response = match refuse(&request) {
        Some(refusal) => refusal.into_response(),
        None => with_error_shape(next.run(request).await),
    };
    let headers = response.headers_mut();
    // The API's answers are the table's current state (env values
    // included): no cache keeps them, refusals included. The console's files
    // may be cached.
    if api {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    // Every answer: no page of ours in another site's frame, no type
    // guessed from content, no address of ours in another site's logs.
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// What is refused before any route sees the request.
fn refuse(request: &Request) -> Option<ApiError> {
    let headers = request.headers();
    let header_bytes: usize = headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if header_bytes > MAX_HEADER_BYTES {
        let message = format!(
            "the request headers are larger than {} KiB",
            MAX_HEADER_BYTES / 1024
        );
        return Some(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            message,
        ));
    }
    // Refused on the declared length, before a byte of the body is read, on
    // every route (those that read no body included).
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        let message = format!("the body is larger than {} KiB", MAX_BODY_BYTES / 1024);
        return Some(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, message));
    }
    // RFC 9112, section 3.2: exactly one Host in an HTTP/1.1 request; an
    // older one may have none, but never two.
    let hosts = headers.get_all(header::HOST).iter().count();
    if request.version() == Version::HTTP_11 && hosts != 1 {
        return Some(ApiError::field(
            StatusCode::BAD_REQUEST,
            "Host",
            "an HTTP/1.1 request needs exactly one Host header",
        ));
    }
    if hosts > 1 {
        return Some(ApiError::field(
            StatusCode::BAD_REQUEST,
            "Host",
            "a request has at most one Host header",
        ));
    }
    // Fields with one value (RFC 9110, section 5.3): given twice, which one
    // counts would be a guess, and a proxy in front may have guessed
    // otherwise.
    // The load balancer's signed identity is one of them, in every mode.
    for (name, field) in [
        (header::CONTENT_TYPE, "Content-Type"),
        (header::AUTHORIZATION, "Authorization"),
        (ALB_IDENTITY, crate::auth::alb::HEADER),
    ] {
        if headers.get_all(&name).iter().nth(1).is_some() {
            return Some(ApiError::field(
                StatusCode::BAD_REQUEST,
                field,
                format!("a request has at most one {field} header"),
            ));
        }
    }
    // hyper decodes chunked only; another coding would reach the handlers
    // still encoded. RFC 9112 (section 6.1) suggests 501, but a client's
    // odd request should not look like a server failure: 400.
    if lists_other_than(headers, header::TRANSFER_ENCODING, "chunked") {
        return Some(ApiError::field(
            StatusCode::BAD_REQUEST,
            "Transfer-Encoding",
            "only the chunked transfer coding is supported",
        ));
    }
    // Bodies are read as sent: an encoded one would reach the handlers
    // still compressed (RFC 9110, section 8.4: 415).
    if lists_other_than(headers, header::CONTENT_ENCODING, "identity") {
        return Some(ApiError::field(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Encoding",
            "request bodies are not decoded: send them without a Content-Encoding",
        ));
    }
    // RFC 9112, section 3.2.3: a bare `host:port` target is for CONNECT
    // only; it names no path, and no route here answers one.
    if request.uri().scheme().is_none() && request.uri().authority().is_some() {
        return Some(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the request target must be a path (or an absolute URL)",
        ));
    }
    // `//name` would reach the console's files, whose redirects to `//name/`
    // a browser reads as another site.
    if escapes(request.uri().path()) || request.uri().path().starts_with("//") {
        return Some(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the path is not valid",
        ));
    }
    None
}

/// Whether the coding lists of header `name` (every line, comma-separated)
/// hold a coding other than `allowed`; a value that is not text counts as one.
fn lists_other_than(headers: &HeaderMap, name: HeaderName, allowed: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .any(|c| !c.trim().eq_ignore_ascii_case(allowed))
}

/// A path that names a parent directory, a Windows separator or NUL once
/// percent-decoded (as the static files decode it). The static files refuse
/// these themselves, but then fall back to the console page with a 200.
fn escapes(path: &str) -> bool {
    let decoded: std::borrow::Cow<[u8]> = percent_encoding::percent_decode_str(path).into();
    escapes_decoded(&decoded)
}

/// [`escapes`] for a path already decoded.
fn escapes_decoded(decoded: &[u8]) -> bool {
    decoded.contains(&b'\\')
        || decoded.contains(&0)
        || decoded
            .split(|b| *b == b'/')
            .any(|segment| segment == b"..")
}

/// An error response without a JSON body (axum's 405, the static files'
/// refusals) gets the API's error shape; its other headers (`Allow`) stay.
fn with_error_shape(response: Response) -> Response {
    let status = response.status();
    // JSON is the shape already; a page (the sign-in's) is read by a
    // person, and keeps its words.
    let shaped_already = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| {
            let v = v.as_bytes();
            v.starts_with(b"application/json") || v.starts_with(b"text/html")
        });
    if !(status.is_client_error() || status.is_server_error()) || shaped_already {
        return response;
    }
    let summary = status
        .canonical_reason()
        .unwrap_or("the request failed")
        .to_lowercase();
    let mut shaped = ApiError::new(status, summary).into_response();
    for (name, value) in response.headers() {
        // The new body is plain JSON: the old one's type, length and coding
        // do not describe it.
        if name != header::CONTENT_TYPE
            && name != header::CONTENT_LENGTH
            && name != header::CONTENT_ENCODING
        {
            shaped.headers_mut().insert(name, HeaderValue::clone(value));
        }
    }
    shaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_escaping_paths() {
        for path in [
            "/..",
            "/a/../b",
            "/%2e%2e/etc",
            "/%2E%2e%2fetc",
            "/a%5c..",
            "/x%00",
            "/a\\b",
        ] {
            assert!(escapes(path), "{path}");
        }
        for path in [
            "/",
            "/api/endpoints/a..b",
            "/assets/app.js",
            "/...",
            "/%2e",
            "/%zz",
        ] {
            assert!(!escapes(path), "{path}");
        }
    }
}
