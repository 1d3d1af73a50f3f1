//! The one error shape of every answer the console makes itself:
//! `{"error": "<summary>", "errors": [{"path": ..., "message": ...}]}`
//! (with `errors_omitted` when the list was cut), and what the log says of
//! it. An error is logged once, by [`log_answer`], as the outermost layer
//! (the request's trace, [`crate::app`]) sees the answer: the code that
//! makes an error attaches its detail ([`ApiError::logged`]), never logs it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use gco_api::ErrorBody;
use gco_spec::Diagnostic;
use gco_spec::json::Value;
use tracing::Level;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub summary: String,
    pub errors: Vec<Diagnostic>,
    /// What the log says of it; clients never see it.
    pub log: Option<Logged>,
}

impl ApiError {
    pub fn new(status: StatusCode, summary: impl Into<String>) -> ApiError {
        ApiError {
            status,
            summary: summary.into(),
            errors: Vec::new(),
            log: None,
        }
    }

    /// An error about one field: the message is its summary too, cut to
    /// [`MAX_SUMMARY_CHARS`].
    pub fn field(status: StatusCode, path: &str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            status,
            summary: summary_of(&message),
            errors: vec![Diagnostic::error(path, message)],
            log: None,
        }
    }

    /// With a line for the log: `what` happened, `detail` for whoever
    /// reads the log (a store's error, the reason a sign-in failed).
    pub fn logged(
        mut self,
        level: Level,
        what: &'static str,
        detail: impl Into<String>,
    ) -> ApiError {
        self.log = Some(Logged {
            level,
            what,
            detail: detail.into(),
        });
        self
    }
}

/// An answer's line in the log, carried in the response's extensions to
/// [`log_answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub level: Level,
    pub what: &'static str,
    pub detail: String,
}

impl Logged {
    fn write(&self) {
        let Logged {
            level,
            what,
            detail,
        } = self;
        match *level {
            Level::ERROR => tracing::error!(%detail, "{what}"),
            Level::WARN => tracing::warn!(%detail, "{what}"),
            Level::INFO => tracing::info!(%detail, "{what}"),
            _ => tracing::debug!(%detail, "{what}"),
        }
    }
}

/// Logs the line an answer carries ([`Logged`]): the one place errors are
/// logged, once per request, in its span (id, method, path, who).
pub fn log_answer<B>(response: &axum::http::Response<B>) {
    if let Some(logged) = response.extensions().get::<Logged>() {
        logged.write();
    }
}

/// Longest summary, in characters. A message quotes the value at fault,
/// which may be most of a 256 KiB body (a number of 250,000 digits): whole
/// in `errors`, where a client reads it, and once is enough.
pub const MAX_SUMMARY_CHARS: usize = 200;

pub fn summary_of(message: &str) -> String {
    match message.char_indices().nth(MAX_SUMMARY_CHARS) {
        None => message.to_owned(),
        Some((cut, _)) => format!("{}...", &message[..cut]),
    }
}

/// A JSON response from a core value.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_json(),
    )
        .into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (errors, errors_omitted) = gco_api::listed(self.errors.iter());
        let body = ErrorBody {
            error: self.summary,
            errors,
            errors_omitted,
        };
        let mut response = json_response(self.status, &answer(&body));
        if let Some(logged) = self.log {
            response.extensions_mut().insert(logged);
        }
        response
    }
}

/// A typed answer as the core's JSON.
pub fn answer<T: serde::Serialize>(body: &T) -> Value {
    gco_spec::json::to_value(body).expect("the API's answers are JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_whole_in_errors_and_cut_in_the_summary() {
        let message = format!(
            "replicas must be an integer >= 0, got {}",
            "9".repeat(250_000)
        );
        let e = ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "replicas",
            message.clone(),
        );
        assert_eq!(e.errors[0].message, message);
        assert_eq!(e.summary.chars().count(), MAX_SUMMARY_CHARS + 3);
        assert!(e.summary.ends_with("999..."));
        let short = ApiError::field(
            StatusCode::NOT_FOUND,
            "endpoint_name",
            "Endpoint 'x' not found",
        );
        assert_eq!(short.summary, "Endpoint 'x' not found");
        let accented = "é".repeat(MAX_SUMMARY_CHARS + 1);
        assert_eq!(
            summary_of(&accented),
            format!("{}...", "é".repeat(MAX_SUMMARY_CHARS))
        );
    }

    #[test]
    fn the_log_line_travels_with_the_answer_not_to_the_client() {
        let response = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "down")
            .logged(Level::ERROR, "store unavailable", "timeout")
            .into_response();
        assert_eq!(
            response.extensions().get::<Logged>(),
            Some(&Logged {
                level: Level::ERROR,
                what: "store unavailable",
                detail: "timeout".into()
            })
        );
    }
}
