//! The JSON API. Its contract is generated from the handlers: each has a
//! `#[utoipa::path]`, and [`documented`] registers them with `routes!`, so
//! the router and the document served at `/api/openapi.json` come from one
//! list. Paths are `gco_api::route`'s, which the console's requests use.

mod audit;
mod body;
mod conditional;
mod doc;
mod error;
mod extract;
mod manifests;
mod schema;

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gco_api::{
    CanaryBody, HistoryPage, ImageBody, RegionBody, ReplicasBody, RevertBody, TopologyBody, route,
};
use gco_spec::json::{Object, Value};
use gco_spec::{Change, ChangeKind};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use body::{BODY_TIMEOUT, MAX_BODY_BYTES, MAX_BODY_DEPTH};
use body::{JsonBody, StorableBody};
use doc::{
    AnyErrors, ChangeErrors, DeployErrors, HistoryErrors, ListErrors, NotModified, ReadErrors,
    RecordChanged, RecordCreated, RecordRead, RecordReverted, ValidateErrors,
};
pub use error::ApiError;
use error::{answer, json_response};
pub use extract::{
    CLIENT_REQUEST_ID, ChangeArguments, DeleteQuery, EndpointName, HistoryQuery, IfMatch,
    IfNoneMatch, ListQuery, REQUEST_ID, RegionName,
};
use gco_api::{Health, HealthStatus, Listing, Stale, Unreadable, Validation};
use gco_spec::types::MooncakeStoreConfig;
use schema::ValidateBody;

use crate::service::{Actor, Service};
use crate::store::Stored;
use crate::store::listing::{Filter, Listing as Page};
use crate::version::body_etag;

pub type AppState = Arc<Service>;

/// Every documented route with its handler, and the OpenAPI document they
/// make. Add a route here with `routes!` (never `.route`): the document
/// and the router are then one list, which `tests/openapi.rs` checks.
pub fn documented() -> OpenApiRouter<AppState> {
    let documented = OpenApiRouter::with_openapi(doc::base())
        .routes(routes!(healthz))
        .routes(routes!(openapi))
        .routes(routes!(config))
        .routes(routes!(me))
        .routes(routes!(validate))
        .routes(routes!(manifests::render))
        .routes(routes!(manifests::monitor_settings))
        .routes(routes!(list, deploy))
        .routes(routes!(show));
    // The changes' paths in the document come between the endpoint's and
    // its history's, in the table's order.
    changes(documented)
        .routes(routes!(history))
        .routes(routes!(revert))
        .routes(routes!(audit::page))
        .routes(routes!(audit::export))
}

/// The documented routes, with their document written (once, at start-up).
pub fn router() -> Router<AppState> {
    document();
    documented().into()
}

/// The OpenAPI document, as served at `/api/openapi.json`.
pub fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut document = documented().into_openapi();
        doc::authorization(&mut document);
        document
            .to_pretty_json()
            .expect("an OpenAPI document is JSON")
    })
}

/// The API's answer to a path it does not have (instead of the console).
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such API route")
}

/// Liveness
// Also the trivial route the load figures compare the API's routes with.
#[utoipa::path(get, path = route::HEALTHZ,
    responses((status = 200, description = "The service is up.", body = Health), AnyErrors))]
pub async fn healthz() -> Response {
    let health = Health {
        status: HealthStatus::Ok,
    };
    json_response(
        StatusCode::OK,
        &gco_spec::json::to_value(&health).expect("a health answer is JSON"),
    )
}

/// This document
#[utoipa::path(get, path = route::OPENAPI,
    responses((status = 200, description = "The OpenAPI document.", body = Object), AnyErrors))]
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], document()).into_response()
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

/// The deploy defaults of this service
///
/// What a deploy assumes here: the console previews with it.
#[utoipa::path(get, path = route::CONFIG,
    responses((status = 200, description = "The regions a deploy without target regions uses, and the image a mooncake deploy without one gets.", body = gco_api::Config), AnyErrors))]
async fn config(State(service): State<AppState>) -> Response {
    json_response(StatusCode::OK, &service.config().to_value())
}

/// Who is asking
///
/// The identity this request was made with, and its roles (none for a
/// signed-in user in no mapped group, who may still ask), and when the
/// console's own sign-in session ends.
#[utoipa::path(get, path = route::ME,
    responses((status = 200, description = "The verified identity, its roles and its session's end.", body = gco_api::Me), AnyErrors))]
