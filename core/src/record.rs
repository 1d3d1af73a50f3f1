//! The endpoint record: one item of GCO's endpoints table (GCO_FACTS section 1).

use std::fmt;

use crate::json::{Object, Value};
use crate::status::{CanarySpec, RegionStatus};

vocabulary! {
    /// What the monitors are asked to make of an endpoint.
    pub enum DesiredState {
        Deploying = "deploying",
        Running = "running",
        Stopped = "stopped",
        Deleted = "deleted",
    }
}

/// The record attribute the console's deploy sets to the identity that
/// writes it (GCO's own layout has it; GCO's CLI never fills it), kept in
/// [`Record::extra`].
pub const CREATED_BY: &str = "created_by";

/// One endpoint: an item of GCO's endpoints table. Attributes this version
/// does not know are kept (in `extra`) and written back unchanged, so a
/// newer GCO's additions survive.
//
// With `schema`, the JSON Schema of a record (`core/schema/`): each field
// described as the table holds it, which `from_value` reads.
//
// With `openapi`, its OpenAPI schema (the API's `Record`): each field as
// the API answers it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(title = "EndpointRecord", rename = "EndpointRecord")
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Record {
    /// The endpoint's name: the table's key.
    pub endpoint_name: String,
    /// Default: `deploying`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<DesiredState>"))]
    #[cfg_attr(feature = "openapi", schema(schema_with = <DesiredState as utoipa::PartialSchema>::schema))]
    pub desired_state: DesiredState,
    /// Regions to serve in: de-duplicated, order kept.
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<String>>"))]
    pub target_regions: Vec<String>,
    /// The Kubernetes namespace. Default: `gco-inference`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub namespace: String,
    /// What `deploy` stores: the endpoint spec.
    #[cfg_attr(feature = "schema", schemars(with = "crate::types::EndpointSpec"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub spec: Object,
    /// Strings only; stored only when non-empty.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<std::collections::BTreeMap<String, String>>")
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = std::collections::BTreeMap<String, String>, required = false)
    )]
    pub labels: Object,
    /// `/inference/<endpoint_name>`, where GCO routes the endpoint.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub ingress_path: String,
    /// ISO 8601 UTC, as GCO writes it.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub created_at: String,
    /// ISO 8601 UTC, as GCO writes it.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub updated_at: String,
    /// Written by the monitors (one entry per region, replaced whole by each
    /// write); starts empty. Kept exactly as stored, whatever a newer
    /// monitor writes there.
    // `Record::region_statuses` reads it typed.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<std::collections::BTreeMap<String, Object>>")
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub region_status: Object,
    /// 64 lowercase hex characters, minted at create; older records lack it.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    pub lifecycle_id: Option<String>,
    /// Every region ever targeted, append-only. Older records lack it (and
    /// `region_generations`): GCO's monitors then migrate the record, which
    /// they would not do once an empty one were written, so absent stays
    /// absent.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    pub cleanup_regions: Option<Vec<String>>,
    /// Region -> 64 hex token, minted at create and on every add or removal
    /// of that region; the monitors fence their status writes with it.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<std::collections::BTreeMap<String, String>>")
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = std::collections::BTreeMap<String, String>, required = false)
    )]
    pub region_generations: Option<Object>,
    /// 64 hex token the first delete mints (and later ones keep); the
    /// monitors fence their deleting status writes and the purge with it.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    pub deletion_generation: Option<String>,
    /// The regions to clean up, taken from `cleanup_regions` by the first
    /// delete (and kept by later ones).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    pub deletion_regions: Option<Vec<String>>,
    #[cfg_attr(feature = "schema", schemars(skip))]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub extra: Object,
}

/// Why a stored item is not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for RecordError {}

impl Record {
    /// Every attribute the record reads, in GCO's order; the JSON Schema
    /// of a record has exactly these (`core/tests/schema.rs`).
    pub const ATTRIBUTES: [&str; 15] = [
        "endpoint_name",
        "desired_state",
        "target_regions",
        "namespace",
        "spec",
        "labels",
        "ingress_path",
        "created_at",
        "updated_at",
        "region_status",
        "lifecycle_id",
        "cleanup_regions",
        "region_generations",
        "deletion_generation",
        "deletion_regions",
    ];
}

/// Never stored: some readers add it; dropped rather than kept as extra.
const DROPPED: &str = "etag";

/// The ingress path GCO routes an endpoint under.
pub fn ingress_path(endpoint_name: &str) -> String {
    format!("/inference/{endpoint_name}")
}

