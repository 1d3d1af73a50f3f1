//! The schemas of the two request bodies that are no one type: the
//! handlers read them with the core's parser (Python's semantics, exact
//! integers). Every other body and answer is documented by its own type,
//! `gco_api`'s or the core's.

use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

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
