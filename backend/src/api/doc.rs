//! The OpenAPI document around the handlers' own `#[utoipa::path]`s: its
//! info, the error response and the bearer scheme every operation shares,
//! and the response sets the handlers name (one per kind of route, so that
//! a new route of a kind documents what its kind answers).

use std::collections::BTreeMap;

use gco_api::route::ROUTES;
use gco_api::{
    Diagnostic, ErrorBody, Health, Listing, MAX_LISTED_DIAGNOSTICS, Method, Stale, Unreadable,
    Validation,
};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::extensions::{Extensions, ExtensionsBuilder};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{ComponentsBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    InfoBuilder, ObjectBuilder, OpenApi, OpenApiBuilder, Ref, RefOr, Response, ResponseBuilder,
};
use utoipa::{IntoResponses, PartialSchema, ToSchema};

use super::body::BODY_TIMEOUT;
use gco_spec::Record;

pub const TITLE: &str = "GCO console API";

/// The name of the shared error response and of the security scheme.
const ERROR_RESPONSE: &str = "Error";
pub const BEARER: &str = "bearer";
/// Each operation's `{"changes_state", "role"}`.
pub const ACCESS_EXTENSION: &str = "x-access";

fn description() -> String {
    format!(
        "Deploy and change GCO inference endpoints. Records use the layout of GCO's DynamoDB \
         table. Every error has the shape {{error, errors: [{{path, message}}]}} (a list carries \
         at most {MAX_LISTED_DIAGNOSTICS}, with errors_omitted for the rest); messages of the \
         mooncake block are those of GCO's reference validator. Unless the server runs with \
         --auth none, every /api request but GET /api/config needs an identity (a bearer \
         token, a session, or the load balancer's header); each operation's x-access \
         names the role it needs and whether it changes what is stored. Requests must name a host the \
         server answers to (a loopback one, an IP address when it listens off loopback, or one \
         of --allowed-hosts; 421 otherwise). A mutation that a browser marks as coming from \
         another site (Origin, Sec-Fetch-Site) gets 403. A request body must arrive within {} s \
         (408).",
        BODY_TIMEOUT.as_secs(),
    )
}

/// Each route's authorization, from `gco_api::route::ROUTES` (the table the
/// server enforces): a bearer token (or a session, or none under `--auth
/// none`) where it needs a role, and [`ACCESS_EXTENSION`]: the role
/// (`null`: anyone) and whether it changes what is stored.
pub fn authorization(doc: &mut OpenApi) {
    for route in &ROUTES {
        let item = doc.paths.paths.get_mut(route.path);
        let operation = item.and_then(|item| match route.method {
            Method::Get => item.get.as_mut(),
            Method::Post => item.post.as_mut(),
            Method::Put => item.put.as_mut(),
            Method::Delete => item.delete.as_mut(),
        });
        let Some(operation) = operation else {
            panic!(
                "{} {} is in ROUTES but not documented",
                route.method, route.path
            );
        };
        if route.identified {
            operation.security = Some(vec![
                SecurityRequirement::new(BEARER, Vec::<String>::new()),
                SecurityRequirement::default(),
            ]);
        }
        // One extension, an object: utoipa keeps extensions in a hash map,
        // whose order would change the document from run to run.
        let access = serde_json::json!({
            "changes_state": route.changes_state,
            "role": route.needs.map(gco_api::Role::as_str),
        });
        operation
            .extensions
            .get_or_insert_with(Extensions::default)
            .merge(
                ExtensionsBuilder::new()
                    .add(ACCESS_EXTENSION, access)
                    .build(),
            );
    }
}

/// The document before the handlers' paths join it.
pub fn base() -> OpenApi {
    let error = ResponseBuilder::new().description("An error.").content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(ErrorBody::name())))
            .build(),
    );
    let mut components = ComponentsBuilder::new()
        .security_scheme(
            BEARER,
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        )
        .response(ERROR_RESPONSE, error);
    // Schemas named only from the response sets below, which `routes!`
    // does not see.
    let mut schemas = Vec::new();
    collect::<ErrorBody>(&mut schemas);
    collect::<Diagnostic>(&mut schemas);
    schemas.push((Record::name().into_owned(), record_schema()));
    collect::<Listing>(&mut schemas);
    collect::<Unreadable>(&mut schemas);
    collect::<Stale>(&mut schemas);
    collect::<Validation>(&mut schemas);
    collect::<gco_spec::DeployRequest>(&mut schemas);
    collect::<Health>(&mut schemas);
    components = components.schemas_from_iter(schemas);
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title(TITLE)
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(description())),
        )
        .components(Some(components.build()))
        .build()
}

type Schemas = Vec<(String, RefOr<utoipa::openapi::Schema>)>;

