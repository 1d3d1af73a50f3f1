//! The serving container's parts (`_build_inference_deployment_object`
//! with `apply_efa_scheduling`, 4.3): how it is launched, its env, its
//! resources and placement, its volumes, and its probes. `workload.rs`
//! puts them together into the Deployment.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, ConfigMapVolumeSource, Container, EnvVar, HTTPGetAction, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, PersistentVolumeClaimVolumeSource, Probe,
    ResourceRequirements, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::Endpoint;
use super::meta::{map, quantities};
use crate::framework::{
    Framework, GPU_NAME_NODE_LABEL, SGLANG_COMMAND, SGLANG_STARTUP_FAILURE_THRESHOLD,
    SGLANG_STARTUP_PERIOD_SECONDS, SGLANG_UNSUPPORTED_GPU_NAMES, sglang_args,
};
use crate::json::Value;
use crate::limits::EFA_RESOURCE;
use crate::mooncake::Role;
use crate::plan::{Block, ServingSpec, mooncake_config_name};
use crate::pyrepr::py_str;
use crate::spec::CAPACITY_TYPES;

/// The container image that syncs an `s3://` model into the model volume
/// (the monitor's pinned AWS CLI v2 image).
const AWS_CLI_IMAGE: &str = "public.ecr.aws/aws-cli/aws-cli:2.36.26@sha256:eaa5d4d024c9b83fe4af2aae3068b052f096beed1a41f202d480c5c521aa3378";
/// Where the role pods mount `{name}-mooncake`, and the file they read.
const MOONCAKE_CONFIG_DIR: &str = "/etc/mooncake";
const MOONCAKE_CONFIG_PATH: &str = "/etc/mooncake/mooncake.json";
/// The serving container's resources unless `spec.resources` sets them.
const DEFAULT_REQUESTS: [(&str, &str); 2] = [("cpu", "1"), ("memory", "4Gi")];
const DEFAULT_LIMITS: [(&str, &str); 2] = [("cpu", "4"), ("memory", "16Gi")];

/// The container's command and arguments (`_build_inference_deployment_object`,
/// 7a0b3c6fd4): the spec's; for vLLM `--root-path` unless an argument is
/// exactly that flag; for SGLang its launcher's; then the KV config.
pub(super) struct Launch {
    pub command: Option<Vec<String>>,
    pub args: Vec<String>,
    /// The server is told to serve under `/inference/<name>`.
    pub root_path: bool,
}

