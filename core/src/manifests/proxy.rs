//! The PD proxy of split modes (4.5): its program's ConfigMap, the admin
//! key Secret when the spec names none, its Deployment and Service.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, EnvVarSource, PodSpec,
    PodTemplateSpec, Probe, ResourceRequirements, Secret, SecretKeySelector, Service, ServicePort,
    ServiceSpec, TCPSocketAction, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::{SERVICE_PORT, inference_labels, map, object_meta, selector};
use super::workload::{env_var, mount};
use super::{Endpoint, Manifest, ManifestError, Notes};
use crate::json::Value;
use crate::limits::{MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT, MOONCAKE_PROXY_PORT};
use crate::mooncake::Role;
use crate::plan::{Block, PlanError, admin_secret_name, proxy_program_name, serving_name};

const PROXY_PORT: i32 = MOONCAKE_PROXY_PORT as i32;
/// The key of the admin Secret and the env the proxy reads it from.
const ADMIN_API_KEY: &str = "ADMIN_API_KEY";
const PROGRAM_KEY: &str = "mooncake_pd_proxy.py";
const PROGRAM_DIR: &str = "/etc/pd-proxy";
/// Mode 0o555: the program is readable and executable, never writable.
const PROGRAM_MODE: i32 = 0o555;
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
        metadata: object_meta(name, ep.namespace, None, ep.owner.annotations()),
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
    let image = block
        .proxy_field("image")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| PlanError {
            path: "spec.mooncake.proxy.image".into(),
            message: "mooncake.proxy.image is unset: GCO's deploy always writes it (the deploy image by default) and the monitor runs the proxy with it".into(),
        })?;
    let port = ep.serving.container_port();
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
    env.push(env_var("PD_PROXY_PORT", &PROXY_PORT.to_string()));
    for (key, role) in [
        ("PD_PROXY_PREFILL_URL", Role::Prefill),
        ("PD_PROXY_DECODE_URL", Role::Decode),
    ] {
        let service = serving_name(name, Some(role));
        env.push(env_var(key, &format!("http://{service}:{port}")));
    }

    let tcp_probe = |delay, period, failure| Probe {
        tcp_socket: Some(TCPSocketAction {
            port: IntOrString::Int(PROXY_PORT),
            ..TCPSocketAction::default()
        }),
        initial_delay_seconds: Some(delay),
        period_seconds: Some(period),
        failure_threshold: failure,
        ..Probe::default()
    };
    let quantities = |cpu: &str, memory: &str| {
        BTreeMap::from([
            ("cpu".to_owned(), Quantity(cpu.to_owned())),
            ("memory".to_owned(), Quantity(memory.to_owned())),
        ])
    };
    let container = Container {
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
            requests: Some(quantities("250m", "256Mi")),
            limits: Some(quantities("1", "1Gi")),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(tcp_probe(10, 10, None)),
        liveness_probe: Some(tcp_probe(30, 15, Some(5))),
        volume_mounts: Some(vec![mount("pd-proxy-script", PROGRAM_DIR, true)]),
        ..Container::default()
    };
    let labels = proxy_labels(proxy_name);
    let replicas = if ep.stopped {
        0
    } else {
        block.proxy_replicas()
    };
    Ok(Manifest::Deployment(Box::new(Deployment {
        metadata: object_meta(
            proxy_name,
            ep.namespace,
            Some(labels.clone()),
            ep.owner.annotations(),
        ),
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(replicas).unwrap_or(i32::MAX)),
            selector: selector(proxy_selector(proxy_name)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    volumes: Some(vec![Volume {
                        name: "pd-proxy-script".to_owned(),
                        config_map: Some(ConfigMapVolumeSource {
                            name: proxy_program_name(name),
                            default_mode: Some(PROGRAM_MODE),
                            ..ConfigMapVolumeSource::default()
                        }),
                        ..Volume::default()
                    }]),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    })))
}

/// The proxy's Service `{name}-proxy`.
pub(super) fn service(ep: &Endpoint<'_>, proxy_name: &str) -> Manifest {
    Manifest::Service(Box::new(Service {
        metadata: object_meta(
            proxy_name,
            ep.namespace,
            Some(proxy_labels(proxy_name)),
            ep.owner.annotations(),
        ),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(proxy_selector(proxy_name)),
            ports: Some(vec![ServicePort {
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(PROXY_PORT)),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }))
}

fn proxy_labels(proxy_name: &str) -> BTreeMap<String, String> {
    inference_labels(proxy_name, Some("proxy"))
}

fn proxy_selector(proxy_name: &str) -> BTreeMap<String, String> {
    map([("app", proxy_name), ("gco.io/role", "proxy")])
}
