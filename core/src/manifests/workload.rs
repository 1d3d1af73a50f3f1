//! The serving Deployments and Services (4.2, 4.3) and the `{name}-mooncake`
//! ConfigMap (4.4).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, ContainerPort, PodSpec, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::container::{Launch, Placement, Probes, Storage, serving_env};
use super::meta::{inference_labels, map, object_meta, selector};
use super::{Endpoint, Manifest, ManifestError, Notes, tls};
use crate::framework::Framework;
use crate::json::{Object, Value};
use crate::limits::{DEFAULT_REPLICAS, ENDPOINT_TLS_PORT};
use crate::mooncake::Role;
use crate::plan::{Block, PlanError, tls_program_name};

const SERVICE_ACCOUNT: &str = "gco-service-account";

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
    let launch = Launch::of(ep, &image, mooncake);
    let placement = Placement::of(serving, &image, block);
    let storage = Storage::of(ep, block);
    let probes = Probes::of(serving, port, launch.root_path.then_some(ep.name));
    let framework = serving.runtime_framework(&image);
    let container = Container {
        name: "inference".to_owned(),
        image: Some(image),
        command: launch.command,
        args: (!launch.args.is_empty()).then_some(launch.args),
        ports: Some(vec![ContainerPort {
            container_port: port,
            ..ContainerPort::default()
        }]),
        env: Some(serving_env(serving, block)),
        resources: Some(ResourceRequirements {
            requests: Some(placement.requests),
            limits: Some(placement.limits),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(probes.readiness()),
        liveness_probe: Some(probes.liveness()),
        // SGLang's /health answers only once the model is loaded.
        startup_probe: (framework == Some(Framework::Sglang)).then(|| probes.sglang_startup()),
        volume_mounts: (!storage.mounts.is_empty()).then_some(storage.mounts),
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
                    init_containers: (!storage.init_containers.is_empty())
                        .then_some(storage.init_containers),
                    containers: vec![container],
                    tolerations: Some(placement.tolerations),
                    node_selector: (!placement.node_selector.is_empty())
                        .then_some(placement.node_selector),
                    affinity: placement.affinity,
                    volumes: (!storage.volumes.is_empty()).then_some(storage.volumes),
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