impl Launch {
    pub fn of(
        ep: &Endpoint<'_>,
        image: &str,
        mooncake: Option<(&Block<'_>, Option<Role>)>,
    ) -> Launch {
        let serving = ep.serving;
        let port = serving.container_port();
        // A command GCO sees (Python's truthiness: an empty list is none).
        let mut command = serving
            .get("command")
            .filter(|c| c.is_truthy())
            .map(|c| strings(Some(c)));
        let mut args = strings(serving.get("args"));
        let framework = serving.runtime_framework(image);
        if command.is_none()
            && framework == Some(Framework::Vllm)
            && !has_flag(&args, "--root-path")
        {
            args.push("--root-path".to_owned());
            args.push(format!("/inference/{}", ep.name));
        }
        if serving.runs_sglang_launcher(image) && command.is_none() {
            command = Some(SGLANG_COMMAND.map(str::to_owned).to_vec());
            args = sglang_args(args, i64::from(port), serving.env_has("MODEL"));
        }
        let root_path = has_flag(&args, "--root-path");
        if let Some((block, role)) = mooncake {
            args.push("--kv-transfer-config".to_owned());
            args.push(block.kv_transfer_config(role));
        }
        Launch {
            command,
            args,
            root_path,
        }
    }
}

/// The container's env: PYTHONHASHSEED (the spec may override it in
/// place), the spec's, then the mooncake pair.
pub(super) fn serving_env(serving: ServingSpec<'_>, block: Option<&Block<'_>>) -> Vec<EnvVar> {
    let mut env: Vec<EnvVar> = vec![env_var("PYTHONHASHSEED", "0")];
    if let Some(given) = serving.get("env").and_then(Value::as_object) {
        for (k, v) in given.iter() {
            let (k, v) = (py_str(k), py_str(v));
            match env.iter_mut().find(|e| e.name == k) {
                Some(existing) => existing.value = Some(v),
                None => env.push(env_var(&k, &v)),
            }
        }
    }
    if let Some(block) = block {
        env.push(env_var("MOONCAKE_CONFIG_PATH", MOONCAKE_CONFIG_PATH));
        env.push(env_var(
            "VLLM_MOONCAKE_BOOTSTRAP_PORT",
            &block.bootstrap_base_port().to_string(),
        ));
    }
    env
}

/// Resources, tolerations and node placement.
pub(super) struct Placement {
    pub requests: BTreeMap<String, Quantity>,
    pub limits: BTreeMap<String, Quantity>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: BTreeMap<String, String>,
    pub affinity: Option<Affinity>,
}

impl Placement {
    pub fn of(serving: ServingSpec<'_>, image: &str, block: Option<&Block<'_>>) -> Placement {
        let gpus = serving.gpu_count();
        let accel = accelerator(serving);
        let mut requests = resource_map(serving, "requests", DEFAULT_REQUESTS);
        let mut limits = resource_map(serving, "limits", DEFAULT_LIMITS);
        if gpus > 0 {
            for m in [&mut requests, &mut limits] {
                m.insert(accel.resource.to_owned(), Quantity(gpus.to_string()));
            }
        }
        let rdma = block.is_some_and(Block::uses_rdma);
        if rdma {
            // One EFA device per accelerator container: here the one container.
            for m in [&mut requests, &mut limits] {
                m.insert(EFA_RESOURCE.to_owned(), Quantity("1".to_owned()));
            }
        }
        let mut tolerations = vec![toleration(accel.resource)];
        if rdma
            && !tolerations
                .iter()
                .any(|t| t.key.as_deref() == Some(EFA_RESOURCE))
        {
            tolerations.push(toleration(EFA_RESOURCE));
        }
        let mut node_selector: BTreeMap<String, String> = match serving
            .get("node_selector")
            .and_then(Value::as_object)
            .filter(|given| !given.is_empty())
        {
            Some(given) => given.iter().map(|(k, v)| (py_str(k), py_str(v))).collect(),
            None if gpus > 0 => map([accel.selector]),
            None => BTreeMap::new(),
        };
        if let Some(capacity) = serving
            .get("capacity_type")
            .and_then(Value::as_str)
            .filter(|c| CAPACITY_TYPES.contains(c))
        {
            node_selector.insert("karpenter.sh/capacity-type".to_owned(), capacity.to_owned());
        }
        if rdma {
            node_selector.insert("efa".to_owned(), "true".to_owned());
            node_selector.insert("mooncake-efa".to_owned(), "true".to_owned());
        }
        Placement {
            requests,
            limits,
            tolerations,
            node_selector,
            affinity: serving.keeps_off_pre_ampere(image).then(off_pre_ampere),
        }
    }
}

/// SGLang ships no kernels for GPUs older than Ampere: a required NotIn
/// keeps its pods off them whatever the node selector says (nodes without
/// the label are unaffected).
fn off_pre_ampere() -> Affinity {
    Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![NodeSelectorRequirement {
                        key: GPU_NAME_NODE_LABEL.to_owned(),
                        operator: "NotIn".to_owned(),
                        values: Some(SGLANG_UNSUPPORTED_GPU_NAMES.map(str::to_owned).to_vec()),
                    }]),
                    ..NodeSelectorTerm::default()
                }],
            }),
            ..NodeAffinity::default()
        }),
        ..Affinity::default()
    }
}

/// Volumes: the model store, the mooncake config, an S3 model sync.
pub(super) struct Storage {
    pub volumes: Vec<Volume>,
    pub mounts: Vec<VolumeMount>,
    pub init_containers: Vec<Container>,
}

