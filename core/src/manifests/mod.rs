//! The Kubernetes objects GCO's newest monitor applies for one endpoint in
//! one region (GCO_FACTS_NEWEST section 4), as typed objects (k8s-openapi;
//! KEDA's ScaledObject has its own small type) gathered in a `v1` `List`.
//!
//! [`crate::plan`] summarises the same objects: both render the plan's
//! skeleton (which objects, their names and order) and read the spec
//! through [`crate::plan::Block`] and [`crate::plan::ServingSpec`], so
//! `--kv-transfer-config`, `mooncake.json`, the replicas, the autoscalers
//! and the spec's defaults have one implementation. What only the
//! region knows comes from a [`RegionContext`]; every default taken from it,
//! and every fact the monitor holds that a manifest cannot, is a note.

mod autoscale;
mod base;
mod container;
pub mod keda;
mod master;
mod meta;
mod proxy;
mod tls;
mod workload;

use std::fmt;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde::Serialize;

pub use keda::ScaledObject;

use crate::plan::{
    BaseObject, Block, Kind, Part, PlanError, ServingSpec, Skeleton, mooncake_block, skeleton,
};
use crate::record::{DesiredState, Record};
use crate::region::RegionContext;
use meta::Owner;

/// One object of the list, serialised as its own kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Manifest {
    Deployment(Box<Deployment>),
    Service(Box<Service>),
    ConfigMap(Box<ConfigMap>),
    Secret(Box<Secret>),
    StatefulSet(Box<StatefulSet>),
    NetworkPolicy(Box<NetworkPolicy>),
    HorizontalPodAutoscaler(Box<HorizontalPodAutoscaler>),
    ScaledObject(Box<ScaledObject>),
    ValidatingAdmissionPolicy(Box<ValidatingAdmissionPolicy>),
    ValidatingAdmissionPolicyBinding(Box<ValidatingAdmissionPolicyBinding>),
}

impl Manifest {
    pub fn kind(&self) -> Kind {
        match self {
            Manifest::Deployment(_) => Kind::Deployment,
            Manifest::Service(_) => Kind::Service,
            Manifest::ConfigMap(_) => Kind::ConfigMap,
            Manifest::Secret(_) => Kind::Secret,
            Manifest::StatefulSet(_) => Kind::StatefulSet,
            Manifest::NetworkPolicy(_) => Kind::NetworkPolicy,
            Manifest::HorizontalPodAutoscaler(_) => Kind::HorizontalPodAutoscaler,
            Manifest::ScaledObject(_) => Kind::ScaledObject,
            Manifest::ValidatingAdmissionPolicy(_) => Kind::ValidatingAdmissionPolicy,
            Manifest::ValidatingAdmissionPolicyBinding(_) => Kind::ValidatingAdmissionPolicyBinding,
        }
    }

    pub fn name(&self) -> &str {
        let metadata = match self {
            Manifest::Deployment(o) => &o.metadata,
            Manifest::Service(o) => &o.metadata,
            Manifest::ConfigMap(o) => &o.metadata,
            Manifest::Secret(o) => &o.metadata,
            Manifest::StatefulSet(o) => &o.metadata,
            Manifest::NetworkPolicy(o) => &o.metadata,
            Manifest::HorizontalPodAutoscaler(o) => &o.metadata,
            Manifest::ScaledObject(o) => &o.metadata,
            Manifest::ValidatingAdmissionPolicy(o) => &o.metadata,
            Manifest::ValidatingAdmissionPolicyBinding(o) => &o.metadata,
        };
        metadata.name.as_deref().unwrap_or_default()
    }
}

/// The objects of one endpoint in one region, and what the reader must know
/// about them (defaults taken, facts left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    pub region: String,
    pub objects: Vec<Manifest>,
    pub notes: Vec<String>,
}

/// A `v1` `List`, as `kubectl get -o yaml` prints several objects.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct List<'a> {
    api_version: &'static str,
    kind: &'static str,
    items: &'a [Manifest],
}

impl Manifests {
    fn list(&self) -> List<'_> {
        List {
            api_version: "v1",
            kind: "List",
            items: &self.objects,
        }
    }

    /// The list as JSON (the notes are not part of it).
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(self.list()).expect("typed objects serialise")
    }

    /// The list as pretty JSON (the notes are not part of it).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.list()).expect("typed objects serialise")
    }

    /// The list as YAML, led by one `#` comment line per note.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            for line in note.lines() {
                out.push_str("# ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push_str(&serde_norway::to_string(&self.list()).expect("typed objects serialise"));
        out
    }
}

/// Why there are no manifests: the field (or flag) at fault and the reason.
pub type ManifestError = PlanError;

/// Accumulates the notes of one rendering.
#[derive(Debug, Default)]
pub(crate) struct Notes(Vec<String>);

impl Notes {
    pub(crate) fn push(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.0.contains(&note) {
            self.0.push(note);
        }
    }
}

impl fmt::Display for Manifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind().as_str(), self.name())
    }
}

