//! What the handlers take from a request's head: the endpoint (and region)
//! named in the path, the `If-Match` tags, the list's query. Each refuses
//! bad input with an [`ApiError`] at the field it names, and documents
//! itself as the OpenAPI parameters it reads.

use std::collections::HashMap;

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, Query};
use axum::http::header::ToStrError;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use gco_api::route::{self, REGION_PARAMETER};
use gco_spec::json::Value;
use gco_spec::{Change, ChangeKind, DesiredState};
use serde::Deserialize;
use tracing::Level;
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Required, Schema};

use super::body::StorableBody;
use super::error::ApiError;
use crate::auth::identity::Identity;
use crate::service::{Actor, HISTORY_PAGE, MAX_HISTORY_PAGE};
use crate::store::listing::{Cursor, MAX_PAGE, Page};

/// Each request's own id, made by the console (`crate::app` sets it): in
/// its answer, its log lines and the history entry of the change it made.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The `X-Request-Id` a client sent, kept beside the console's id under
/// this name (in the answer, the log and the history).
pub const CLIENT_REQUEST_ID: HeaderName = HeaderName::from_static("x-client-request-id");

/// The identity the auth layer verified. Without one (a route the layer
/// did not wrap) the request fails closed.
impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Identity>()
            .cloned()
            .ok_or_else(crate::auth::identity::no_identity)
    }
}

/// The endpoint named in the path (`{name}`), percent-decoded.
#[derive(IntoParams)]
#[into_params(names("name"), parameter_in = Path)]
pub struct EndpointName(pub String);

/// The region named in the path (`{region}`), percent-decoded.
#[derive(IntoParams)]
#[into_params(names("region"), parameter_in = Path)]
pub struct RegionName(pub String);

/// The one parameter a path extractor reads; serde ignores the route's
/// others. The field names are `gco_api::route`'s parameters.
#[derive(Deserialize)]
struct NameParameter {
    name: String,
}

#[derive(Deserialize)]
struct RegionParameter {
    region: String,
}

impl<S: Send + Sync> FromRequestParts<S> for EndpointName {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(NameParameter { name }) = Path::from_request_parts(parts, state)
            .await
            .map_err(path_error)?;
        Ok(EndpointName(name))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RegionName {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(RegionParameter { region }) = Path::from_request_parts(parts, state)
            .await
            .map_err(path_error)?;
        Ok(RegionName(region))
    }
}

/// A path segment that does not decode (`%c0%af`), at the field it names
/// (a route's parameters decode together: a bad one refuses either
/// extractor). The router's own text names its route parameter, not the
/// field.
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
        Some(REGION_PARAMETER) => ApiError::field(
            StatusCode::BAD_REQUEST,
            "region",
            "the region in the URL is not UTF-8 once percent-decoded",
        ),
        Some(_) => ApiError::field(
            StatusCode::BAD_REQUEST,
            "endpoint_name",
            "the endpoint name in the URL is not UTF-8 once percent-decoded",
        ),
        None => ApiError::new(StatusCode::BAD_REQUEST, "the path is not valid").logged(
            Level::WARN,
            "path",
            e.body_text(),
        ),
    }
}

/// The `If-Match` tags: every line of the header, as one list (RFC 9110,
/// section 5.3); `None` without the header.
#[derive(IntoParams)]
#[into_params(names("If-Match"), parameter_in = Header)]
pub struct IfMatch(
    /// An ETag from a read: the change applies only to that version (412
    /// otherwise). Without it, a lost race is retried.
    #[param(nullable = false)]
    pub Option<String>,
);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let tags = joined_lines(&parts.headers, header::IF_MATCH)
            .transpose()
            .map_err(|_| {
                ApiError::field(
                    StatusCode::BAD_REQUEST,
                    "If-Match",
                    "If-Match must be ASCII",
                )
            })?;
        Ok(IfMatch(tags))
    }
}

/// Every line of header `name` as one comma-separated list (RFC 9110,
/// section 5.3), `None` without the header, an error when a line is not
/// ASCII.
fn joined_lines(headers: &HeaderMap, name: HeaderName) -> Option<Result<String, ToStrError>> {
    let mut lines = headers.get_all(name).iter();
    let first = lines.next()?;
    let joined = first.to_str().and_then(|first| {
        lines.try_fold(first.to_owned(), |mut joined, line| {
            joined.push_str(", ");
            joined.push_str(line.to_str()?);
            Ok(joined)
        })
    });
    Some(joined)
}

/// The query of a list: its filters and its page.
pub struct ListQuery {
    pub state: Option<DesiredState>,
    pub region: Option<String>,
    pub page: Page,
}