impl Storage {
    pub fn of(ep: &Endpoint<'_>, block: Option<&Block<'_>>) -> Storage {
        let serving = ep.serving;
        let mut volumes = Vec::new();
        let mut mounts = Vec::new();
        let mut init_containers = Vec::new();
        let has = |key| serving.get(key).is_some_and(Value::is_truthy);
        if has("model_path") || has("model_source") {
            volumes.push(Volume {
                name: "model-storage".to_owned(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: "efs-claim".to_owned(),
                    ..PersistentVolumeClaimVolumeSource::default()
                }),
                ..Volume::default()
            });
            mounts.push(mount("model-storage", "/models", false));
            if let Some(source) = serving
                .get("model_source")
                .and_then(Value::as_str)
                .filter(|s| s.starts_with("s3://"))
            {
                init_containers.push(model_sync(source, ep.name));
            }
        }
        if block.is_some() {
            volumes.push(Volume {
                name: "mooncake-config".to_owned(),
                config_map: Some(ConfigMapVolumeSource {
                    name: mooncake_config_name(ep.name),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            });
            mounts.push(mount("mooncake-config", MOONCAKE_CONFIG_DIR, true));
        }
        Storage {
            volumes,
            mounts,
            init_containers,
        }
    }
}

/// The init container that syncs an `s3://` model into the model volume.
fn model_sync(source: &str, name: &str) -> Container {
    Container {
        name: "model-sync".to_owned(),
        image: Some(AWS_CLI_IMAGE.to_owned()),
        command: Some(vec!["aws".to_owned()]),
        args: Some(
            ["s3", "sync", source, &format!("/models/{name}"), "--quiet"]
                .map(str::to_owned)
                .to_vec(),
        ),
        volume_mounts: Some(vec![mount("model-storage", "/models", false)]),
        resources: Some(ResourceRequirements {
            requests: Some(quantities([("cpu", "1"), ("memory", "2Gi")])),
            limits: Some(quantities([("cpu", "4"), ("memory", "8Gi")])),
            ..ResourceRequirements::default()
        }),
        ..Container::default()
    }
}

/// Probes on the served health path (SGLang's startup probe on the path as
/// configured: SGLang serves no prefix).
pub(super) struct Probes {
    port: i32,
    /// The health path as configured.
    health: String,
    /// The health path as served (under `/inference/<name>` with a root path).
    served: String,
}

impl Probes {
    /// `prefixed`: the endpoint's name when the server serves under
    /// `/inference/<name>`.
    pub fn of(serving: ServingSpec<'_>, port: i32, prefixed: Option<&str>) -> Probes {
        let health = serving.health_check_path();
        let served = match prefixed {
            Some(name) => format!("/inference/{name}{health}"),
            None => health.clone(),
        };
        Probes {
            port,
            health,
            served,
        }
    }

    pub fn readiness(&self) -> Probe {
        self.probe(&self.served, Some(30), 10, None)
    }

    pub fn liveness(&self) -> Probe {
        self.probe(&self.served, Some(120), 15, Some(5))
    }

    pub fn sglang_startup(&self) -> Probe {
        self.probe(
            &self.health,
            None,
            SGLANG_STARTUP_PERIOD_SECONDS,
            Some(SGLANG_STARTUP_FAILURE_THRESHOLD),
        )
    }

    fn probe(&self, path: &str, delay: Option<i32>, period: i32, failure: Option<i32>) -> Probe {
        Probe {
            http_get: Some(HTTPGetAction {
                path: Some(path.to_owned()),
                port: IntOrString::Int(self.port),
                ..HTTPGetAction::default()
            }),
            initial_delay_seconds: delay,
            period_seconds: Some(period),
            failure_threshold: failure,
            ..Probe::default()
        }
    }
}

/// The accelerator's device resource, toleration key and node selector.
struct Accelerator {
    resource: &'static str,
    selector: (&'static str, &'static str),
}

fn accelerator(serving: ServingSpec<'_>) -> Accelerator {
    match serving.get("accelerator").and_then(Value::as_str) {
        Some("neuron") => Accelerator {
            resource: "aws.amazon.com/neuron",
            selector: ("accelerator", "neuron"),
        },
        _ => Accelerator {
            resource: "nvidia.com/gpu",
            selector: ("eks.amazonaws.com/instance-gpu-manufacturer", "nvidia"),
        },
    }
}

fn toleration(key: &str) -> Toleration {
    Toleration {
        key: Some(key.to_owned()),
        operator: Some("Equal".to_owned()),
        value: Some("true".to_owned()),
        effect: Some("NoSchedule".to_owned()),
        ..Toleration::default()
    }
}

/// `spec.resources.<key>` when it is a mapping, else the defaults.
fn resource_map(
    serving: ServingSpec<'_>,
    key: &str,
    defaults: [(&str, &str); 2],
) -> BTreeMap<String, Quantity> {
    let given = serving
        .get("resources")
        .and_then(Value::as_object)
        .and_then(|r| r.get(key))
        .and_then(Value::as_object);
    match given {
        Some(m) => m
            .iter()
            .map(|(k, v)| (py_str(k), Quantity(py_str(v))))
            .collect(),
        None => defaults
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
            .collect(),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::List(items)) => items.iter().map(py_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether one of `args` is exactly `flag` (GCO compares whole arguments).
fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a == flag)
}

pub(crate) fn env_var(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        ..EnvVar::default()
    }
}

pub(crate) fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}
