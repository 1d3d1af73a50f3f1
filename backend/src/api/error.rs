//! The one error shape of the API:
//! `{"error": "<summary>", "errors": [{"path": ..., "message": ...}]}`
//! (with `errors_omitted` when the list was cut).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use gco_api::ErrorBody;
use gco_spec::json::Value;
use gco_spec::{Diagnostic, OpErrorKind, Report};

use crate::service::ServiceError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub summary: String,
    pub errors: Vec<Diagnostic>,
}

impl ApiError {
    pub fn new(status: StatusCode, summary: impl Into<String>) -> ApiError {
        ApiError {
            status,
            summary: summary.into(),
            errors: Vec::new(),
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
        }
    }
}

/// Longest summary, in characters. A message quotes the value at fault,
/// which may be most of a 256 KiB body (a number of 250,000 digits): whole
/// in `errors`, where a client reads it, and once is enough.
pub const MAX_SUMMARY_CHARS: usize = 200;

fn summary_of(message: &str) -> String {
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
        json_response(self.status, &answer(&body))
    }
}

/// A typed answer as the core's JSON.
pub fn answer<T: serde::Serialize>(body: &T) -> Value {
    gco_spec::json::to_value(body).expect("the API's answers are JSON")
}

/// A 422 with every error of `report`, at its field.
pub fn invalid(report: Report) -> ApiError {
    let errors: Vec<Diagnostic> = report.errors().cloned().collect();
    let summary = match errors.len() {
        1 => "the request has 1 error".to_owned(),
        n => format!("the request has {n} errors"),
    };
    ApiError {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        summary,
        errors,
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> ApiError {
        match e {
            ServiceError::NotFound(name) => ApiError::field(
                StatusCode::NOT_FOUND,
                "endpoint_name",
                format!("Endpoint '{name}' not found"),
            ),
            ServiceError::Invalid(report) => invalid(report),
            ServiceError::AlreadyExists(name) => ApiError::field(
                StatusCode::CONFLICT,
                "endpoint_name",
                format!("Endpoint '{name}' already exists"),
            ),
            ServiceError::Refused(op) => {
                let status = match op.kind {
                    OpErrorKind::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
                    OpErrorKind::Conflict => StatusCode::CONFLICT,
                    // The caller's own condition (owner_label, lifecycle_id).
                    OpErrorKind::ConditionFailed => StatusCode::PRECONDITION_FAILED,
                };
                ApiError::field(status, &op.path, op.message)
            }
            ServiceError::Stale => ApiError::new(
                StatusCode::PRECONDITION_FAILED,
                "the endpoint changed since it was read; reload it and apply the change again",
            ),
            ServiceError::Busy {
                endpoint,
                operation,
            } => ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "Endpoint '{endpoint}' changed while being {operation}; retry after reading status"
                ),
            ),
            ServiceError::Unavailable => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the endpoint store is unavailable; try again shortly",
            ),
            ServiceError::Unconfirmed => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the endpoint store did not confirm the change, which may or may not have been saved; reload before trying again",
            ),
            ServiceError::NotSaved(reason) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the change was not saved: {reason}"),
            ),
            ServiceError::HistoryUnavailable(reason) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the history could not be read: {reason}"),
            ),
            ServiceError::HistoryOff => ApiError::new(
                StatusCode::NOT_FOUND,
                "this console records no history of changes: it runs with --history-table off",
            ),
            ServiceError::NoSuchEntry { endpoint, id } => ApiError::field(
                StatusCode::NOT_FOUND,
                "to",
                format!("Endpoint '{endpoint}' has no history entry '{id}'"),
            ),
            ServiceError::Forbidden {
                identity,
                needed,
                action,
            } => identity.require(needed, action).err().unwrap_or_else(|| {
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!("{action} needs the {needed} role"),
                )
            }),
            // The item's own field and what is wrong with it: the table's
            // content, which whoever may read the endpoint may read.
            ServiceError::Corrupt(unreadable) => ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                summary: summary_of(&format!(
                    "the stored endpoint '{}' could not be read",
                    unreadable.endpoint_name
                )),
                errors: vec![Diagnostic::error(&unreadable.path, unreadable.message)],
            },
        }
    }
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
}