async fn me(
    identity: crate::auth::identity::Identity,
    session: Option<axum::Extension<crate::auth::SessionTimes>>,
) -> Response {
    let now = crate::clock::unix_seconds();
    let me = gco_api::Me {
        name: identity.name,
        roles: identity.roles,
        session: session.map(|axum::Extension(s)| gco_api::SessionEnd {
            expires_in: s.expires.saturating_sub(now),
            lifetime: s.lifetime,
        }),
    };
    json_response(
        StatusCode::OK,
        &gco_spec::json::to_value(&me).expect("an identity is JSON"),
    )
}

/// Check a deploy request or a spec; stores nothing
#[utoipa::path(post, path = route::VALIDATE,
    request_body(content = inline(ValidateBody), content_type = "application/json"),
    responses((status = 200, description = "Diagnostics, and the spec a deploy would store when there is no error.", body = Validation), ValidateErrors))]
async fn validate(State(service): State<AppState>, JsonBody(body): JsonBody) -> Response {
    let v = service.validate(body);
    let (errors, warnings): (Vec<_>, Vec<_>) =
        v.report.diagnostics.iter().partition(|d| d.is_error());
    let (errors, errors_omitted) = gco_api::listed(errors.into_iter());
    let (warnings, warnings_omitted) = gco_api::listed(warnings.into_iter());
    let validation = Validation {
        ok: v.report.is_ok(),
        errors,
        warnings,
        spec: None,
        errors_omitted,
        warnings_omitted,
    };
    let mut body = answer(&validation);
    // The spec moves in as it is: through serde it would be copied whole,
    // which took a third more instructions per request.
    if let (Some(spec), Value::Object(o)) = (v.spec, &mut body) {
        o.insert("spec", Value::Object(spec));
    }
    json_response(StatusCode::OK, &body)
}

/// List endpoints, newest first (then by name), all or one page
#[utoipa::path(get, path = route::ENDPOINTS, params(ListQuery, IfNoneMatch),
    responses((status = 200, description = "The endpoints, with an ETag of this answer.", body = Listing), NotModified, ListErrors))]
async fn list(
    State(service): State<AppState>,
    if_none_match: IfNoneMatch,
    query: ListQuery,
) -> Result<Response, ApiError> {
    let filter = Filter {
        state: query.state,
        region: query.region.as_deref(),
    };
    let listing = service.list(&filter, &query.page).await?;
    let stale = service.freshness().filter(|f| f.failing.is_some());
    let body = listing_json(&listing, query.page.limit.is_some(), stale.map(|f| f.age));
    let tag = body_etag(&body);
    if let Some(unchanged) = conditional::not_modified(&if_none_match, &tag) {
        return Ok(marked_if_unreadable(unchanged, &service, true));
    }
    let response = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    Ok(marked_if_unreadable(
        conditional::with_etag(response, &tag),
        &service,
        true,
    ))
}

/// A [`Listing`] around each record's stored JSON, sent as a read of it is
/// (spliced in rather than parsed and written again), and the stored items
/// that are no record (on the first page); with `next` whenever a limit was
/// asked for, so a client loops until it is null.
fn listing_json(listing: &Page, paged: bool, stale: Option<std::time::Duration>) -> String {
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
    let unreadable: Vec<Unreadable> = listing
        .unreadable
        .iter()
        .map(|u| Unreadable {
            endpoint_name: u.endpoint_name.clone(),
            path: u.path.clone(),
            message: u.message.clone(),
        })
        .collect();
    body.push_str(&answer(&unreadable).to_json());
    if paged {
        let next = listing
            .next
            .as_ref()
            .map_or(Value::Null, |c| Value::str(&c.to_text()));
        body.push_str(r#", "next": "#);
        body.push_str(&next.to_json());
    }
    body.push_str(r#", "stale": "#);
    let stale = stale.map(|age| Stale {
        age_seconds: age.as_secs(),
    });
    body.push_str(&answer(&stale).to_json());
    body.push('}');
    body
}

/// Deploy an endpoint
#[utoipa::path(post, path = route::ENDPOINTS,
    request_body(content = gco_spec::DeployRequest, content_type = "application/json"),
    responses(RecordCreated, DeployErrors))]
async fn deploy(
    State(service): State<AppState>,
    actor: Actor,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let record = service.deploy(body, &actor).await?;
    Ok(record_response(StatusCode::CREATED, &record))
}

/// Read one endpoint
#[utoipa::path(get, path = route::ENDPOINT, params(EndpointName, IfNoneMatch),
    responses(RecordRead, NotModified, ReadErrors))]
async fn show(
    State(service): State<AppState>,
    EndpointName(name): EndpointName,
    if_none_match: IfNoneMatch,
) -> Result<Response, ApiError> {
    let stored = match service.read(&name).await {
        Ok(stored) => stored,
        // The table cannot be read, and the console holds no copy of it.
        Err(e) => {
            let failed = ApiError::from(e).into_response();
            return Ok(marked_if_unreadable(failed, &service, false));
        }
    };
    let response = match conditional::not_modified(&if_none_match, stored.etag()) {
        Some(unchanged) => unchanged,
        None => record_response(StatusCode::OK, &stored),
    };
    Ok(marked_if_unreadable(response, &service, true))
}

