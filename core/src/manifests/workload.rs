//! The serving Deployments and Services (4.2, 4.3) and the `{name}-mooncake`
//! ConfigMap (4.4).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, HTTPGetAction,
    NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::{inference_labels, map, object_meta, quantities, selector};
use super::{Endpoint, Manifest, ManifestError, Notes, tls};
use crate::framework::{
    Framework, GPU_NAME_NODE_LABEL, SGLANG_COMMAND, SGLANG_STARTUP_FAILURE_THRESHOLD,
    SGLANG_STARTUP_PERIOD_SECONDS, SGLANG_UNSUPPORTED_GPU_NAMES, sglang_args,
};
use crate::json::{Object, Value};
use crate::limits::{DEFAULT_REPLICAS, EFA_RESOURCE, ENDPOINT_TLS_PORT};
use crate::mooncake::Role;
use crate::plan::{Block, PlanError, ServingSpec, mooncake_config_name, tls_program_name};
use crate::pyrepr::py_str;
use crate::spec::CAPACITY_TYPES;

/// The container image that syncs an `s3://` model into the model volume
/// (the monitor's pinned AWS CLI v2 image).
const AWS_CLI_IMAGE: &str = "public.ecr.aws/aws-cli/aws-cli:2.36.26@sha256:eaa5d4d024c9b83fe4af2aae3068b052f096beed1a41f202d480c5c521aa3378";
/// Where the role pods mount `{name}-mooncake`, and the file they read.
const MOONCAKE_CONFIG_DIR: &str = "/etc/mooncake";
const MOONCAKE_CONFIG_PATH: &str = "/etc/mooncake/mooncake.json";
const SERVICE_ACCOUNT: &str = "gco-service-account";
/// The serving container's resources unless `spec.resources` sets them.
const DEFAULT_REQUESTS: [(&str, &str); 2] = [("cpu", "1"), ("memory", "4Gi")];
const DEFAULT_LIMITS: [(&str, &str); 2] = [("cpu", "4"), ("memory", "16Gi")];

/// The `{name}-mooncake` ConfigMap with `mooncake.json`.
pub(super) fn mooncake_config(
    ep: &Endpoint<'_>,
    name: &str,
    block: &Block<'_>,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let ctx = ep.ctx;
    let uri = if block.cold_tier_enabled() {
        ctx.cold_tier_uri(ep.name).ok_or_else(|| PlanError {
            path: "spec.mooncake.store.cold_tier_enabled".into(),
            message: format!(
                "the cold tier needs {}'s regional bucket (SSM {}): pass it as the regional bucket. Without it GCO's monitor cannot render mooncake.json and reports the region as error 'cold_tier_s3_uri' (as read)",
                ctx.region,
                ctx.bucket_parameter()
            ),
        })?
    } else {
        String::new()
    };
    if !ctx.has_metadata_server() {
        notes.push(format!(
            "MOONCAKE_METADATA_SERVER not given: GCO's default {}",
            ctx.metadata_server()
        ));
    }
    if block.store_enabled() && !ctx.has_master_address() {
        notes.push(format!(
            "MOONCAKE_MASTER_ADDRESS not given: GCO's default {}",
            ctx.master_address()
        ));
    }
    let mut data = BTreeMap::new();
    data.insert("mooncake.json".to_owned(), block.mooncake_json(ctx, &uri));
    Ok(Manifest::ConfigMap(Box::new(ConfigMap {
        metadata: object_meta(name, ep.namespace, None, ep.owner.annotations()),
        data: Some(data),
        ..ConfigMap::default()
    })))
}

/// A plain endpoint's classic Deployment `{name}` (as far as the facts
/// describe it; the notes say what is left out).
pub(super) fn plain_deployment(
    ep: &Endpoint<'_>,
    name: &str,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let serving = ep.serving;
    let autoscaling = serving.get("autoscaling").and_then(Value::as_object);
    let autoscaled = autoscaling.is_some_and(|a| a.get("enabled").is_some_and(Value::is_truthy));
    let replicas = match autoscaling.filter(|_| autoscaled) {
        Some(a) => a
            .get("min_replicas")
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .unwrap_or(DEFAULT_REPLICAS),
        None => serving.replicas(),
    };
    if autoscaled {
        notes.push(
            "spec.autoscaling: the classic autoscaler is left out (the facts do not describe it)",
        );
    }
    if Framework::of_spec(serving.spec) == Some(Framework::Tgi) {
        notes.push(
            "framework tgi: GCO since its SGLang release renders the pods by the image's name (vllm or sglang in it), else as neither",
        );
    }
    serving_deployment(ep, None, name, replicas, None, notes)
}

