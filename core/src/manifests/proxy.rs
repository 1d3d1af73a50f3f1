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

use super::meta::{inference_labels, map, object_meta, selector};
use super::workload::{env_var, mount, port_of};
use super::{Endpoint, Manifest, ManifestError, Notes};
use crate::json::Value;
use crate::plan::{Block, PlanError};

/// The proxy's container port.
const PROXY_PORT: i32 = 8000;
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

pub(super) fn pd_proxy(
    ep: &Endpoint<'_>,
    block: &Block<'_>,
    notes: &mut Notes,
) -> Result<Vec<Manifest>, ManifestError> {
    let name = ep.name;
    let proxy_name = format!("{name}-proxy");
    let config_map = format!("{name}-pd-proxy");
    let labels = inference_labels(&proxy_name, Some("proxy"));
    let mut out = Vec::new();

    out.push(Manifest::ConfigMap(Box::new(ConfigMap {
        metadata: object_meta(&config_map, ep.namespace, None, ep.owner.annotations()),
        data: Some(BTreeMap::from([(
            PROGRAM_KEY.to_owned(),
            PROGRAM_PLACEHOLDER.to_owned(),
        )])),
        ..ConfigMap::default()
    })));
    notes.push(format!(
        "ConfigMap {config_map}: {PROGRAM_KEY} holds a placeholder; GCO's monitor writes its bundled proxy program there"
    ));

    let secret = match block.named_admin_secret() {
        Some(named) => {
            notes.push(format!(
                "the proxy reads Secret '{named}' (mooncake.proxy.admin_api_key_secret): it must exist with a non-empty {ADMIN_API_KEY}, or the region fails"
            ));
            named.to_owned()
        }
        None => {
            let secret = format!("{name}-admin");
            out.push(Manifest::Secret(Box::new(Secret {
                metadata: object_meta(
                    &secret,
                    ep.namespace,
                    Some(map([
                        ("app", secret.as_str()),
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
            })));
            notes.push(format!(
                "Secret {secret}: its {ADMIN_API_KEY} is redacted; the monitor generates it"
            ));
            secret
        }
    };

    let image = block
        .proxy_field("image")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| PlanError {
            path: "spec.mooncake.proxy.image".into(),
            message: "mooncake.proxy.image is unset: GCO's deploy always writes it (the deploy image by default) and the monitor runs the proxy with it".into(),
        })?;
    let port = port_of(&ep.record.spec);
    let mut env: Vec<EnvVar> = [
        ("PD_PROXY_RESIDENCY_TIMEOUT_SECONDS", "2".to_owned()),
        ("PD_PROXY_RESIDENCY_CHECK_BLOCKING", "false".to_owned()),
        ("PD_PROXY_RESIDENCY_MISS_TARGET", "prefill".to_owned()),
        ("PD_PROXY_DECODE_ROUTING", "ready_only".to_owned()),
        ("PD_PROXY_NO_DECODE_BACKEND_ACTION", "reject".to_owned()),
        ("PD_PROXY_NO_DECODE_BACKEND_STATUS", "503".to_owned()),
        (
            "PD_PROXY_NO_DECODE_BACKEND_MESSAGE",
            "no available decode backend".to_owned(),
        ),
        ("PD_PROXY_SCHEDULING", block.proxy_scheduling()),
        ("PD_PROXY_STORE_ADDRESS", "mooncake-master:50051".to_owned()),
    ]
    .iter()
    .map(|(k, v)| env_var(k, v))
    .collect();
    env.push(EnvVar {
        name: ADMIN_API_KEY.to_owned(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret,
                key: ADMIN_API_KEY.to_owned(),
                ..SecretKeySelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    });
    env.push(env_var("PD_PROXY_PORT", &PROXY_PORT.to_string()));
    env.push(env_var(
        "PD_PROXY_PREFILL_URL",
        &format!("http://{name}-prefill:{port}"),
    ));
    env.push(env_var(
        "PD_PROXY_DECODE_URL",
        &format!("http://{name}-decode:{port}"),
    ));

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
    let proxy_selector = map([("app", proxy_name.as_str()), ("gco.io/role", "proxy")]);
    let replicas = if ep.stopped {
        0
    } else {
        block.proxy_replicas()
    };
    out.push(Manifest::Deployment(Box::new(Deployment {
        metadata: object_meta(
            &proxy_name,
            ep.namespace,
            Some(labels.clone()),
            ep.owner.annotations(),
        ),
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(replicas).unwrap_or(i32::MAX)),
            selector: selector(proxy_selector.clone()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    volumes: Some(vec![Volume {
                        name: "pd-proxy-script".to_owned(),
                        config_map: Some(ConfigMapVolumeSource {
                            name: config_map,
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
    })));
    out.push(Manifest::Service(Box::new(Service {
        metadata: object_meta(
            &proxy_name,
            ep.namespace,
            Some(labels),
            ep.owner.annotations(),
        ),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(proxy_selector),
            ports: Some(vec![ServicePort {
                port: 80,
                target_port: Some(IntOrString::Int(PROXY_PORT)),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    })));
    Ok(out)
}
