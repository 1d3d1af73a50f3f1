//! `GET /api/history` and its export: every endpoint's changes, newest
//! first, filtered ([`crate::audit`]). Each parameter is checked, and a bad
//! one refused (400) by its name.

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gco_api::{AuditPage, ExportFormat, Role, operation, route};
use utoipa::IntoParams;
use utoipa::openapi::Required;
use utoipa::openapi::path::{Parameter, ParameterIn};

use super::AppState;
use super::doc::AuditErrors;
use super::error::{ApiError, json_response};
use super::extract::{history_page_limit, known_once, parameter, query_pairs, string};
use crate::audit::{self, AuditFilter, Position};
use crate::service::Actor;

/// The filters' parameters, then the page's.
const FILTERS: [&str; 6] = ["who", "operation", "endpoint", "q", "from", "to"];

/// The most characters of a filter's text: a name, an identity.
const MAX_FILTER_CHARS: usize = 512;

/// The audit view's query: its filter, and a page of it.
pub struct AuditQuery {
    pub filter: AuditFilter,
    pub after: Option<Position>,
    pub limit: usize,
}

/// The export's query: the filter, and the format.
pub struct ExportQuery {
    pub filter: AuditFilter,
    pub format: ExportFormat,
}

fn bad(name: &str, message: String) -> ApiError {
    ApiError::field(StatusCode::BAD_REQUEST, name, message)
}

/// The filters of `query` (taken out of it), each checked.
fn filter_of(
    query: &mut std::collections::HashMap<String, String>,
) -> Result<AuditFilter, ApiError> {
    let mut take = |name: &str| -> Result<Option<String>, ApiError> {
        match query.remove(name).filter(|v| !v.is_empty()) {
            Some(v) if v.chars().count() > MAX_FILTER_CHARS => Err(bad(
                name,
                format!("{name} must be at most {MAX_FILTER_CHARS} characters"),
            )),
            other => Ok(other),
        }
    };
    let who = take("who")?;
    let operation = take("operation")?;
    if let Some(op) = &operation
        && !operation::RECORDED.contains(&op.as_str())
    {
        return Err(bad(
            "operation",
            format!(
                "operation must be one of {}, got {op:?}",
                operation::RECORDED.join(", ")
            ),
        ));
    }
    // At most MAX_FILTER_CHARS characters: under the table's name limit, so
    // no longer check is needed here.
    let endpoint = take("endpoint")?;
    let search = take("q")?.map(|q| q.to_lowercase());
    let mut bound = |name: &str, end: bool| -> Result<Option<String>, ApiError> {
        take(name)?
            .map(|text| {
                audit::id_bound(&text, end).ok_or_else(|| {
                    bad(
                        name,
                        format!("{name} must be a date (2026-12-01) or an RFC 3339 time (2026-12-01T08:00:00Z, or with an offset), got {text:?}"),
                    )
                })
            })
            .transpose()
    };
    let from_id = bound("from", false)?;
    let to_id = bound("to", true)?;
    if let (Some(from), Some(to)) = (&from_id, &to_id)
        && to <= from
    {
        return Err(bad("to", "to must not be before from".into()));
    }
    Ok(AuditFilter {
        who,
        operation,
        endpoint,
        search,
        from_id,
        to_id,
    })
}

impl AuditQuery {
    fn from_pairs(pairs: Vec<(String, String)>) -> Result<AuditQuery, ApiError> {
        let mut known = FILTERS.to_vec();
        known.extend([route::AFTER_PARAMETER, "limit"]);
        let mut query = known_once(pairs, &known)?;
        let filter = filter_of(&mut query)?;
        let after = query
            .remove(route::AFTER_PARAMETER)
            .filter(|s| !s.is_empty())
            .map(|text| {
                Position::decode(&text).ok_or_else(|| {
                    bad(
                        route::AFTER_PARAMETER,
                        "after must be the next of an earlier page of the history".into(),
                    )
                })
            })
            .transpose()?;
        let limit = history_page_limit(&mut query)?;
        Ok(AuditQuery {
            filter,
            after,
            limit,
        })
    }
}