/// The canary's Deployment `{name}-canary`: the endpoint's pod with the
/// canary's image and replicas (default 1), fronted by the endpoint's own
/// sidecar program.
pub(super) fn canary_deployment(
    ep: &Endpoint<'_>,
    name: &str,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let canary = ep.serving.get("canary").and_then(Value::as_object);
    let field = |key| canary.and_then(|c: &Object| c.get(key));
    let image = field("image")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| PlanError {
            path: "spec.canary.image".into(),
            message: "Canary image must be a non-empty string".into(),
        })?;
    let replicas = field("replicas")
        .and_then(Value::as_int)
        .and_then(|i| i.as_i64())
        .unwrap_or(1);
    notes.push(format!(
        "Deployment {name}: the canary's pods are the endpoint's with its image and replicas (as read: GCO's _reconcile_canary is not readable in full)"
    ));
    serving_deployment(ep, None, name, replicas, Some(image.to_owned()), notes)
}

/// A role's Deployment: `{name}-prefill`/`-decode`, or `{name}` (role
/// `single`) in store mode.
pub(super) fn role_deployment(
    ep: &Endpoint<'_>,
    name: &str,
    block: &Block<'_>,
    role: Option<Role>,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let (base, end) = block.bootstrap_window();
    if (base..=end).contains(&ENDPOINT_TLS_PORT) {
        return Err(PlanError {
            path: "spec.mooncake.transfer.bootstrap_base_port".into(),
            message: format!(
                "the KV bootstrap window {base}-{end} contains port {ENDPOINT_TLS_PORT}, reserved for the model pod's TLS sidecar: GCO's monitor refuses to render the role pods (its text contains so much; the rest is as read)"
            ),
        });
    }
    let replicas = block.role_replicas(role);
    serving_deployment(ep, Some((block, role)), name, replicas, None, notes)
}

fn role_label(role: Option<Role>) -> &'static str {
    role.map_or("single", Role::as_str)
}

