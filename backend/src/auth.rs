//! Bearer-token protection of every mutation.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::ApiError;

/// The token mutations must present, when one is configured.
#[derive(Clone)]
pub struct AuthToken(pub Option<Arc<str>>);

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

/// A request that changes something: any method but GET/HEAD/OPTIONS, except
/// `/api/validate`, which stores nothing.
fn is_mutation(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) && path != "/api/validate"
}

pub async fn require_token(
    State(token): State<AuthToken>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &token.0 else {
        return next.run(request).await;
    };
    if !is_mutation(request.method(), request.uri().path()) {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
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
    use super::*;

    #[test]
    fn compares_whole_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