/// `response` (a record's or the list's, 304s too, or a read's failure)
/// with the [`gco_api::STORE_UNREADABLE_HEADER`] while the table cannot be
/// read: since when, and, for an answer from the console's copy
/// (`from_copy`), when that copy was read. The page says so.
fn marked_if_unreadable(mut response: Response, service: &Service, from_copy: bool) -> Response {
    let Some(since) = service.unreadable_since() else {
        return response;
    };
    let timestamp =
        |t: std::time::SystemTime| gco_spec::time::format_timestamp(crate::clock::micros_of(t));
    let read = service
        .freshness()
        .filter(|_| from_copy)
        .map(|f| timestamp(f.read));
    let header = gco_api::StoreUnreadable {
        since: timestamp(since),
        read,
    };
    if let Ok(value) = header::HeaderValue::from_str(&header.to_header()) {
        response
            .headers_mut()
            .insert(gco_api::STORE_UNREADABLE_HEADER, value);
    }
    response
}

/// Makes `change`. The endpoint's name and the `If-Match` tags come as
/// results and are refused here, in that order: after a body's own
/// refusal, which comes first (a body is the last extractor), and after
/// the change's own arguments.
async fn apply_change(
    service: &Service,
    actor: &Actor,
    name: Result<EndpointName, ApiError>,
    if_match: Result<IfMatch, ApiError>,
    change: Result<Change, ApiError>,
) -> Result<Response, ApiError> {
    let change = change?;
    let EndpointName(name) = name?;
    let IfMatch(tags) = if_match?;
    let record = service
        .change(&name, change, tags.as_deref(), actor)
        .await?;
    Ok(record_response(StatusCode::OK, &record))
}

/// One handler per row of the table of changes (`gco_api::for_each_change`),
/// each with its `#[utoipa::path]`, and [`changes`], which registers them.
macro_rules! change_handlers {
    ($($kind:ident: $handler:ident, $method:ident $path:ident, $role:ident, $doing:literal,
        [$($arguments:tt)*], $summary:literal;)+) => {
        $(change_handler!($kind, $handler, $method, $path, $summary, [$($arguments)*]);)+

        /// Every change's route, documented.
        fn changes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
            router$(.routes(routes!($handler)))+
        }
    };
}

/// One change's handler, by what its request carries besides the name and
/// `If-Match` (an extractor of [`ChangeArguments`]), with its
/// `#[utoipa::path]`.
macro_rules! change_handler {
    ($kind:ident, $handler:ident, $method:ident, $path:ident, $summary:literal,
        [body $schema:ident]) => {
        change_handler!(@fn $kind, $handler, $summary, StorableBody, [$method,
            path = route::$path, params(EndpointName, IfMatch),
            request_body(content = $schema, content_type = "application/json"),
            responses(RecordChanged, ChangeErrors)]);
    };
    ($kind:ident, $handler:ident, $method:ident, $path:ident, $summary:literal, []) => {
        change_handler!(@fn $kind, $handler, $summary, (), [$method,
            path = route::$path, params(EndpointName, IfMatch),
            responses(RecordChanged, ChangeErrors)]);
    };
    ($kind:ident, $handler:ident, $method:ident, $path:ident, $summary:literal,
        [$from:ident $arguments:ident]) => {
        change_handler!(@fn $kind, $handler, $summary, Result<$arguments, ApiError>, [$method,
            path = route::$path, params(EndpointName, IfMatch, $arguments),
            responses(RecordChanged, ChangeErrors)]);
    };
    (@fn $kind:ident, $handler:ident, $summary:literal, $arguments:ty, [$($path:tt)*]) => {
        #[doc = $summary]
        #[utoipa::path($($path)*)]
        async fn $handler(
            State(service): State<AppState>,
            actor: Actor,
            name: Result<EndpointName, ApiError>,
            if_match: Result<IfMatch, ApiError>,
            arguments: $arguments,
        ) -> Result<Response, ApiError> {
            let change = arguments.change(ChangeKind::$kind);
            apply_change(&service, &actor, name, if_match, change).await
        }
    };
}

gco_api::for_each_change!(change_handlers);