impl ExportQuery {
    fn from_pairs(pairs: Vec<(String, String)>) -> Result<ExportQuery, ApiError> {
        let mut known = FILTERS.to_vec();
        known.push(route::FORMAT_PARAMETER);
        let mut query = known_once(pairs, &known)?;
        let filter = filter_of(&mut query)?;
        let names = ExportFormat::ALL.map(ExportFormat::as_str).join(" or ");
        let format = match query.remove(route::FORMAT_PARAMETER) {
            Some(text) => ExportFormat::parse(&text).ok_or_else(|| {
                bad(
                    route::FORMAT_PARAMETER,
                    format!("format must be {names}, got {text:?}"),
                )
            })?,
            None => {
                return Err(bad(
                    route::FORMAT_PARAMETER,
                    format!("format is required: {names}"),
                ));
            }
        };
        Ok(ExportQuery { filter, format })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for AuditQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        AuditQuery::from_pairs(query_pairs(parts, state).await?)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ExportQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        ExportQuery::from_pairs(query_pairs(parts, state).await?)
    }
}

impl IntoParams for AuditQuery {
    fn into_params(place: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        gco_api::AuditQuery::into_params(place)
    }
}

impl IntoParams for ExportQuery {
    fn into_params(place: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let mut params: Vec<Parameter> = gco_api::AuditQuery::into_params(place)
            .into_iter()
            .filter(|p| FILTERS.contains(&p.name.as_str()))
            .collect();
        params.push(parameter(
            route::FORMAT_PARAMETER,
            ParameterIn::Query,
            Required::True,
            string().enum_values(Some(ExportFormat::ALL.map(ExportFormat::as_str))),
            Some("`jsonl`: one change per line, as the page's items; `csv`: a header row, then one change per row."),
        ));
        params
    }
}

/// Every endpoint's changes, newest first
///
/// The changes the console recorded, of every endpoint (a purged one's
/// too), filtered by who, operation, endpoint, a search over endpoint names
/// and a time range, one page at a time; each names its entry in the
/// endpoint's history, which holds the contents. Read by time from an
/// index, never by scanning the history. Changes made outside the console
/// are found on each endpoint's own history, not here.
#[utoipa::path(get, path = route::AUDIT, params(AuditQuery),
    responses((status = 200, description = "One page of changes, newest first; `next` leads to older ones (null on the last page; a short page may still have one).", body = AuditPage), AuditErrors))]
pub async fn page(
    State(service): State<AppState>,
    actor: Actor,
    query: AuditQuery,
) -> Result<Response, ApiError> {
    actor
        .identity
        .require(Role::Viewer, "reading the history")?;
    let read = service
        .audit(&query.filter, query.after.as_ref(), query.limit)
        .await?;
    let page = AuditPage {
        items: read.items,
        next: read.next.map(|p| p.encode()),
    };
    let body = gco_spec::json::to_value(&page).expect("a page is JSON");
    Ok(json_response(StatusCode::OK, &body))
}

/// One read of the export.
const EXPORT_PAGE: usize = 500;

/// Every change the audit view's filters admit, as a file
///
/// All of them, newest first, as JSON Lines (each line one of the page's
/// items) or CSV (a header row; a cell a spreadsheet would take for a
/// formula starts with `'`).
#[utoipa::path(get, path = route::AUDIT_EXPORT, params(ExportQuery),
    responses((status = 200, description = "The changes, as a download.", content((String = "application/x-ndjson"), (String = "text/csv"))), AuditErrors))]
pub async fn export(
    State(service): State<AppState>,
    actor: Actor,
    query: ExportQuery,
) -> Result<Response, ApiError> {
    actor
        .identity
        .require(Role::Viewer, "reading the history")?;
    let (content_type, extension) = match query.format {
        ExportFormat::JsonLines => ("application/x-ndjson", "jsonl"),
        ExportFormat::Csv => ("text/csv; charset=utf-8", "csv"),
    };
    let mut body = match query.format {
        ExportFormat::JsonLines => String::new(),
        ExportFormat::Csv => audit::csv_header(),
    };
    let mut after = None;
    loop {
        let read = service
            .audit(&query.filter, after.as_ref(), EXPORT_PAGE)
            .await?;
        for entry in &read.items {
            body.push_str(&match query.format {
                ExportFormat::JsonLines => audit::json_line(entry),
                ExportFormat::Csv => audit::csv_row(entry),
            });
        }
        match read.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let disposition = format!("attachment; filename=\"gco-history.{extension}\"");
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}