/// The Service of a role, or (`role` `None`) of a plain endpoint, its
/// canary and store mode: TLS only (see [`tls::model_service`]).
pub(super) fn serving_service(ep: &Endpoint<'_>, name: &str, role: Option<Role>) -> Manifest {
    // Only split roles' Services carry the role label
    // (`_create_role_service`; `_create_service` has none).
    let labels = inference_labels(name, role.map(Role::as_str));
    tls::model_service(ep, name, labels, None)
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

/// The shared builder of serving Deployments (`_build_inference_deployment_object`
/// with `apply_efa_scheduling`, 4.3); `mooncake` is the block and the role
/// (`None`: store mode's single instance), `None` for a plain endpoint.
fn serving_deployment(
    ep: &Endpoint<'_>,
    mooncake: Option<(&Block<'_>, Option<Role>)>,
    name: &str,
    replicas: i64,
    image: Option<String>,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let serving = ep.serving;
    let block = mooncake.map(|(block, _)| block);
    let image = match image {
        Some(image) => image,
        None => serving.image(&ep.ctx.region)?.to_owned(),
    };
    let port = serving.container_port();
    if i64::from(port) == ENDPOINT_TLS_PORT {
        return Err(PlanError {
            path: "spec.port".into(),
            message: format!(
                "port {ENDPOINT_TLS_PORT} is reserved for the model pod's TLS sidecar: GCO's monitor refuses to render the endpoint (its text begins so; the rest is as read)"
            ),
        });
    }
    // A command GCO sees (Python's truthiness: an empty list is none).
    let mut command = serving
        .get("command")
        .filter(|c| c.is_truthy())
        .map(|c| strings(Some(c)));

    // Arguments (`_build_inference_deployment_object`, 7a0b3c6fd4): the
    // spec's; for vLLM `--root-path` unless an argument is exactly that
    // flag; for SGLang its launcher's; then the KV config.
    let mut args = strings(serving.get("args"));
    let framework = serving.runtime_framework(&image);
    if command.is_none() && framework == Some(Framework::Vllm) && !has_flag(&args, "--root-path") {
        args.push("--root-path".to_owned());
        args.push(format!("/inference/{}", ep.name));
    }
    let sglang = serving.runs_sglang_launcher(&image);
    if sglang && command.is_none() {
        command = Some(SGLANG_COMMAND.map(str::to_owned).to_vec());
        args = sglang_args(args, i64::from(port), serving.env_has("MODEL"));
    }
    let root_path = has_flag(&args, "--root-path");
    if let Some((block, role)) = mooncake {
        args.push("--kv-transfer-config".to_owned());
        args.push(block.kv_transfer_config(role));
    }

    // Env: PYTHONHASHSEED (the spec may override it in place), the spec's,
    // then the mooncake pair.
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

    // Resources, tolerations and node placement.
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
    // SGLang ships no kernels for GPUs older than Ampere: a required NotIn
    // keeps its pods off them whatever the node selector says (nodes
    // without the label are unaffected).
    let affinity = serving.keeps_off_pre_ampere(&image).then(|| Affinity {
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
    });
    if rdma {
        node_selector.insert("efa".to_owned(), "true".to_owned());
        node_selector.insert("mooncake-efa".to_owned(), "true".to_owned());
    }

    // Probes on the served health path (SGLang's startup probe on the path
    // as configured: SGLang serves no prefix).
    let health = serving.health_check_path();
    let served = if root_path {
        format!("/inference/{}{health}", ep.name)
    } else {
        health.clone()
    };
    let probe = |path: &str, delay, period, failure| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::Int(port),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: delay,
        period_seconds: Some(period),
        failure_threshold: failure,
        ..Probe::default()
    };

    // Volumes: the model store, the mooncake config, an S3 model sync.
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
            init_containers.push(Container {
                name: "model-sync".to_owned(),
                image: Some(AWS_CLI_IMAGE.to_owned()),
                command: Some(vec!["aws".to_owned()]),
                args: Some(
                    [
                        "s3",
                        "sync",
                        source,
                        &format!("/models/{}", ep.name),
                        "--quiet",
                    ]
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
            });
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

    let container = Container {
        name: "inference".to_owned(),
        image: Some(image),
        command,
        args: (!args.is_empty()).then_some(args),
        ports: Some(vec![ContainerPort {
            container_port: port,
            ..ContainerPort::default()
        }]),
        env: Some(env),
        resources: Some(ResourceRequirements {
            requests: Some(requests),
            limits: Some(limits),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(probe(&served, Some(30), 10, None)),
        liveness_probe: Some(probe(&served, Some(120), 15, Some(5))),
        // SGLang's /health answers only once the model is loaded.
        startup_probe: (framework == Some(Framework::Sglang)).then(|| {
            probe(
                &health,
                None,
                SGLANG_STARTUP_PERIOD_SECONDS,
                Some(SGLANG_STARTUP_FAILURE_THRESHOLD),
            )
        }),
        volume_mounts: (!mounts.is_empty()).then_some(mounts),
        ..Container::default()
    };
    let labels = inference_labels(name, mooncake.map(|(_, role)| role_label(role)));
    let replicas = if ep.stopped { 0 } else { replicas };
    let mut deployment = Deployment {
        metadata: object_meta(
            name,
            ep.namespace,
            Some(labels.clone()),
            ep.owner.annotations(),
        ),
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(replicas).unwrap_or(i32::MAX)),
            selector: selector(map([("app", name)])),
            template: PodTemplateSpec {
                metadata: Some(object_meta_of_pod(labels, ep)),
                spec: Some(PodSpec {
                    service_account_name: Some(SERVICE_ACCOUNT.to_owned()),
                    automount_service_account_token: Some(false),
                    init_containers: (!init_containers.is_empty()).then_some(init_containers),
                    containers: vec![container],
                    tolerations: Some(tolerations),
                    node_selector: (!node_selector.is_empty()).then_some(node_selector),
                    affinity,
                    volumes: (!volumes.is_empty()).then_some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    };
    tls::front(&mut deployment, port, &tls_program_name(ep.name), notes);
    Ok(Manifest::Deployment(Box::new(deployment)))
}

/// A pod template's metadata: its labels, and the monitor's provenance
/// annotations (`inference_monitor.py@7a0b3c6fd4` annotates the template
/// as the object).
pub(super) fn object_meta_of_pod(
    labels: BTreeMap<String, String>,
    ep: &Endpoint<'_>,
) -> ObjectMeta {
    let annotations = ep.owner.annotations();
    ObjectMeta {
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..ObjectMeta::default()
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