/// Every `key=value` of the request's query, in order.
pub(super) async fn query_pairs<S: Send + Sync>(
    parts: &mut Parts,
    state: &S,
) -> Result<Vec<(String, String)>, ApiError> {
    let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
        .await
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    Ok(pairs)
}

/// The parameters among `known`, each at most once: one given twice is
/// refused rather than one of them dropped; unknown ones are ignored, as
/// they would be once.
pub(super) fn known_once(
    pairs: Vec<(String, String)>,
    known: &[&str],
) -> Result<HashMap<String, String>, ApiError> {
    let mut query = HashMap::new();
    for (key, value) in pairs {
        if !known.contains(&key.as_str()) {
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
    Ok(query)
}

/// The query parameters of a list.
const LIST_PARAMETERS: [&str; 4] = ["desired_state", "region", "after", "limit"];

impl<S: Send + Sync> FromRequestParts<S> for ListQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let pairs = query_pairs(parts, state).await?;
        ListQuery::from_pairs(pairs)
    }
}

impl ListQuery {
    /// An empty value is no filter, as an absent one.
    fn from_pairs(pairs: Vec<(String, String)>) -> Result<ListQuery, ApiError> {
        let mut query = known_once(pairs, &LIST_PARAMETERS)?;
        let mut given = |key: &str| query.remove(key).filter(|s| !s.is_empty());
        let state = given("desired_state")
            .map(|s| {
                DesiredState::parse(&s).ok_or_else(|| {
                    ApiError::field(
                        StatusCode::BAD_REQUEST,
                        "desired_state",
                        format!(
                            "desired_state must be one of {}, got {s:?}",
                            DesiredState::NAMES.join(", ")
                        ),
                    )
                })
            })
            .transpose()?;
        let region = given("region");
        let after = given("after")
            .map(|text| {
                Cursor::parse(&text).ok_or_else(|| {
                    ApiError::field(
                        StatusCode::BAD_REQUEST,
                        "after",
                        "after must be the next of an earlier page",
                    )
                })
            })
            .transpose()?;
        let limit = given("limit")
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
            .transpose()?;
        Ok(ListQuery {
            state,
            region,
            page: Page { after, limit },
        })
    }
}

/// `If-None-Match` on a read: the tags a page holds, for a bodiless 304
/// while nothing changed (`conditional::not_modified`). A header that is
/// not ASCII lists no tag of ours: the full answer follows.
pub struct IfNoneMatch(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IfNoneMatch {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let tags = joined_lines(&parts.headers, header::IF_NONE_MATCH).and_then(Result::ok);
        Ok(IfNoneMatch(tags))
    }
}

impl IntoParams for IfNoneMatch {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![parameter(
            "If-None-Match",
            ParameterIn::Header,
            Required::False,
            string(),
            Some(
                "The ETag of an earlier answer: 304 with no body while the resource is still at it.",
            ),
        )]
    }
}

/// The conditions of a delete: the owner label `KEY=VALUE` and the
/// lifecycle id, both or neither (as GCO's CLI asks).
pub struct DeleteQuery {
    pub owner_label: Option<(String, String)>,
    pub lifecycle_id: Option<String>,
}

/// What a change's request carries besides the endpoint's name and
/// `If-Match`, as its handler extracts it: the change of kind `kind` it
/// makes, or why it makes none (a bad path or query).
pub trait ChangeArguments {
    fn change(self, kind: ChangeKind) -> Result<Change, ApiError>;
}

/// A body: fields the kind does not read are ignored.
impl ChangeArguments for StorableBody {
    fn change(self, kind: ChangeKind) -> Result<Change, ApiError> {
        gco_api::change_of(kind, self.0).ok_or_else(|| no_change_of(kind))
    }
}

/// Nothing but the name.
impl ChangeArguments for () {
    fn change(self, kind: ChangeKind) -> Result<Change, ApiError> {
        gco_api::change_of(kind, Value::Null).ok_or_else(|| no_change_of(kind))
    }
}

impl ChangeArguments for Result<DeleteQuery, ApiError> {
    fn change(self, _: ChangeKind) -> Result<Change, ApiError> {
        let DeleteQuery {
            owner_label,
            lifecycle_id,
        } = self?;
        Ok(Change::Delete {
            expected_owner_label: owner_label,
            expected_lifecycle_id: lifecycle_id,
        })
    }
}

