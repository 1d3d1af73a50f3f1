//! Request bodies: JSON read by the core's parser (Python's semantics, exact
//! integers) under a size and a nesting limit. Nothing from the client is
//! trusted before it passes here.

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

/// A JSON request body.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<JsonBody, ApiError> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as Content-Type: application/json",
            ));
        }
        let bytes = read_limited(req.into_body(), MAX_BODY_BYTES).await?;
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            ApiError::field(StatusCode::BAD_REQUEST, "", "the body is not valid UTF-8")
        })?;
        parse_limited(text, MAX_BODY_DEPTH)
            .map(JsonBody)
            .map_err(|e| ApiError::field(StatusCode::BAD_REQUEST, "", format!("invalid JSON: {e}")))
    }
}

/// An optional JSON object body: empty bodies read as `{}` (for POST actions
/// that take no arguments).
pub fn object_field(body: &Value, key: &str) -> Value {
    body.as_object()
        .and_then(|o| o.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

mod bytes_body {
    use axum::body::{Body, Bytes};
    use axum::http::StatusCode;
    use http_body_util::BodyExt;

    use super::ApiError;

    pub async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ApiError> {
        let limited = http_body_util::Limited::new(body, limit);
        match limited.collect().await {
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
