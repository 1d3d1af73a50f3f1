//! The schemas of what the API reads and writes whose JSON the handlers
//! build with the core's parser and writer (Python's semantics, exact
//! integers): documentation types, never built. The bodies with fields of
//! their own are `gco_api`'s; the spec inside a record and a deploy is
//! described by core/schema/endpoint-spec.schema.json.

// Fields document the wire; nothing reads them.
#![allow(dead_code)]

use std::collections::BTreeMap;

use gco_spec::DesiredState;
use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// What the monitors are asked to make of an endpoint (the core's
/// [`DesiredState::ALL`]).
pub struct DesiredStateName;

impl PartialSchema for DesiredStateName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(DesiredState::ALL.map(DesiredState::as_str)))
            .into()
    }
}

impl ToSchema for DesiredStateName {
    fn name() -> std::borrow::Cow<'static, str> {
        "DesiredState".into()
    }
}

/// The `desired_state` schema, inline (a list filter's and a record's).
pub fn desired_state_schema() -> RefOr<Schema> {
    DesiredStateName::schema()
}

fn one_of_strings(values: &[&str]) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
}

fn offload_tiers() -> ObjectBuilder {
    one_of_strings(&["cpu", "disk", "none"])
}

/// A byte size: a number of bytes or a text with a unit (`"4gb"`).
fn byte_size() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::from_iter([
        Type::String,
        Type::Integer,
    ]))
}

/// `PUT /api/endpoints/{name}/store`: the new `spec.mooncake.store` block
/// (it replaces the old one).
#[derive(ToSchema)]
pub struct StoreSettings {
    #[schema(required = false)]
    enabled: bool,
    #[schema(schema_with = byte_size, required = false)]
    global_segment_size: (),
    #[schema(schema_with = byte_size, required = false)]
    local_buffer_size: (),
    #[schema(schema_with = offload_tiers, required = false)]
    offload: (),
    #[schema(required = false)]
    cold_tier_enabled: bool,
}

/// One item of GCO's endpoints table.
#[derive(ToSchema)]
pub struct Record {
    endpoint_name: String,
    #[schema(schema_with = desired_state_schema)]
    desired_state: (),
    target_regions: Vec<String>,
    namespace: String,
    /// See core/schema/endpoint-spec.schema.json.
    #[schema(value_type = Object)]
    spec: (),
    #[schema(value_type = Object, required = false)]
    labels: (),
    ingress_path: String,
    created_at: String,
    updated_at: String,
    #[schema(value_type = Object)]
    region_status: (),
    #[schema(required = false)]
    lifecycle_id: String,
    #[schema(required = false)]
    cleanup_regions: Vec<String>,
    #[schema(required = false)]
    region_generations: BTreeMap<String, String>,
    /// Who deployed it: the identity of the console's deploy (GCO's CLI
    /// leaves it out).
    #[schema(required = false)]
    created_by: String,
}

/// A deploy request or a bare endpoint spec.
pub struct ValidateBody;

impl PartialSchema for ValidateBody {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(utoipa::openapi::Ref::from_schema_name(
                gco_spec::DeployRequest::name(),
            ))
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .description(Some("An endpoint spec")),
            )
            .into()
    }
}

impl ToSchema for ValidateBody {}

/// `POST /api/manifests`: what to render (`document`, `region`), and what
/// only the region knows: the monitor settings, each with GCO's default
/// when absent, as the answer's notes say.
pub struct ManifestsRequest;

impl PartialSchema for ManifestsRequest {
    fn schema() -> RefOr<Schema> {
        let own = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "document",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .description(Some("A deploy request or an endpoint record.")),
            )
            .property(
                "region",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .examples(["us-east-1"]),
            )
            .required("document")
            .required("region");
        AllOfBuilder::new()
            .description(Some(
                "What to render, and what only the region knows: the monitor settings, each with GCO's default when absent, as the answer's notes say.",
            ))
            .item(utoipa::openapi::Ref::from_schema_name(
                gco_spec::RegionContext::name(),
            ))
            .item(own)
            .into()
    }
}

impl ToSchema for ManifestsRequest {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((
            gco_spec::RegionContext::name().into(),
            gco_spec::RegionContext::schema(),
        ));
    }
}