/// The path's parameters decode together: a bad one refuses either.
impl ChangeArguments for Result<RegionName, ApiError> {
    fn change(self, _: ChangeKind) -> Result<Change, ApiError> {
        let RegionName(region) = self?;
        Ok(Change::RemoveRegion {
            region: Value::from(region),
        })
    }
}

/// A kind whose arguments the table of changes says come in its body (or
/// are none), which `gco_api::change_of` cannot make so: a bug in the
/// table, not the client's.
fn no_change_of(kind: ChangeKind) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "this change takes no body",
    )
    .logged(
        Level::ERROR,
        "the table of changes reads no body of this kind",
        kind.as_str(),
    )
}

impl<S: Send + Sync> FromRequestParts<S> for DeleteQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let pairs = query_pairs(parts, state).await?;
        DeleteQuery::from_pairs(pairs)
    }
}

impl DeleteQuery {
    fn from_pairs(pairs: Vec<(String, String)>) -> Result<DeleteQuery, ApiError> {
        let known = [route::OWNER_LABEL_PARAMETER, route::LIFECYCLE_ID_PARAMETER];
        let query = known_once(pairs, &known)?;
        let owner_label = query
            .get(route::OWNER_LABEL_PARAMETER)
            .map(|label| {
                label
                    .split_once('=')
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .ok_or_else(|| {
                        ApiError::field(
                            StatusCode::BAD_REQUEST,
                            "owner_label",
                            format!("owner_label must be KEY=VALUE, got {label:?}"),
                        )
                    })
            })
            .transpose()?;
        let lifecycle_id = query.get(route::LIFECYCLE_ID_PARAMETER).cloned();
        if owner_label.is_some() != lifecycle_id.is_some() {
            let missing = if owner_label.is_some() {
                "lifecycle_id"
            } else {
                "owner_label"
            };
            return Err(ApiError::field(
                StatusCode::BAD_REQUEST,
                missing,
                "owner_label and lifecycle_id must be supplied together",
            ));
        }
        Ok(DeleteQuery {
            owner_label,
            lifecycle_id,
        })
    }
}

impl IntoParams for DeleteQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            parameter(
                route::OWNER_LABEL_PARAMETER,
                ParameterIn::Query,
                Required::False,
                string(),
                Some(
                    "Delete only when the endpoint carries this label, `KEY=VALUE` (with lifecycle_id); 412 and nothing written otherwise.",
                ),
            ),
            parameter(
                route::LIFECYCLE_ID_PARAMETER,
                ParameterIn::Query,
                Required::False,
                string(),
                Some(
                    "Delete only this lifecycle of the endpoint (with owner_label); 412 and nothing written otherwise.",
                ),
            ),
        ]
    }
}

pub(super) fn parameter(
    name: &str,
    place: ParameterIn,
    required: Required,
    schema: impl Into<RefOr<Schema>>,
    description: Option<&str>,
) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(place)
        .required(required)
        .schema(Some(schema.into()))
        .description(description)
        .build()
}

pub(super) fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

impl IntoParams for ListQuery {
    fn into_params(place: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        gco_api::ListQuery::into_params(place)
    }
}

/// The query of a history page: the cursor and the page's size.
pub struct HistoryQuery {
    pub after: Option<String>,
    pub limit: usize,
}

impl<S: Send + Sync> FromRequestParts<S> for HistoryQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let pairs = query_pairs(parts, state).await?;
        HistoryQuery::from_pairs(pairs)
    }
}

impl HistoryQuery {
    fn from_pairs(pairs: Vec<(String, String)>) -> Result<HistoryQuery, ApiError> {
        let mut query = known_once(pairs, &[route::AFTER_PARAMETER, "limit"])?;
        let after = query
            .remove(route::AFTER_PARAMETER)
            .filter(|s| !s.is_empty())
            .map(|text| {
                if gco_api::is_entry_id(&text) {
                    Ok(text)
                } else {
                    Err(ApiError::field(
                        StatusCode::BAD_REQUEST,
                        route::AFTER_PARAMETER,
                        "after must be the next of an earlier history page",
                    ))
                }
            })
            .transpose()?;
        let limit = history_page_limit(&mut query)?;
        Ok(HistoryQuery { after, limit })
    }
}

/// A history page's `limit` (taken out of `query`): 1 to
/// [`MAX_HISTORY_PAGE`], [`HISTORY_PAGE`] when not given.
pub(super) fn history_page_limit(query: &mut HashMap<String, String>) -> Result<usize, ApiError> {
    match query.remove("limit").filter(|s| !s.is_empty()) {
        None => Ok(HISTORY_PAGE),
        Some(text) => text
            .parse()
            .ok()
            .filter(|n| (1..=MAX_HISTORY_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::field(
                    StatusCode::BAD_REQUEST,
                    "limit",
                    format!("limit must be an integer in [1, {MAX_HISTORY_PAGE}], got {text:?}"),
                )
            }),
    }
}

