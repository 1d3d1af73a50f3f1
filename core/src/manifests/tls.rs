//! The `endpoint-tls-proxy` sidecar GCO's monitor puts last in every model
//! pod (classic, canary, prefill, decode, store `single`, the PD proxy) and
//! the `{name}-tls-proxy` ConfigMap its program comes from, as GCO's
//! `tests/test_inference_endpoint_tls.py` pins them (after 7a0b3c6fd4): it
//! serves the `gco-inference-tls` wildcard certificate on 8443 and relays to
//! the pod's own server over loopback, so a model Service publishes 8443
//! only.
//!
//! The test names GCO's constants without their values where it compares
//! against them; those values are rendered here as named placeholders
//! (`<NAME>`, which no cluster accepts) or left out, and the notes list them.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, PodTemplateSpec,
    Probe, ResourceRequirements, SeccompProfile, SecretVolumeSource, SecurityContext, Service,
    ServicePort, ServiceSpec, TCPSocketAction, Volume,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::container::{env_var, mount};
use super::meta::{inference_labels, map, object_meta, quantities};
use super::{Endpoint, Manifest, Notes};
use crate::limits::{
    ENDPOINT_TLS_PORT, ENDPOINT_TLS_PORT_NAME, ENDPOINT_TLS_PROXY_CONTAINER, ENDPOINT_TLS_SECRET,
};

/// The sidecar's port as Kubernetes' port fields hold it.
const TLS_PORT: i32 = ENDPOINT_TLS_PORT as i32;
/// Where the sidecar finds its program: the ConfigMap's one key, mounted
/// read-only (as read: GCO's CI runs the same program for MLflow's sidecar
/// from `/etc/gco-tls-proxy/tls_proxy.py`, "the pinned interpreter image
/// the inference monitor uses").
const SCRIPT_DIR: &str = "/etc/gco-tls-proxy";
const SCRIPT_KEY: &str = "tls_proxy.py";
/// Where the sidecar mounts its keypair: `tls_proxy.py`'s own default and
/// GCO's docs/ARCHITECTURE.md ("mounts its leaf at /var/run/gco/tls").
const TLS_DIR: &str = "/var/run/gco/tls";
/// World-readable: model pods carry no fsGroup, and GCO does not own the
/// model images' users (the test's comment).
const MODE_0444: i32 = 0o444;
/// The annotation that keeps EKS Pod Identity's credentials out of the
/// sidecar (GCO's docs/ARCHITECTURE.md, "In-cluster TLS").
const SKIP_CONTAINERS_ANNOTATION: &str = "eks.amazonaws.com/skip-containers";

/// GCO's constants whose values no readable source shows, rendered by name.
const IMAGE: &str = "<ENDPOINT_TLS_PROXY_IMAGE>";
const TLS_VOLUME: &str = "<ENDPOINT_TLS_VOLUME>";
const SCRIPT_VOLUME: &str = "<ENDPOINT_TLS_PROXY_SCRIPT_VOLUME>";
const DIGEST_ANNOTATION: &str = "<ENDPOINT_TLS_PROXY_DIGEST_ANNOTATION>";
const DIGEST: &str = "<sha256 of the rendered sidecar>";
const SHUTDOWN_SECONDS: &str = "<GRACEFUL_SHUTDOWN_TIMEOUT_SECONDS>";
const CPU_REQUEST: &str = "<ENDPOINT_TLS_PROXY_CPU_REQUEST>";
const MEMORY_REQUEST: &str = "<ENDPOINT_TLS_PROXY_MEMORY_REQUEST>";
const MEMORY_LIMIT: &str = "<ENDPOINT_TLS_PROXY_MEMORY_LIMIT>";

/// What stands in the ConfigMap for GCO's `tls_proxy.py`.
pub const PROGRAM_PLACEHOLDER: &str = "# GCO's TLS proxy program (gco/services/tls_proxy.py) is not shipped here.\n# GCO's monitor writes its own source into this key; it is not ours to copy.\n";

/// The `{name}-tls-proxy` ConfigMap, once per endpoint.
pub(super) fn config_map(ep: &Endpoint<'_>, name: &str, notes: &mut Notes) -> Manifest {
    notes.push(format!(
        "ConfigMap {name}: {SCRIPT_KEY} holds a placeholder; GCO's monitor writes its own tls_proxy.py there"
    ));
    Manifest::ConfigMap(Box::new(ConfigMap {
        metadata: object_meta(
            name,
            ep.namespace,
            Some(inference_labels(ep.name, None)),
            ep.owner.annotations(),
        ),
        data: Some(BTreeMap::from([(
            SCRIPT_KEY.to_owned(),
            PROGRAM_PLACEHOLDER.to_owned(),
        )])),
        ..ConfigMap::default()
    }))
}

