//! What GCO's monitor makes of an endpoint in one region (GCO_FACTS section
//! 4): the Kubernetes objects, each with the settings a reviewer checks
//! before deploying. A pure function of the record, so the console can show
//! it as the user types and the CLI can print it.

mod kv;
mod objects;
mod serving;
mod skeleton;

use std::fmt;

use crate::deploy::{Deployment, new_record};
use crate::diagnostics::Diagnostic;
use crate::json::{Object, Value};
use crate::mooncake::{Mode, check_mooncake};
use crate::record::{DesiredState, Record};
use crate::region::RegionContext;
use crate::spec::spec_mode;

pub use crate::mooncake::MetricKind;
pub(crate) use kv::Block;
pub use kv::{Metric, RoleScaling};
pub(crate) use serving::ServingSpec;
pub use skeleton::Kind;
#[cfg(feature = "manifests")]
pub(crate) use skeleton::tls_program_name;
pub(crate) use skeleton::{
    AllowRule, BaseObject, Part, Skeleton, admin_secret_name, mooncake_config_name, proxy_name,
    proxy_program_name, serving_name, skeleton,
};

vocabulary! {
    /// What the monitor does with an object.
    pub enum Action {
        /// Created, or updated to match the spec.
        Apply = "apply",
        /// Kept, with no pods: a stopped endpoint's Deployments.
        ScaleToZero = "scale_to_zero",
        /// Left as it is: the rest of a stopped endpoint, and objects other
        /// endpoints share.
        Keep = "keep",
        /// Removed: a deleted endpoint, or a region no longer targeted.
        Delete = "delete",
    }
}

/// One object of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedObject {
    pub kind: Kind,
    pub name: String,
    pub action: Action,
    /// Shared by every endpoint of the namespace (the Mooncake master), so
    /// never removed with one endpoint.
    pub shared: bool,
    /// Kept by GCO's base pass, not the monitor (the tenant write fence, the
    /// inference proxy's ingress rule): the monitor leaves it as it is.
    pub base_pass: bool,
    /// The settings that matter for review, in a stable order.
    pub settings: Object,
}

/// The objects of one endpoint in one region.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub endpoint_name: String,
    pub region: String,
    pub namespace: String,
    pub desired_state: DesiredState,
    pub objects: Vec<PlannedObject>,
}

/// Why there is no plan: the field at fault and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PlanError {}

impl From<Diagnostic> for PlanError {
    fn from(d: Diagnostic) -> PlanError {
        PlanError {
            path: d.path,
            message: d.message,
        }
    }
}

/// The plan for `record` in `region`.
///
/// A targeted region gets the spec's objects (scaled to zero while stopped,
/// removed once deleted); a region the endpoint left gets the removal of
/// what it had there. A region it never targeted is an error, as is a spec
/// the monitor would refuse.
pub fn plan(record: &Record, region: &str) -> Result<Plan, PlanError> {
    plan_in_region(record, &RegionContext::defaults(region))
}

/// [`plan`] for a region whose monitor settings are known.
pub fn plan_in_region(record: &Record, ctx: &RegionContext) -> Result<Plan, PlanError> {
    let region = ctx.region.as_str();
    let targeted = record.target_regions.iter().any(|r| r == region);
    if !targeted && !record.cleanup_regions.iter().flatten().any(|r| r == region) {
        // `[&str]::join`, the one the package has anyway (see `shell::join`).
        let regions: Vec<&str> = record.target_regions.iter().map(String::as_str).collect();
        let regions = regions.join(", ");
        return Err(PlanError {
            path: "region".into(),
            message: format!(
                "endpoint '{}' does not target region '{region}' (its regions: {regions})",
                record.endpoint_name
            ),
        });
    }
    let mut objects = spec_objects(record, ctx)?;
    for object in &mut objects {
        object.action = match (targeted, record.desired_state) {
            _ if object.base_pass => Action::Keep,
            (true, DesiredState::Deploying | DesiredState::Running) => Action::Apply,
            (true, DesiredState::Stopped) if object.kind == Kind::Deployment && !object.shared => {
                object.settings.insert("replicas", 0);
                Action::ScaleToZero
            }
            (true, DesiredState::Stopped) => Action::Keep,
            (_, _) if object.shared => Action::Keep,
            (_, _) => Action::Delete,
        };
    }
    Ok(Plan {
        endpoint_name: record.endpoint_name.clone(),
        region: region.to_owned(),
        namespace: record.namespace.clone(),
        desired_state: record.desired_state,
        objects,
    })
}

/// The plan of `record` in `region` as JSON, or without a region the list
/// of every target region's plan: what `gco-spec plan` and the package's
/// `planDeploy` answer.
pub fn plans_value(record: &Record, region: Option<&str>) -> Result<Value, PlanError> {
    match region {
        Some(region) => plan(record, region).map(|p| p.to_value()),
        None => record
            .target_regions
            .iter()
            .map(|r| plan(record, r).map(|p| p.to_value()))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List),
    }
}

/// Plans for every target region of a checked deploy, in region order.
pub fn plan_deployment(deployment: &Deployment) -> Result<Vec<Plan>, PlanError> {
    let record = preview_record(deployment.clone());
    record
        .target_regions
        .iter()
        .map(|region| plan(&record, region))
        .collect()
}

/// The record a deployment would create, with placeholder tokens and time:
/// plans do not read them.
pub fn preview_record(deployment: Deployment) -> Record {
    new_record(deployment, "", &mut || "0".repeat(64))
}

/// The objects the spec asks for in the region, all to be applied.
fn spec_objects(record: &Record, ctx: &RegionContext) -> Result<Vec<PlannedObject>, PlanError> {
    let block = mooncake_block(record)?;
    objects::render(record, ctx, block.as_ref())
}

/// The record's `mooncake` block as the monitor reads it; `None` for a
/// plain endpoint, an error (the reference's first message) for a block the
/// monitor would refuse.
pub(crate) fn mooncake_block(record: &Record) -> Result<Option<Block<'_>>, PlanError> {
    let Some(block) = record.spec.get("mooncake").filter(|b| !b.is_null()) else {
        return Ok(None);
    };
    if let Some(first) = check_mooncake(block).first_error() {
        return Err(PlanError {
            path: format!("spec.{}", first.path),
            message: first.message.clone(),
        });
    }
    let mode: Mode = spec_mode(&record.spec).expect("a valid block has a mode");
    Ok(Some(Block {
        mode,
        block: block.as_object().expect("a valid block is a mapping"),
    }))
}

impl Plan {
    /// The plan as JSON, for the CLI and the console.
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("endpoint_name", self.endpoint_name.as_str());
        o.insert("region", self.region.as_str());
        o.insert("namespace", self.namespace.as_str());
        o.insert("desired_state", self.desired_state.as_str());
        let objects = self
            .objects
            .iter()
            .map(PlannedObject::to_value)
            .collect::<Vec<_>>();
        o.insert("objects", objects);
        Value::Object(o)
    }
}

impl PlannedObject {
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("kind", self.kind.as_str());
        o.insert("name", self.name.as_str());
        o.insert("action", self.action.as_str());
        if self.shared {
            o.insert("shared", true);
        }
        if self.base_pass {
            o.insert("base_pass", true);
        }
        o.insert("settings", self.settings.clone());
        Value::Object(o)
    }
}