impl IntoParams for HistoryQuery {
    fn into_params(place: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        gco_api::HistoryQuery::into_params(place)
    }
}

/// Who asks: the identity the auth layer verified, and the request's ids
/// (the console's `x-request-id` and the client's `x-client-request-id`,
/// which the layers set: [`crate::app`]), for the history.
impl<S: Send + Sync> FromRequestParts<S> for Actor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let identity = Identity::from_request_parts(parts, state).await?;
        let header = |name: HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        Ok(Actor::new(identity, header(REQUEST_ID))
            .with_client_request_id(header(CLIENT_REQUEST_ID)))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderValue, Request};

    use super::*;

    fn refusal(e: ApiError) -> (StatusCode, String, String) {
        let d = &e.errors[0];
        (e.status, d.path.clone(), d.message.clone())
    }

    fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
        query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn list(query: &[(&str, &str)]) -> Result<ListQuery, (StatusCode, String, String)> {
        ListQuery::from_pairs(pairs(query)).map_err(refusal)
    }

    /// `into_params(names(...))` takes literals: they must be the routes'.
    #[test]
    fn path_parameters_are_named_as_the_routes_name_them() {
        let name = |params: Vec<Parameter>| params[0].name.clone();
        assert_eq!(
            name(EndpointName::into_params(|| None)),
            route::NAME_PARAMETER
        );
        assert_eq!(name(RegionName::into_params(|| None)), REGION_PARAMETER);
    }

    #[test]
    fn a_list_query_reads_its_filters_and_page() {
        let q = list(&[
            ("desired_state", "stopped"),
            ("region", "eu-west-1"),
            ("limit", "10"),
            ("other", "x"),
            ("other", "y"),
        ])
        .unwrap();
        assert_eq!(q.state, Some(DesiredState::Stopped));
        assert_eq!(q.region.as_deref(), Some("eu-west-1"));
        assert_eq!((q.page.after, q.page.limit), (None, Some(10)));
        let empty = list(&[("desired_state", ""), ("region", ""), ("limit", "")]).unwrap();
        assert_eq!(
            (empty.state, empty.region, empty.page.limit),
            (None, None, None)
        );
    }

    #[test]
    fn a_bad_list_query_is_refused_at_its_field() {
        let bad = |field: &str, message: &str| {
            Err((
                StatusCode::BAD_REQUEST,
                field.to_owned(),
                message.to_owned(),
            ))
        };
        assert_eq!(
            list(&[("region", "a"), ("region", "b")]).map(|_| ()),
            bad("region", "region is given more than once")
        );
        assert_eq!(
            list(&[("desired_state", "paused")]).map(|_| ()),
            bad(
                "desired_state",
                r#"desired_state must be one of deploying, running, stopped, deleted, got "paused""#
            )
        );
        // One error at a time: the state first, then the page.
        assert_eq!(
            list(&[("limit", "0"), ("after", "x"), ("desired_state", "paused")])
                .map(|_| ())
                .map_err(|e| e.1),
            Err("desired_state".to_owned())
        );
        assert_eq!(
            list(&[("limit", "0"), ("after", "x")]).map(|_| ()),
            bad("after", "after must be the next of an earlier page")
        );
    }

    async fn if_match(lines: &[&[u8]]) -> Result<Option<String>, (StatusCode, String, String)> {
        let mut request = Request::builder();
        for line in lines {
            request = request.header(header::IF_MATCH, HeaderValue::from_bytes(line).unwrap());
        }
        let (mut parts, ()) = request.body(()).unwrap().into_parts();
        IfMatch::from_request_parts(&mut parts, &())
            .await
            .map(|IfMatch(tags)| tags)
            .map_err(refusal)
    }

    #[tokio::test]
    async fn if_match_is_every_line_and_ascii() {
        assert_eq!(if_match(&[]).await, Ok(None));
        assert_eq!(
            if_match(&[b"\"a\"", b"\"b\", \"c\""]).await,
            Ok(Some("\"a\", \"b\", \"c\"".to_owned()))
        );
        assert_eq!(
            if_match(&[b"\"a\"", b"\"\xe9\""]).await,
            Err((
                StatusCode::BAD_REQUEST,
                "If-Match".to_owned(),
                "If-Match must be ASCII".to_owned()
            ))
        );
    }
}