/// Puts the sidecar last in `deployment`'s pods, relaying to
/// `upstream_port` with the program of ConfigMap `config_map`: the
/// container, its two volumes, and the pod's skip-containers and digest
/// annotations.
pub(super) fn front(
    deployment: &mut Deployment,
    upstream_port: i32,
    config_map: &str,
    notes: &mut Notes,
) {
    notes.push(format!(
        "{ENDPOINT_TLS_PROXY_CONTAINER}: GCO's monitor renders these from constants no readable source shows, named here: {IMAGE} (a public.ecr.aws/docker/library/python:3.x.y-slim@sha256 image), {TLS_VOLUME} and {SCRIPT_VOLUME} (volume names), {DIGEST_ANNOTATION} and {DIGEST}, {SHUTDOWN_SECONDS} (below the pod's grace period), {CPU_REQUEST}, {MEMORY_REQUEST} and {MEMORY_LIMIT}; left out: the pod's terminationGracePeriodSeconds (MODEL_POD_TERMINATION_GRACE_SECONDS), the sidecar's runAsUser (not root) and its probes' timings"
    ));
    notes.push(format!(
        "{ENDPOINT_TLS_PROXY_CONTAINER}: its program at {SCRIPT_DIR}/{SCRIPT_KEY} is as read (GCO's CI runs the same program from that path)"
    ));
    let template: &mut PodTemplateSpec = &mut deployment.spec.template;
    let metadata = template.metadata.get_or_insert_with(Default::default);
    let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(
        SKIP_CONTAINERS_ANNOTATION.to_owned(),
        ENDPOINT_TLS_PROXY_CONTAINER.to_owned(),
    );
    annotations.insert(DIGEST_ANNOTATION.to_owned(), DIGEST.to_owned());
    let pod = template.spec.get_or_insert_with(Default::default);
    pod.containers.push(sidecar(upstream_port));
    pod.volumes.get_or_insert_with(Vec::new).extend([
        Volume {
            name: TLS_VOLUME.to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(ENDPOINT_TLS_SECRET.to_owned()),
                default_mode: Some(MODE_0444),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: SCRIPT_VOLUME.to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: config_map.to_owned(),
                default_mode: Some(MODE_0444),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
    ]);
}

/// The sidecar container itself.
fn sidecar(upstream_port: i32) -> Container {
    let tcp_probe = || Probe {
        tcp_socket: Some(TCPSocketAction {
            port: IntOrString::String(ENDPOINT_TLS_PORT_NAME.to_owned()),
            ..TCPSocketAction::default()
        }),
        ..Probe::default()
    };
    Container {
        name: ENDPOINT_TLS_PROXY_CONTAINER.to_owned(),
        image: Some(IMAGE.to_owned()),
        command: Some(vec![
            "python3".to_owned(),
            format!("{SCRIPT_DIR}/{SCRIPT_KEY}"),
        ]),
        ports: Some(vec![ContainerPort {
            container_port: TLS_PORT,
            name: Some(ENDPOINT_TLS_PORT_NAME.to_owned()),
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        env: Some(vec![
            env_var("PYTHONDONTWRITEBYTECODE", "1"),
            env_var("TLS_PROXY_PORT", &TLS_PORT.to_string()),
            env_var("TLS_PROXY_UPSTREAM_HOST", "127.0.0.1"),
            env_var("TLS_PROXY_UPSTREAM_PORT", &upstream_port.to_string()),
            env_var("GCO_TLS_CERT_FILE", &format!("{TLS_DIR}/tls.crt")),
            env_var("GCO_TLS_KEY_FILE", &format!("{TLS_DIR}/tls.key")),
            env_var("GRACEFUL_SHUTDOWN_TIMEOUT_SECONDS", SHUTDOWN_SECONDS),
        ]),
        // A request on every container keeps autoscalers' resource metrics
        // defined; no CPU limit, so no throttling of the token stream.
        resources: Some(ResourceRequirements {
            requests: Some(quantities([
                ("cpu", CPU_REQUEST),
                ("memory", MEMORY_REQUEST),
            ])),
            limits: Some(quantities([("memory", MEMORY_LIMIT)])),
            ..ResourceRequirements::default()
        }),
        // Its own listener only: a slow model never restarts the sidecar.
        readiness_probe: Some(tcp_probe()),
        liveness_probe: Some(tcp_probe()),
        security_context: Some(SecurityContext {
            run_as_non_root: Some(true),
            read_only_root_filesystem: Some(true),
            allow_privilege_escalation: Some(false),
            privileged: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_owned(),
                ..SeccompProfile::default()
            }),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(vec![
            mount(TLS_VOLUME, TLS_DIR, true),
            mount(SCRIPT_VOLUME, SCRIPT_DIR, true),
        ]),
        ..Container::default()
    }
}

/// A model Service (classic, canary, role, store, PD proxy): ClusterIP,
/// publishing only the sidecar's port, and selecting `app` with the
/// `gco.io/type: inference` marker the NetworkPolicy peers select on
/// (GCO's `_inference_service_selector`, `inference_monitor.py@7a0b3c6fd4`),
/// plus `extra` (the PD proxy's role marker).
pub(super) fn model_service(
    ep: &Endpoint<'_>,
    name: &str,
    labels: BTreeMap<String, String>,
    extra: Option<(&str, &str)>,
) -> Manifest {
    let mut selector = map([("app", name), ("gco.io/type", "inference")]);
    if let Some((key, value)) = extra {
        selector.insert(key.to_owned(), value.to_owned());
    }
    Manifest::Service(Box::new(Service {
        metadata: object_meta(name, ep.namespace, Some(labels), ep.owner.annotations()),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some(ENDPOINT_TLS_PORT_NAME.to_owned()),
                port: TLS_PORT,
                protocol: Some("TCP".to_owned()),
                target_port: Some(IntOrString::String(ENDPOINT_TLS_PORT_NAME.to_owned())),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }))
}
