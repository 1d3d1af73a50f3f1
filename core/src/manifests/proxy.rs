//! The PD proxy of split modes (4.5): its program's ConfigMap, the admin
//! key Secret when the spec names none, its Deployment and Service.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource, ExecAction,
    KeyToPath, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Secret, SecretKeySelector,
    SecretVolumeSource, Volume,
};

use super::container::{env_var, mount};
use super::meta::{inference_labels, map, object_meta, quantities, selector};
use super::workload::object_meta_of_pod;
use super::{Endpoint, Manifest, ManifestError, Notes, tls};
use crate::json::Value;
use crate::limits::{
    ENDPOINT_TLS_PORT, ENDPOINT_TLS_SECRET, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
    MOONCAKE_PROXY_PORT,
};
use crate::mooncake::Role;
use crate::plan::{
    Block, PlanError, admin_secret_name, proxy_program_name, serving_name, tls_program_name,
};

const PROXY_PORT: i32 = MOONCAKE_PROXY_PORT as i32;
/// The key of the admin Secret and the env the proxy reads it from.
const ADMIN_API_KEY: &str = "ADMIN_API_KEY";
const PROGRAM_KEY: &str = "mooncake_pd_proxy.py";
const PROGRAM_DIR: &str = "/etc/pd-proxy";
/// Mode 0o555: the program is readable and executable, never writable.
const PROGRAM_MODE: i32 = 0o555;
/// Where the router finds the internal CA it trusts for the role Services'
/// sidecars: the convention of every in-cluster GCO client
/// (`GCO_INTERNAL_CA_FILE`'s default, GCO's docs/ARCHITECTURE.md).
const CA_DIR: &str = "/var/run/gco/ca";
const CA_KEY: &str = "ca.crt";
/// GCO's constants no readable source shows, rendered by name.
const CA_VOLUME: &str = "<INTERNAL_CA_VOLUME>";
const HEALTH_PROBE_SCRIPT: &str =
    "<GCO's probe script: GET /healthz on ('127.0.0.1',8000), each socket wait 3 s>";
/// What stands in the ConfigMap for GCO's bundled proxy program.
pub const PROGRAM_PLACEHOLDER: &str = "# GCO's bundled PD proxy program (gco/services/mooncake_pd_proxy.py) is not shipped here.\n# GCO's monitor writes it into this key; it is not ours to copy.\n";
/// What stands in the generated admin Secret for its value.
pub const REDACTED_KEY: &str = "<redacted: the monitor generates 64 random hex characters>";

/// `{name}-pd-proxy`: the proxy's program, a placeholder here.
pub(super) fn program(ep: &Endpoint<'_>, name: &str, notes: &mut Notes) -> Manifest {
    notes.push(format!(
        "ConfigMap {name}: {PROGRAM_KEY} holds a placeholder; GCO's monitor writes its bundled proxy program there"
    ));
    Manifest::ConfigMap(Box::new(ConfigMap {
        metadata: object_meta(
            name,
            ep.namespace,
            Some(proxy_labels(&crate::plan::proxy_name(ep.name))),
            ep.owner.annotations(),
        ),
        data: Some(BTreeMap::from([(
            PROGRAM_KEY.to_owned(),
            PROGRAM_PLACEHOLDER.to_owned(),
        )])),
        ..ConfigMap::default()
    }))
}

/// `{name}-admin`, the admin key the monitor generates when the spec names
/// no Secret, its value redacted.
pub(super) fn admin_secret(ep: &Endpoint<'_>, name: &str, notes: &mut Notes) -> Manifest {
    notes.push(format!(
        "Secret {name}: its {ADMIN_API_KEY} is redacted; the monitor generates it"
    ));
    Manifest::Secret(Box::new(Secret {
        metadata: object_meta(
            name,
            ep.namespace,
            Some(map([
                ("app", name),
                ("project", "gco"),
                ("gco.io/type", "inference"),
            ])),
            ep.owner.lifecycle_annotation(),
        ),
        type_: Some("Opaque".to_owned()),
        string_data: Some(BTreeMap::from([(
            ADMIN_API_KEY.to_owned(),
            REDACTED_KEY.to_owned(),
        )])),
        ..Secret::default()
    }))
}