/// An endpoint's changes, newest first
///
/// Every change the console wrote (who, when, the operation, the request's
/// id, the record's content before and after it, without what GCO's
/// monitors write), and the changes made outside the console found by
/// comparing contents (`operation: "external"`, `who: null`, between
/// `since` and `at`). An endpoint that is gone keeps its history.
#[utoipa::path(get, path = route::HISTORY, params(EndpointName, HistoryQuery),
    responses((status = 200, description = "One page of changes, newest first; `next` leads to older ones (null on the last page).", body = HistoryPage), HistoryErrors))]
async fn history(
    State(service): State<AppState>,
    EndpointName(name): EndpointName,
    query: HistoryQuery,
) -> Result<Response, ApiError> {
    let page = service
        .history(&name, query.after.as_deref(), query.limit)
        .await?;
    let mut o = Object::new();
    let items = page.items.iter().map(crate::store::history::to_value);
    o.insert("items", Value::List(items.collect()));
    o.insert("next", page.next.as_deref().map_or(Value::Null, Value::str));
    Ok(json_response(StatusCode::OK, &Value::Object(o)))
}

/// Put an endpoint back as a history entry left it
///
/// Its spec, state and target regions as that change left them (a region
/// that joins or leaves gets a fresh generation token; GCO's monitors see
/// an ordinary change). Needs the operator role; an endpoint that is gone
/// (purged) is deployed again from the entry, which needs the admin role.
/// A deleted endpoint not yet purged is refused (409).
#[utoipa::path(post, path = route::REVERT, params(EndpointName, IfMatch),
    request_body(content = RevertBody, content_type = "application/json"),
    responses(RecordReverted, ChangeErrors))]
async fn revert(
    State(service): State<AppState>,
    actor: Actor,
    name: Result<EndpointName, ApiError>,
    if_match: Result<IfMatch, ApiError>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let to = body
        .as_object()
        .and_then(|o| o.get("to"))
        .and_then(Value::as_str)
        .filter(|to| gco_api::is_entry_id(to))
        .map(str::to_owned)
        .ok_or_else(|| {
            ApiError::field(
                StatusCode::UNPROCESSABLE_ENTITY,
                "to",
                "to must be the id of one of the endpoint's history entries",
            )
        })?;
    let EndpointName(name) = name?;
    let IfMatch(tags) = if_match?;
    let (record, created) = service.revert(&name, &to, tags.as_deref(), &actor).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(record_response(status, &record))
}

#[cfg(test)]
mod tests {
    use gco_spec::Framework;
    use gco_spec::json::{Value, parse};
    use gco_spec::limits::{
        DEFAULT_ACCELERATOR, DEFAULT_GPU_COUNT, DEFAULT_HEALTH_CHECK_PATH, DEFAULT_NAMESPACE,
        DEFAULT_PORT, DEFAULT_REPLICAS, MOONCAKE_DEFAULT_INSTANCES,
    };
    use gco_spec::mooncake::Mode;

    /// The schemas' defaults and vocabularies are written in attributes:
    /// they must be the core's.
    #[test]
    fn the_contract_states_the_cores_defaults_and_vocabularies() {
        let doc = parse(super::document()).unwrap();
        let property = |name: &str| -> Value {
            let mut v = &doc;
            for key in ["components", "schemas", "DeployRequest", "properties", name] {
                v = v.as_object().unwrap().get(key).unwrap();
            }
            v.clone()
        };
        let get = |v: &Value, key: &str| v.as_object().unwrap().get(key).cloned();
        for (name, default) in [
            ("port", Value::int(DEFAULT_PORT)),
            ("replicas", Value::int(DEFAULT_REPLICAS)),
            ("gpu_count", Value::int(DEFAULT_GPU_COUNT)),
            ("health_check_path", Value::str(DEFAULT_HEALTH_CHECK_PATH)),
            ("namespace", Value::str(DEFAULT_NAMESPACE)),
            ("accelerator", Value::str(DEFAULT_ACCELERATOR)),
            ("prefill_replicas", Value::int(MOONCAKE_DEFAULT_INSTANCES)),
            ("decode_replicas", Value::int(MOONCAKE_DEFAULT_INSTANCES)),
        ] {
            assert_eq!(get(&property(name), "default"), Some(default), "{name}");
        }
        let names = |v: Value| -> Vec<String> {
            let mut names: Vec<String> = match v {
                Value::List(items) => items
                    .iter()
                    .map(|i| i.as_str().unwrap().to_owned())
                    .collect(),
                _ => panic!("an enum"),
            };
            names.sort();
            names
        };
        let sorted = |list: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        assert_eq!(
            names(get(&property("framework"), "enum").unwrap()),
            sorted(&Framework::ALL.map(Framework::as_str))
        );
        assert_eq!(
            names(get(&property("mooncake_mode"), "enum").unwrap()),
            sorted(&Mode::ALL.map(Mode::as_str))
        );
    }
}
