//! The JSON API (see `openapi.json` for the contract).

mod body;
mod conditional;
mod error;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use gco_spec::json::{Object, Value};
use gco_spec::{Change, DesiredState};

pub use body::{BODY_TIMEOUT, MAX_BODY_BYTES, MAX_BODY_DEPTH};
use body::{JsonBody, StorableBody, object_field};
pub use error::ApiError;
use error::{insert_diagnostics, json_response};

use crate::listing::{Cursor, Filter, Listing, MAX_PAGE, Page};
use crate::service::Service;
use crate::store::Stored;
use crate::version::body_etag;

pub type AppState = Arc<Service>;

/// The OpenAPI document served at `/api/openapi.json`.
pub const OPENAPI: &str = include_str!("../openapi.json");

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/openapi.json", get(openapi))
        .route("/api/config", get(config))
        .route("/api/validate", post(validate))
        .route("/api/endpoints", get(list).post(deploy))
        .route("/api/endpoints/{name}", get(show).delete(remove))
        .route("/api/endpoints/{name}/topology", put(set_topology))
        .route("/api/endpoints/{name}/store", put(configure_store))
        .route("/api/endpoints/{name}/image", put(update_image))
        .route("/api/endpoints/{name}/replicas", put(scale))
        .route("/api/endpoints/{name}/stop", post(stop))
        .route("/api/endpoints/{name}/start", post(start))
        .route("/api/endpoints/{name}/regions", post(add_region))
        .route(
            "/api/endpoints/{name}/regions/{region}",
            delete(remove_region),
        )
}

/// The API's answer to a path it does not have (instead of the console).
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such API route")
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// A record as stored (the JSON a read returns, byte for byte), with its
/// `ETag`: reads and writes answer alike.
fn record_response(status: StatusCode, stored: &Stored) -> Response {
    let response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        stored.json.clone(),
    )
        .into_response();
    conditional::with_etag(response, stored.etag())
}

fn path_name(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    path.map(|Path(name)| name).map_err(path_error)
}

/// A path segment that does not decode (`%c0%af`), at the field it names.
/// The router's own text names its route parameter, not the field.
fn path_error(e: PathRejection) -> ApiError {
    use axum::extract::path::ErrorKind;
    let key = match &e {
        PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
            ErrorKind::InvalidUtf8InPathParam { key } => Some(key.as_str()),
            _ => None,
        },
        _ => None,
    };
    match key {
        Some("region") => ApiError::field(
            StatusCode::BAD_REQUEST,
            "region",
            "the region in the URL is not UTF-8 once percent-decoded",
        ),
        Some(_) => ApiError::field(
            StatusCode::BAD_REQUEST,
            "endpoint_name",
            "the endpoint name in the URL is not UTF-8 once percent-decoded",
        ),
        None => {
            tracing::warn!("path: {}", e.body_text());
            ApiError::new(StatusCode::BAD_REQUEST, "the path is not valid")
        }
    }
}

/// The `If-Match` tags: every line of the header, as one list (RFC 9110,
/// section 5.3).
fn if_match(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut lines = headers.get_all(header::IF_MATCH).iter().peekable();
    if lines.peek().is_none() {
        return Ok(None);
    }
    let lines = lines
        .map(|v| v.to_str())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            ApiError::field(
                StatusCode::BAD_REQUEST,
                "If-Match",
                "If-Match must be ASCII",
            )
        })?;
    Ok(Some(lines.join(", ")))
}

/// What a deploy assumes here: the console previews with it.
async fn config(State(service): State<AppState>) -> Response {
    json_response(StatusCode::OK, &service.config())
}

async fn validate(State(service): State<AppState>, JsonBody(body): JsonBody) -> Response {
    let v = service.validate(body);
    let mut o = Object::new();
    o.insert("ok", v.report.is_ok());
    let (errors, warnings): (Vec<_>, Vec<_>) =
        v.report.diagnostics.iter().partition(|d| d.is_error());
    insert_diagnostics(&mut o, "errors", errors.into_iter());
    insert_diagnostics(&mut o, "warnings", warnings.into_iter());
    o.insert("spec", v.spec.map_or(Value::Null, Value::Object));
    json_response(StatusCode::OK, &Value::Object(o))
}

/// The query parameters of a list.
const LIST_PARAMETERS: [&str; 4] = ["desired_state", "region", "after", "limit"];