/// The core's record, with the attribute the console's deploy adds.
fn record_schema() -> RefOr<utoipa::openapi::Schema> {
    let mut schema = Record::schema();
    if let RefOr::T(utoipa::openapi::Schema::Object(record)) = &mut schema {
        let created_by = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Who deployed it: the identity of the console's deploy (GCO's CLI leaves it out).",
            ));
        record
            .properties
            .insert(gco_spec::record::CREATED_BY.to_owned(), created_by.into());
    }
    schema
}

fn collect<T: ToSchema>(schemas: &mut Schemas) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

/// Every request: a host this server does not answer to.
const MISDIRECTED: &[u16] = &[421];
/// A mutation: without the server's token (401), from another site's page
/// (403).
const MUTATION: &[u16] = &[401, 403];
/// A JSON body: unreadable or not JSON (400), too large (413), sent as
/// another media type (415).
const BODY: &[u16] = &[400, 413, 415];
/// The endpoint store did not answer or confirm (503).
const STORE: &[u16] = &[503];
/// A change of a stored endpoint: none of that name (404), a conflict with
/// its state or a lost race (409), a stale `If-Match` (412), arguments the
/// rules refuse (422).
const CHANGE: &[u16] = &[404, 409, 412, 422];

/// The shared error response at each of `statuses`.
fn errors(statuses: &[&[u16]]) -> BTreeMap<String, RefOr<Response>> {
    statuses
        .iter()
        .flat_map(|group| group.iter())
        .map(|status| {
            (
                status.to_string(),
                RefOr::Ref(Ref::from_response_name(ERROR_RESPONSE)),
            )
        })
        .collect()
}

macro_rules! error_set {
    ($($(#[$doc:meta])* $name:ident = [$($group:expr),* $(,)?];)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                errors(&[$($group),*])
            }
        }
    )*};
}

error_set! {
    /// A route any client may read that has no input.
    AnyErrors = [MISDIRECTED];
    /// `POST /api/validate`: a body, nothing stored.
    ValidateErrors = [BODY, MISDIRECTED];
    /// `POST /api/manifests`: a document or region that cannot be rendered
    /// (422), nothing stored.
    ManifestsErrors = [BODY, &[422], MISDIRECTED];
    /// A list: a bad filter or page (400).
    ListErrors = [&[400], MISDIRECTED, STORE];
    /// A read of one endpoint: none of that name (404).
    ReadErrors = [&[404], MISDIRECTED, STORE];
    /// A deploy: the name taken (409), a request the rules refuse (422).
    DeployErrors = [BODY, MUTATION, &[409, 422], MISDIRECTED, STORE];
    /// A change of one endpoint, with a body or without.
    ChangeErrors = [BODY, MUTATION, CHANGE, MISDIRECTED, STORE];
    /// An endpoint's history: a bad cursor or limit (400), no endpoint of
    /// that name and no history of one, or no history recorded (404).
    HistoryErrors = [&[400, 401, 403, 404], MISDIRECTED, STORE];
    /// The audit view and its export: a bad filter, time, cursor, limit or
    /// format (400, naming the parameter), no history recorded (404).
    AuditErrors = [&[400, 401, 403, 404], MISDIRECTED, STORE];
}

/// A record as stored, with its `ETag`.
fn record(status: u16, description: &str) -> BTreeMap<String, RefOr<Response>> {
    let etag = HeaderBuilder::new()
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .description(Some("The record's version: its content half (before the last `.`) for If-Match, which GCO's status writes leave valid; the whole tag for If-None-Match."))
        .build();
    let response = ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(Record::name())))
                .build(),
        )
        .header("ETag", etag)
        .build();
    BTreeMap::from([(status.to_string(), RefOr::T(response))])
}

/// `304`: nothing changed since the `If-None-Match` tag; no body.
pub struct NotModified;

impl IntoResponses for NotModified {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let etag = HeaderBuilder::new()
            .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
            .description(Some("The current version, as sent."))
            .build();
        let response = ResponseBuilder::new()
            .description("Not modified: the version held is current.")
            .header("ETag", etag)
            .build();
        BTreeMap::from([("304".to_owned(), RefOr::T(response))])
    }
}

/// `200`: the record read.
pub struct RecordRead;
/// `201`: the record a deploy made.
pub struct RecordCreated;
/// `200`: the record a change made.
pub struct RecordChanged;

impl IntoResponses for RecordRead {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        record(200, "The record.")
    }
}

impl IntoResponses for RecordCreated {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        record(201, "The new record.")
    }
}

impl IntoResponses for RecordChanged {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        record(200, "The changed record.")
    }
}

/// `200`: the record a revert changed; `201`: the record it deployed again.
pub struct RecordReverted;

impl IntoResponses for RecordReverted {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut responses = record(200, "The record, as the entry left it.");
        responses.extend(record(
            201,
            "The endpoint was gone (purged): deployed again from the entry.",
        ));
        responses
    }
}