impl Record {
    /// The item as a JSON object, in GCO's attribute order.
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        let strings = |v: &[String]| Value::List(v.iter().map(|s| Value::str(s)).collect());
        o.insert("endpoint_name", self.endpoint_name.as_str());
        o.insert("desired_state", self.desired_state.as_str());
        o.insert("target_regions", strings(&self.target_regions));
        o.insert("namespace", self.namespace.as_str());
        o.insert("spec", self.spec.clone());
        if !self.labels.is_empty() {
            o.insert("labels", self.labels.clone());
        }
        o.insert("ingress_path", self.ingress_path.as_str());
        o.insert("created_at", self.created_at.as_str());
        o.insert("updated_at", self.updated_at.as_str());
        o.insert("region_status", self.region_status.clone());
        if let Some(id) = &self.lifecycle_id {
            o.insert("lifecycle_id", id.as_str());
        }
        if let Some(regions) = &self.cleanup_regions {
            o.insert("cleanup_regions", strings(regions));
        }
        if let Some(generations) = &self.region_generations {
            o.insert("region_generations", generations.clone());
        }
        if let Some(generation) = &self.deletion_generation {
            o.insert("deletion_generation", generation.as_str());
        }
        if let Some(regions) = &self.deletion_regions {
            o.insert("deletion_regions", strings(regions));
        }
        for (k, v) in self.extra.str_entries() {
            o.insert(&k.to_string_lossy(), v.clone());
        }
        Value::Object(o)
    }

    /// Reads an item, leniently where older GCO releases wrote less.
    pub fn from_value(v: &Value) -> Result<Record, RecordError> {
        let o = v
            .as_object()
            .ok_or_else(|| err("endpoint_name", "a record must be a mapping"))?;
        let string = |field: &'static str| -> Result<Option<String>, RecordError> {
            match o.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Str(s)) => Ok(Some(s.to_string_lossy())),
                Some(other) => Err(err(
                    field,
                    &format!("must be a string, got {}", other.repr()),
                )),
            }
        };
        let strings = |field: &'static str| -> Result<Vec<String>, RecordError> {
            match o.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::List(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| err(field, "must be a list of strings"))
                    })
                    .collect(),
                Some(_) => Err(err(field, "must be a list of strings")),
            }
        };
        let object = |field: &'static str| -> Result<Object, RecordError> {
            match o.get(field) {
                None | Some(Value::Null) => Ok(Object::new()),
                Some(Value::Object(m)) => Ok(m.clone()),
                Some(_) => Err(err(field, "must be a mapping")),
            }
        };
        let endpoint_name =
            string("endpoint_name")?.ok_or_else(|| err("endpoint_name", "is required"))?;
        let state =
            string("desired_state")?.unwrap_or_else(|| DesiredState::Deploying.as_str().to_owned());
        let desired_state = DesiredState::parse(&state).ok_or_else(|| {
            err(
                "desired_state",
                &format!("unknown state {}", crate::pyrepr::repr_text(&state)),
            )
        })?;
        let mut extra = Object::new();
        for (k, v) in o.str_entries() {
            let k = k.to_string_lossy();
            if k != DROPPED && !Record::ATTRIBUTES.contains(&k.as_str()) {
                extra.insert(&k, v.clone());
            }
        }
        Ok(Record {
            ingress_path: string("ingress_path")?.unwrap_or_else(|| ingress_path(&endpoint_name)),
            desired_state,
            target_regions: strings("target_regions")?,
            namespace: string("namespace")?
                .unwrap_or_else(|| crate::limits::DEFAULT_NAMESPACE.into()),
            spec: object("spec")?,
            labels: object("labels")?,
            created_at: string("created_at")?.unwrap_or_default(),
            updated_at: string("updated_at")?.unwrap_or_default(),
            region_status: object("region_status")?,
            lifecycle_id: string("lifecycle_id")?,
            cleanup_regions: o
                .contains_key("cleanup_regions")
                .then(|| strings("cleanup_regions"))
                .transpose()?,
            region_generations: o
                .contains_key("region_generations")
                .then(|| object("region_generations"))
                .transpose()?,
            deletion_generation: string("deletion_generation")?,
            deletion_regions: o
                .contains_key("deletion_regions")
                .then(|| strings("deletion_regions"))
                .transpose()?,
            extra,
            endpoint_name,
        })
    }

    /// Each region's status as the monitors wrote it, typed (GCO_FACTS_NEWEST
    /// section 3), in stored order; `None` for an entry that is no mapping
    /// (GCO's `status` command skips those).
    pub fn region_statuses(&self) -> Vec<(String, Option<RegionStatus>)> {
        self.region_status
            .str_entries()
            .map(|(region, entry)| (region.to_string_lossy(), RegionStatus::read(entry)))
            .collect()
    }

    /// The canary the spec sets up (`spec.canary`), typed; `None` when
    /// there is none or it is no mapping.
    pub fn canary(&self) -> Option<CanarySpec> {
        CanarySpec::read(self.spec.get("canary")?)
    }

    /// `{X}p{Y}d` for a split-mode endpoint.
    pub fn topology_label(&self) -> Option<String> {
        let topology = self
            .spec
            .get("mooncake")?
            .as_object()?
            .get("topology")?
            .as_object()?;
        Some(format!(
            "{}p{}d",
            topology.get("prefill")?.repr(),
            topology.get("decode")?.repr()
        ))
    }
}

fn err(field: &'static str, message: &str) -> RecordError {
    RecordError {
        field,
        message: message.to_owned(),
    }
}
