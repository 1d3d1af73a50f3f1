//! KEDA's `ScaledObject` (keda.sh/v1alpha1), which k8s-openapi does not
//! carry (it is a custom resource): only the fields GCO's monitor sets
//! (GCO_FACTS_NEWEST 4.8), typed, with KEDA's field names.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "keda.sh/v1alpha1";
pub const KIND: &str = "ScaledObject";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaledObject {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: ScaledObjectSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaledObjectSpec {
    pub scale_target_ref: ScaleTargetRef,
    pub min_replica_count: i32,
    pub max_replica_count: i32,
    pub triggers: Vec<ScaleTrigger>,
}

/// The workload KEDA scales (a Deployment when `kind` is left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaleTargetRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
}

/// One trigger: `cpu`/`memory` (with `metricType`) or `aws-cloudwatch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaleTrigger {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_type: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

impl ScaledObject {
    pub fn new(metadata: ObjectMeta, spec: ScaledObjectSpec) -> ScaledObject {
        ScaledObject {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            metadata,
            spec,
        }
    }
}
