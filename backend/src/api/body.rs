//! Request bodies: JSON read by the core's parser (Python's semantics, exact
//! integers) under a size and a nesting limit. Nothing from the client is
//! trusted before it passes here.

use std::time::Duration;

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use bytes_body::read_limited;
use gco_spec::json::{Value, parse_limited};

use super::error::ApiError;

/// Largest request body accepted (413 beyond). A full deploy request is a
/// few KiB; this leaves room for large env maps without inviting abuse.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// Deepest JSON nesting accepted in a request. A spec is at most five levels
/// deep (`mooncake.autoscaling.decode.metrics[0]`); the margin is for
/// free-form blocks.
pub const MAX_BODY_DEPTH: usize = 32;

/// How long a client has to send a whole request body once its head is in
/// (408 beyond). The largest body accepted is 256 KiB, seconds of even a
/// slow link; without a deadline, a client sending a byte now and then
/// would hold its connection for ever.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// A JSON request body.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<JsonBody, ApiError> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_json_media_type);
        if !is_json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as Content-Type: application/json (UTF-8)",
            ));
        }
        let bytes = read_limited(req.into_body(), MAX_BODY_BYTES, BODY_TIMEOUT).await?;
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            ApiError::field(StatusCode::BAD_REQUEST, "", "the body is not valid UTF-8")
        })?;
        parse_limited(text, MAX_BODY_DEPTH)
            .map(JsonBody)
            .map_err(|e| ApiError::field(StatusCode::BAD_REQUEST, "", format!("invalid JSON: {e}")))
    }
}

/// `application/json`, with no charset or UTF-8's: JSON text is UTF-8
/// (RFC 8259), and a body declared in another charset would be misread.
fn is_json_media_type(value: &str) -> bool {
    let mut parts = value.split(';');
    let media_type = parts.next().unwrap_or_default();
    media_type.trim().eq_ignore_ascii_case("application/json")
        && parts.all(|parameter| match parameter.split_once('=') {
            Some((name, charset)) if name.trim().eq_ignore_ascii_case("charset") => {
                let charset = charset.trim().trim_matches('"');
                charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8")
            }
            _ => true,
        })
}

/// The JSON body of a change to a stored record: refused (422, at the
/// field) when it holds a value no store can keep as it is (a lone
/// surrogate, an integer too long for a DynamoDB number).
pub struct StorableBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for StorableBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<StorableBody, ApiError> {
        let JsonBody(body) = JsonBody::from_request(req, state).await?;
        match gco_spec::table::unstorable_value(&body) {
            None => Ok(StorableBody(body)),
            Some(d) => Err(ApiError::field(
                StatusCode::UNPROCESSABLE_ENTITY,
                &d.path,
                d.message,
            )),
        }
    }
}

mod bytes_body {
    use std::time::Duration;

    use axum::body::{Body, Bytes};
    use axum::http::StatusCode;
    use http_body_util::BodyExt;

    use super::ApiError;

    pub async fn read_limited(
        body: Body,
        limit: usize,
        deadline: Duration,
    ) -> Result<Bytes, ApiError> {
        let limited = http_body_util::Limited::new(body, limit);
        let Ok(read) = tokio::time::timeout(deadline, limited.collect()).await else {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("the body did not arrive within {} s", deadline.as_secs()),
            ));
        };
        match read {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e)
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is larger than {} KiB", limit / 1024),
                ))
            }
            Err(_) => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "the body could not be read",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use axum::body::{Body, Bytes};
    use axum::http::StatusCode;
    use http_body::Frame;

    use super::*;

    /// A body whose client sends its head and then nothing.
    struct Stalled;

    impl http_body::Body for Stalled {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }

    #[test]
    fn json_in_utf8_only() {
        for ok in [
            "application/json",
            "Application/JSON ; charset=UTF-8",
            "application/json; charset=\"utf-8\"",
            "application/json;charset=utf8",
        ] {
            assert!(is_json_media_type(ok), "{ok}");
        }
        for refused in [
            "text/json",
            "application/json-seq",
            "application/json; charset=latin-1",
            "application/json; charset=utf-16",
        ] {
            assert!(!is_json_media_type(refused), "{refused}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_does_not_arrive_in_time_is_refused() {
        let refused = read_limited(Body::new(Stalled), MAX_BODY_BYTES, BODY_TIMEOUT)
            .await
            .expect_err("a stalled body is refused");
        assert_eq!(refused.status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(refused.summary, "the body did not arrive within 30 s");
        let whole = read_limited(Body::from("{}"), MAX_BODY_BYTES, BODY_TIMEOUT).await;
        assert_eq!(whole.ok().as_deref(), Some(&b"{}"[..]));
    }
}