/// The proxy's Deployment `{name}-proxy`.
pub(super) fn deployment(
    ep: &Endpoint<'_>,
    proxy_name: &str,
    block: &Block<'_>,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let name = ep.name;
    if let Some(named) = block.named_admin_secret() {
        notes.push(format!(
            "the proxy reads Secret '{named}' (mooncake.proxy.admin_api_key_secret): it must exist with a non-empty {ADMIN_API_KEY}, or the region fails"
        ));
    }
    let container = router(image(block)?, router_env(ep, block));
    notes.push(format!(
        "Deployment {proxy_name}: the router's env order beyond GCO's 7a0b3c6fd4 list is as read; its probes run {HEALTH_PROBE_SCRIPT} (a named placeholder) and their timeout (over 3 s) is left out; its CA volume is {CA_VOLUME}"
    ));
    let labels = proxy_labels(proxy_name);
    let replicas = if ep.stopped {
        0
    } else {
        block.proxy_replicas()
    };
    let mut deployment = Deployment {
        metadata: object_meta(
            proxy_name,
            ep.namespace,
            Some(labels.clone()),
            ep.owner.annotations(),
        ),
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(replicas).unwrap_or(i32::MAX)),
            selector: selector(map([("app", proxy_name)])),
            template: PodTemplateSpec {
                metadata: Some(object_meta_of_pod(labels, ep)),
                spec: Some(PodSpec {
                    service_account_name: Some("gco-service-account".to_owned()),
                    automount_service_account_token: Some(false),
                    containers: vec![container],
                    volumes: Some(volumes(name)),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    };
    tls::front(&mut deployment, PROXY_PORT, &tls_program_name(name), notes);
    Ok(Manifest::Deployment(Box::new(deployment)))
}

/// `mooncake.proxy.image`, which GCO's deploy always writes.
fn image<'b>(block: &'b Block<'_>) -> Result<&'b str, PlanError> {
    block
        .proxy_field("image")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| PlanError {
            path: "spec.mooncake.proxy.image".into(),
            message: "mooncake.proxy.image is unset: GCO's deploy always writes it (the deploy image by default) and the monitor runs the proxy with it".into(),
        })
}

/// The router's env, in GCO's order: its policies, the admin key, where it
/// listens, and the role Services it dials.
fn router_env(ep: &Endpoint<'_>, block: &Block<'_>) -> Vec<EnvVar> {
    let name = ep.name;
    let mut env: Vec<EnvVar> = [
        ("PD_PROXY_RESIDENCY_TIMEOUT_SECONDS", "2".to_owned()),
        ("PD_PROXY_RESIDENCY_CHECK_BLOCKING", "false".to_owned()),
        (
            "PD_PROXY_RESIDENCY_MISS_TARGET",
            Role::Prefill.as_str().to_owned(),
        ),
        ("PD_PROXY_DECODE_ROUTING", "ready_only".to_owned()),
        ("PD_PROXY_NO_DECODE_BACKEND_ACTION", "reject".to_owned()),
        ("PD_PROXY_NO_DECODE_BACKEND_STATUS", "503".to_owned()),
        (
            "PD_PROXY_NO_DECODE_BACKEND_MESSAGE",
            "no available decode backend".to_owned(),
        ),
        ("PD_PROXY_SCHEDULING", block.proxy_scheduling()),
        (
            "PD_PROXY_STORE_ADDRESS",
            format!("{MOONCAKE_MASTER_NAME}:{MOONCAKE_MASTER_RPC_PORT}"),
        ),
    ]
    .iter()
    .map(|(k, v)| env_var(k, v))
    .collect();
    env.push(EnvVar {
        name: ADMIN_API_KEY.to_owned(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: admin_secret_name(name, block),
                key: ADMIN_API_KEY.to_owned(),
                ..SecretKeySelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    });
    // The router listens on loopback behind its sidecar, and dials the role
    // Services' sidecars over verified HTTPS (GCO's TLS test).
    env.push(env_var("PD_PROXY_HOST", "127.0.0.1"));
    env.push(env_var("PD_PROXY_PORT", &PROXY_PORT.to_string()));
    for (key, role) in [
        ("PD_PROXY_PREFILL_URL", Role::Prefill),
        ("PD_PROXY_DECODE_URL", Role::Decode),
    ] {
        let service = serving_name(name, Some(role));
        env.push(env_var(
            key,
            &format!(
                "https://{service}.{}.svc.cluster.local:{ENDPOINT_TLS_PORT}",
                ep.namespace
            ),
        ));
    }
    env.push(env_var("PD_PROXY_CA_FILE", &format!("{CA_DIR}/{CA_KEY}")));
    env
}

/// The router's container: GCO's program run from its ConfigMap, with
/// probes run inside it.
fn router(image: &str, env: Vec<EnvVar>) -> Container {
    // The kubelet dials probes at the pod IP, which a loopback listener
    // never answers: both probes run a check inside the router's container.
    let exec_probe = |delay, period, failure| Probe {
        exec: Some(ExecAction {
            command: Some(
                ["python3", "-I", "-S", "-c", HEALTH_PROBE_SCRIPT]
                    .map(str::to_owned)
                    .to_vec(),
            ),
        }),
        initial_delay_seconds: Some(delay),
        period_seconds: Some(period),
        failure_threshold: failure,
        ..Probe::default()
    };
    Container {
        name: "proxy".to_owned(),
        image: Some(image.to_owned()),
        command: Some(vec![
            "python3".to_owned(),
            format!("{PROGRAM_DIR}/{PROGRAM_KEY}"),
        ]),
        ports: Some(vec![ContainerPort {
            container_port: PROXY_PORT,
            ..ContainerPort::default()
        }]),
        env: Some(env),
        resources: Some(ResourceRequirements {
            requests: Some(quantities([("cpu", "250m"), ("memory", "256Mi")])),
            limits: Some(quantities([("cpu", "1"), ("memory", "1Gi")])),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(exec_probe(10, 10, None)),
        liveness_probe: Some(exec_probe(30, 15, Some(5))),
        volume_mounts: Some(vec![
            mount("pd-proxy-script", PROGRAM_DIR, true),
            mount(CA_VOLUME, CA_DIR, true),
        ]),
        ..Container::default()
    }
}

/// The program's ConfigMap, and the CA certificate alone: no volume the
/// router mounts can surface the private key.
fn volumes(name: &str) -> Vec<Volume> {
    vec![
        Volume {
            name: "pd-proxy-script".to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: proxy_program_name(name),
                default_mode: Some(PROGRAM_MODE),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: CA_VOLUME.to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(ENDPOINT_TLS_SECRET.to_owned()),
                items: Some(vec![KeyToPath {
                    key: CA_KEY.to_owned(),
                    path: CA_KEY.to_owned(),
                    ..KeyToPath::default()
                }]),
                default_mode: Some(0o444),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        },
    ]
}

/// The proxy's Service `{name}-proxy`: TLS only, selecting the proxy's
/// pods alone.
pub(super) fn service(ep: &Endpoint<'_>, proxy_name: &str) -> Manifest {
    tls::model_service(
        ep,
        proxy_name,
        proxy_labels(proxy_name),
        Some(("gco.io/role", "proxy")),
    )
}

fn proxy_labels(proxy_name: &str) -> BTreeMap<String, String> {
    inference_labels(proxy_name, Some("proxy"))
}