/// What a rendering reads: the record's spec, its block, the region.
pub(crate) struct Endpoint<'a> {
    pub serving: ServingSpec<'a>,
    pub name: &'a str,
    pub namespace: &'a str,
    pub block: Option<Block<'a>>,
    pub ctx: &'a RegionContext,
    pub owner: Owner,
    /// A stopped endpoint: its Deployments at 0 replicas, no autoscalers.
    pub stopped: bool,
}

/// Every object GCO's newest monitor applies for `record` in `ctx.region`.
///
/// Errors: a region the endpoint does not target, a deleted endpoint
/// (nothing is applied), a spec the monitor refuses, and a fact the region
/// must supply that has no default (the cold-tier bucket, the master image,
/// the cluster name of a GPU trigger).
pub fn manifests(record: &Record, ctx: &RegionContext) -> Result<Manifests, ManifestError> {
    let region = ctx.region.as_str();
    if !record.target_regions.iter().any(|r| r == region) {
        return Err(PlanError {
            path: "region".into(),
            message: format!(
                "endpoint '{}' does not target region '{region}' (its regions: {}): its monitor there applies nothing",
                record.endpoint_name,
                record.target_regions.join(", ")
            ),
        });
    }
    if record.desired_state == DesiredState::Deleted {
        return Err(PlanError {
            path: "desired_state".into(),
            message: format!(
                "endpoint '{}' is deleted: the monitor removes its objects and applies none",
                record.endpoint_name
            ),
        });
    }
    let mut notes = Notes::default();
    let block = mooncake_block(record)?;
    let owner = Owner::of(record, region, &mut notes);
    let ep = Endpoint {
        serving: ServingSpec { spec: &record.spec },
        name: &record.endpoint_name,
        namespace: &record.namespace,
        block,
        ctx,
        owner,
        stopped: record.desired_state == DesiredState::Stopped,
    };
    if ep.stopped {
        notes.push(
            "the endpoint is stopped: the monitor scales its Deployments to 0 and deletes its autoscalers; the rest stays",
        );
    }
    if record.namespace != crate::limits::DEFAULT_NAMESPACE {
        notes.push(format!(
            "namespace {}: GCO's inference proxy routes only {} (it answers 503 Inference endpoint namespace is not routable), and its base pass keeps the write fence and the proxy's ingress rule there only",
            record.namespace,
            crate::limits::DEFAULT_NAMESPACE
        ));
    }
    let canary = ep
        .serving
        .get("canary")
        .and_then(crate::json::Value::as_object);
    let mut objects = Vec::new();
    for object in skeleton(ep.name, ep.namespace, block.as_ref(), canary.is_some()) {
        // Stopping deletes the autoscalers (4.9).
        if ep.stopped && matches!(object.part, Part::Autoscaler(_)) {
            continue;
        }
        objects.push(render(&ep, &object, &mut notes)?);
    }
    Ok(Manifests {
        region: region.to_owned(),
        objects,
        notes: notes.0,
    })
}

/// One object of the skeleton, as the monitor (or, for [`Part::BasePass`],
/// GCO's base pass) builds it.
fn render(
    ep: &Endpoint<'_>,
    object: &Skeleton,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let name = object.name.as_str();
    match object.part {
        Part::BasePass(BaseObject::WriteFence) => return Ok(base::write_fence(notes)),
        Part::BasePass(BaseObject::WriteFenceBinding) => {
            return Ok(base::write_fence_binding(notes));
        }
        Part::BasePass(BaseObject::ProxyIngress) => return Ok(base::proxy_ingress(notes)),
        Part::TlsProgram => return Ok(tls::config_map(ep, name, notes)),
        Part::Canary => {
            return match object.kind {
                Kind::Deployment => workload::canary_deployment(ep, name, notes),
                _ => Ok(workload::serving_service(ep, name, None)),
            };
        }
        _ => {}
    }
    let Some(block) = &ep.block else {
        return match object.kind {
            Kind::Deployment => workload::plain_deployment(ep, name, notes),
            _ => Ok(workload::serving_service(ep, name, None)),
        };
    };
    Ok(match (object.part, object.kind) {
        (Part::BasePass(_) | Part::TlsProgram | Part::Canary, _) => {
            unreachable!("rendered above")
        }
        (Part::Master, Kind::Service) => master::service(ep, notes),
        (Part::Master, _) => master::stateful_set(ep, block)?,
        (Part::AllowRule(rule), _) => master::allow_rule(ep.namespace, name, rule, block),
        (Part::MooncakeConfig, _) => workload::mooncake_config(ep, name, block, notes)?,
        (Part::Serving(role), Kind::Deployment) => {
            workload::role_deployment(ep, name, block, role, notes)?
        }
        (Part::Serving(role), _) => workload::serving_service(ep, name, role),
        (Part::Autoscaler(role), kind) => {
            autoscale::role_autoscaler(ep, name, kind, block, role, notes)?
        }
        (Part::ProxyProgram, _) => proxy::program(ep, name, notes),
        (Part::AdminSecret, _) => proxy::admin_secret(ep, name, notes),
        (Part::Proxy, Kind::Deployment) => proxy::deployment(ep, name, block, notes)?,
        (Part::Proxy, _) => proxy::service(ep, name),
    })
}
