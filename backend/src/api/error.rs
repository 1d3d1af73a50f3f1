//! What the API answers for each way the service refuses or fails, in the
//! one error shape ([`crate::error`]), with the detail for the log.

use axum::http::StatusCode;
use gco_spec::{Diagnostic, OpErrorKind, Report};
use tracing::Level;

use crate::error::summary_of;
pub use crate::error::{ApiError, answer, json_response};
use crate::service::ServiceError;
use crate::store::StoreError;

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
        log: None,
    }
}

/// A store's failure as the log says it.
fn store_failure(error: ApiError, e: StoreError) -> ApiError {
    match e {
        StoreError::Unavailable(detail) => error.logged(Level::ERROR, "store unavailable", detail),
        StoreError::Rejected(detail) => {
            error.logged(Level::ERROR, "store refused the call", detail)
        }
        // Creates and updates answer these themselves; a read never does.
        other => error.logged(
            Level::ERROR,
            "a store call answered a write's outcome",
            other.to_string(),
        ),
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
                gco_spec::deploy::name_taken_message(&name),
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
            ServiceError::Unavailable(e) => store_failure(
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the endpoint store is unavailable; try again shortly",
                ),
                e,
            ),
            ServiceError::Unconfirmed(e) => store_failure(
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the endpoint store did not confirm the change, which may or may not have been saved; reload before trying again",
                ),
                e,
            ),
            ServiceError::NotSaved(reason) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the change was not saved: {reason}"),
            )
            .logged(Level::WARN, "a change was not saved", reason),
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
            ServiceError::Forbidden(refusal) => refusal.into(),
            // The item's own field and what is wrong with it: the table's
            // content, which whoever may read the endpoint may read.
            ServiceError::Corrupt(unreadable) => {
                let detail = format!("{}: {unreadable}", unreadable.endpoint_name);
                ApiError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    summary: summary_of(&format!(
                        "the stored endpoint '{}' could not be read",
                        unreadable.endpoint_name
                    )),
                    errors: vec![Diagnostic::error(&unreadable.path, unreadable.message)],
                    log: None,
                }
                .logged(Level::ERROR, "unreadable item in the store", detail)
            }
        }
    }
}
