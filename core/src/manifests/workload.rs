//! The serving Deployments and Services (4.2, 4.3) and the `{name}-mooncake`
//! ConfigMap (4.4).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, HTTPGetAction,
    PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    Service, ServicePort, ServiceSpec, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::{SERVICE_PORT, inference_labels, map, object_meta, selector};
use super::{Endpoint, Manifest, ManifestError, Notes};
use crate::framework::{
    Framework, SGLANG_COMMAND_WORDS, SGLANG_STARTUP_SECONDS, sglang_launcher, sglang_model,
};
use crate::json::Value;
use crate::limits::{DEFAULT_REPLICAS, EFA_RESOURCE};
use crate::mooncake::Role;
use crate::plan::{Block, PlanError, ServingSpec, mooncake_config_name};
use crate::pyrepr::py_str;

/// The container image that syncs an `s3://` model into the model volume
/// (the monitor's pinned AWS CLI v2 image).
const AWS_CLI_IMAGE: &str = "public.ecr.aws/aws-cli/aws-cli:2.36.26@sha256:eaa5d4d024c9b83fe4af2aae3068b052f096beed1a41f202d480c5c521aa3378";
/// Where the role pods mount `{name}-mooncake`, and the file they read.
const MOONCAKE_CONFIG_DIR: &str = "/etc/mooncake";
const MOONCAKE_CONFIG_PATH: &str = "/etc/mooncake/mooncake.json";
const SERVICE_ACCOUNT: &str = "gco-service-account";
/// The SGLang startup probe's period; the facts give only its 20 minutes.
const SGLANG_STARTUP_PERIOD: i32 = 10;
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
    notes.push(
        "plain endpoint: the Deployment and Service are built as the facts describe the monitor's shared builder (as read); its Service is port 80 to spec.port like store mode's (as read)",
    );
    if autoscaled {
        notes.push(
            "spec.autoscaling: the classic autoscaler is left out (the facts do not describe it)",
        );
    }
    match Framework::of_spec(serving.spec) {
        Some(Framework::Tgi) => notes.push(
            "framework tgi: GCO since its SGLang release no longer renders it (the endpoint never starts there); an older GCO adds a startup probe the facts do not describe, left out",
        ),
        _ if serving.runs_sglang_launcher() => notes.push(format!(
            "framework sglang: the launcher and a startup probe on the health path allowing {} minutes are GCO's; the probe's period (10 s) and failure threshold ({}) are inferred (as read)",
            SGLANG_STARTUP_SECONDS / 60,
            SGLANG_STARTUP_SECONDS / SGLANG_STARTUP_PERIOD
        )),
        _ => {}
    }
    serving_deployment(ep, None, name, replicas, notes)
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
    let replicas = block.role_replicas(role);
    serving_deployment(ep, Some((block, role)), name, replicas, notes)
}

fn role_label(role: Option<Role>) -> &'static str {
    role.map_or("single", Role::as_str)
}

/// The ClusterIP Service of a role (port = targetPort = spec.port), or of
/// store mode and plain endpoints (`{name}`, port 80 to spec.port).
pub(super) fn serving_service(ep: &Endpoint<'_>, name: &str, role: Option<Role>) -> Manifest {
    let port = ep.serving.container_port();
    let service_port = ServicePort {
        port: if role.is_some() { port } else { SERVICE_PORT },
        target_port: Some(IntOrString::Int(port)),
        protocol: Some("TCP".to_owned()),
        ..ServicePort::default()
    };
    let labels = match ep.block {
        None => inference_labels(name, None),
        Some(_) => inference_labels(name, Some(role_label(role))),
    };
    Manifest::Service(Box::new(Service {
        metadata: object_meta(name, ep.namespace, Some(labels), ep.owner.annotations()),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(map([("app", name)])),
            ports: Some(vec![service_port]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }))
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
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let serving = ep.serving;
    let spec = serving.spec;
    let block = mooncake.map(|(block, _)| block);
    let image = serving.image(&ep.ctx.region)?.to_owned();
    let port = serving.container_port();
    let mut command = serving.get("command").map(|c| strings(Some(c)));

    // Arguments: SGLang's launcher, the spec's, then --root-path for vLLM,
    // then the KV config.
    let mut args = strings(serving.get("args"));
    let sglang = serving.runs_sglang_launcher();
    if sglang {
        let line = sglang_launcher(i64::from(port), sglang_model(spec));
        let mut words: Vec<String> = line.split(' ').map(str::to_owned).collect();
        let mut launch = words.split_off(SGLANG_COMMAND_WORDS);
        command = Some(words);
        launch.append(&mut args);
        args = launch;
    }
    let framework = serving.get("framework").and_then(Value::as_str);
    let vllm = framework.map_or_else(
        || image.contains(Framework::Vllm.as_str()),
        |f| f == Framework::Vllm.as_str(),
    );
    let has_root_path = args
        .iter()
        .any(|a| a == "--root-path" || a.starts_with("--root-path="));
    if vllm && command.is_none() && !has_root_path {
        args.push("--root-path".to_owned());
        args.push(format!("/inference/{}", ep.name));
    }
    let root_path = args
        .iter()
        .any(|a| a == "--root-path" || a.starts_with("--root-path="));
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
    let mut node_selector: BTreeMap<String, String> =
        match serving.get("node_selector").and_then(Value::as_object) {
            Some(given) => given.iter().map(|(k, v)| (py_str(k), py_str(v))).collect(),
            None if gpus > 0 => map([accel.selector]),
            None => BTreeMap::new(),
        };
    if let Some(capacity) = serving.get("capacity_type") {
        node_selector.insert("karpenter.sh/capacity-type".to_owned(), py_str(capacity));
    }
    if rdma {
        node_selector.insert("efa".to_owned(), "true".to_owned());
        node_selector.insert("mooncake-efa".to_owned(), "true".to_owned());
    }

    // Probes on the served health path.
    let health = serving.health_check_path();
    let path = if root_path {
        format!("/inference/{}{health}", ep.name)
    } else {
        health
    };
    let probe = |delay, period, failure| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.clone()),
            port: IntOrString::Int(port),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: Some(delay),
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
                command: Some(
                    [
                        "aws",
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
                ..Container::default()
            });
            notes.push("the model-sync init container's exact shape beyond its image, command and mount is not in the facts (as read)");
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
        readiness_probe: Some(probe(30, 10, None)),
        liveness_probe: Some(probe(120, 15, Some(5))),
        // /health answers only once the model is loaded.
        startup_probe: sglang.then(|| {
            probe(
                0,
                SGLANG_STARTUP_PERIOD,
                Some(SGLANG_STARTUP_SECONDS / SGLANG_STARTUP_PERIOD),
            )
        }),
        volume_mounts: (!mounts.is_empty()).then_some(mounts),
        ..Container::default()
    };
    let labels = inference_labels(name, mooncake.map(|(_, role)| role_label(role)));
    let replicas = if ep.stopped { 0 } else { replicas };
    Ok(Manifest::Deployment(Box::new(Deployment {
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
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(SERVICE_ACCOUNT.to_owned()),
                    automount_service_account_token: Some(false),
                    init_containers: (!init_containers.is_empty()).then_some(init_containers),
                    containers: vec![container],
                    tolerations: Some(tolerations),
                    node_selector: (!node_selector.is_empty()).then_some(node_selector),
                    volumes: (!volumes.is_empty()).then_some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    })))
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