async fn list(
    State(service): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(pairs) = query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    // A filter given twice is refused rather than one of them dropped;
    // other parameters are ignored, as they would be once.
    let mut query = HashMap::new();
    for (key, value) in pairs {
        if !LIST_PARAMETERS.contains(&key.as_str()) {
            continue;
        }
        if query.insert(key.clone(), value).is_some() {
            return Err(ApiError::field(
                StatusCode::BAD_REQUEST,
                &key,
                format!("{key} is given more than once"),
            ));
        }
    }
    let state = match query.get("desired_state").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(DesiredState::parse(s).ok_or_else(|| {
            ApiError::field(
                StatusCode::BAD_REQUEST,
                "desired_state",
                format!(
                    "desired_state must be one of deploying, running, stopped, deleted, got {s:?}"
                ),
            )
        })?),
    };
    let filter = Filter {
        state,
        region: query
            .get("region")
            .map(String::as_str)
            .filter(|s| !s.is_empty()),
    };
    let page = Page {
        after: query
            .get("after")
            .filter(|s| !s.is_empty())
            .map(|text| {
                Cursor::parse(text).ok_or_else(|| {
                    ApiError::field(
                        StatusCode::BAD_REQUEST,
                        "after",
                        "after must be the next of an earlier page (created_at~endpoint_name)",
                    )
                })
            })
            .transpose()?,
        limit: query
            .get("limit")
            .filter(|s| !s.is_empty())
            .map(|text| {
                text.parse()
                    .ok()
                    .filter(|n| (1..=MAX_PAGE).contains(n))
                    .ok_or_else(|| {
                        ApiError::field(
                            StatusCode::BAD_REQUEST,
                            "limit",
                            format!("limit must be an integer in [1, {MAX_PAGE}], got {text:?}"),
                        )
                    })
            })
            .transpose()?,
    };
    let listing = service.list(&filter, &page).await?;
    let body = listing_json(&listing, page.limit.is_some());
    let tag = body_etag(&body);
    if let Some(unchanged) = conditional::not_modified(&headers, &tag) {
        return Ok(unchanged);
    }
    let response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    Ok(conditional::with_etag(response, &tag))
}

/// `{"endpoints": [...], "unreadable": [...]}` around each record's stored
/// JSON, sent as a read of it is, and the stored items that are no record
/// (on the first page); with `next` whenever a limit was asked for, so a
/// client loops until it is null.
fn listing_json(listing: &Listing, paged: bool) -> String {
    let records = &listing.records;
    let size: usize = records.iter().map(|s| s.json.len() + 2).sum();
    let mut body = String::with_capacity(64 + size);
    body.push_str(r#"{"endpoints": ["#);
    for (i, stored) in records.iter().enumerate() {
        if i > 0 {
            body.push_str(", ");
        }
        body.push_str(&stored.json);
    }
    body.push_str(r#"], "unreadable": "#);
    let unreadable: Vec<Value> = listing
        .unreadable
        .iter()
        .map(|u| {
            let mut o = Object::new();
            o.insert("endpoint_name", u.endpoint_name.as_str());
            o.insert("path", u.path.as_str());
            o.insert("message", u.message.as_str());
            Value::Object(o)
        })
        .collect();
    body.push_str(&Value::List(unreadable).to_json());
    if paged {
        let next = listing
            .next
            .as_ref()
            .map_or(Value::Null, |c| Value::str(&c.to_text()));
        body.push_str(r#", "next": "#);
        body.push_str(&next.to_json());
    }
    body.push('}');
    body
}

async fn deploy(
    State(service): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let record = service.deploy(body).await?;
    Ok(record_response(StatusCode::CREATED, &record))
}

async fn show(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let stored = service.get_stored(&path_name(name)?).await?;
    if let Some(unchanged) = conditional::not_modified(&headers, stored.etag()) {
        return Ok(unchanged);
    }
    Ok(record_response(StatusCode::OK, &stored))
}

async fn apply_change(
    service: &Service,
    name: String,
    headers: &HeaderMap,
    change: Change,
) -> Result<Response, ApiError> {
    let record = service
        .change(&name, change, if_match(headers)?.as_deref())
        .await?;
    Ok(record_response(StatusCode::OK, &record))
}

async fn set_topology(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    StorableBody(body): StorableBody,
) -> Result<Response, ApiError> {
    let change = Change::SetTopology {
        prefill: object_field(&body, "prefill"),
        decode: object_field(&body, "decode"),
    };
    apply_change(&service, path_name(name)?, &headers, change).await
}

async fn configure_store(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    StorableBody(body): StorableBody,
) -> Result<Response, ApiError> {
    apply_change(
        &service,
        path_name(name)?,
        &headers,
        Change::ConfigureStore { store: body },
    )
    .await
}

async fn update_image(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    StorableBody(body): StorableBody,
) -> Result<Response, ApiError> {
    let change = Change::UpdateImage {
        image: object_field(&body, "image"),
    };
    apply_change(&service, path_name(name)?, &headers, change).await
}

async fn scale(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    StorableBody(body): StorableBody,
) -> Result<Response, ApiError> {
    let change = Change::Scale {
        replicas: object_field(&body, "replicas"),
    };
    apply_change(&service, path_name(name)?, &headers, change).await
}

async fn stop(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    apply_change(&service, path_name(name)?, &headers, Change::Stop).await
}

async fn start(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    apply_change(&service, path_name(name)?, &headers, Change::Start).await
}

async fn remove(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    apply_change(&service, path_name(name)?, &headers, Change::Delete).await
}

async fn add_region(
    State(service): State<AppState>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    StorableBody(body): StorableBody,
) -> Result<Response, ApiError> {
    let change = Change::AddRegion {
        region: object_field(&body, "region"),
        generation: String::new(),
    };
    apply_change(&service, path_name(name)?, &headers, change).await
}

async fn remove_region(
    State(service): State<AppState>,
    path: Result<Path<(String, String)>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Path((name, region)) = path.map_err(path_error)?;
    apply_change(
        &service,
        name,
        &headers,
        Change::RemoveRegion {
            region: Value::from(region),
        },
    )
    .await
}
