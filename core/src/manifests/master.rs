//! What one namespace's Mooncake endpoints share: the `mooncake-master`
//! StatefulSet and headless Service (4.6) and the four NetworkPolicies
//! (4.7). The monitor creates them once and never updates them, so they
//! carry no endpoint's ownership annotations.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    SecurityContext, Service, ServicePort, ServiceSpec, TCPSocketAction,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::{map, object_meta, quantities, selector};
use super::{Endpoint, Manifest, ManifestError, Notes};
use crate::json::Value;
use crate::limits::{
    MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
};
use crate::plan::{AllowRule, Block, PlanError};

const RPC_PORT: i32 = MOONCAKE_MASTER_RPC_PORT as i32;
const METADATA_PORT: i32 = MOONCAKE_MASTER_METADATA_PORT as i32;

fn master_labels() -> std::collections::BTreeMap<String, String> {
    map([("app", MOONCAKE_MASTER_NAME), ("project", "gco")])
}

/// The image: `store.master_image`, else the region's
/// `MOONCAKE_MASTER_IMAGE`; never rewritten for the region.
fn master_image(ep: &Endpoint<'_>, block: &Block<'_>) -> Result<String, ManifestError> {
    let from_spec = block
        .section("store")
        .and_then(|s| s.get("master_image"))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    if let Some(image) = from_spec {
        return Ok(image.to_owned());
    }
    if let Some(image) = ep.ctx.master_image() {
        return Ok(image.to_owned());
    }
    Err(PlanError {
        path: "spec.mooncake.store.master_image".into(),
        message: format!(
            "the shared {MOONCAKE_MASTER_NAME} needs an image: set mooncake.store.master_image or give {}'s MOONCAKE_MASTER_IMAGE. GCO has no default: with neither, its monitor cannot create the master and the region stays creating with 'shared master could not be created' (as read)",
            ep.ctx.region
        ),
    })
}

fn tcp_probe(port: &str, delay: i32, period: i32, failure: Option<i32>) -> Probe {
    Probe {
        tcp_socket: Some(TCPSocketAction {
            port: IntOrString::String(port.to_owned()),
            ..TCPSocketAction::default()
        }),
        initial_delay_seconds: Some(delay),
        period_seconds: Some(period),
        failure_threshold: failure,
        ..Probe::default()
    }
}

/// The headless Service of `mooncake-master`.
pub(super) fn service(ep: &Endpoint<'_>, notes: &mut Notes) -> Manifest {
    notes.push(format!(
        "{MOONCAKE_MASTER_NAME} and the NetworkPolicies are shared by the namespace: the monitor creates them when absent and never changes them, so an existing one keeps its image and window"
    ));
    let port = |name: &str, number: i32| ServicePort {
        name: Some(name.to_owned()),
        port: number,
        target_port: Some(IntOrString::String(name.to_owned())),
        protocol: Some("TCP".to_owned()),
        ..ServicePort::default()
    };
    Manifest::Service(Box::new(Service {
        metadata: object_meta(
            MOONCAKE_MASTER_NAME,
            ep.namespace,
            Some(master_labels()),
            Default::default(),
        ),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            selector: Some(map([("app", MOONCAKE_MASTER_NAME)])),
            ports: Some(vec![port("rpc", RPC_PORT), port("metadata", METADATA_PORT)]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }))
}

/// The StatefulSet of `mooncake-master`.
pub(super) fn stateful_set(
    ep: &Endpoint<'_>,
    block: &Block<'_>,
) -> Result<Manifest, ManifestError> {
    let image = master_image(ep, block)?;
    let container_port = |name: &str, number: i32| ContainerPort {
        name: Some(name.to_owned()),
        container_port: number,
        ..ContainerPort::default()
    };
    let container = Container {
        name: MOONCAKE_MASTER_NAME.to_owned(),
        image: Some(image),
        command: Some(vec!["mooncake_master".to_owned()]),
        args: Some(vec![
            format!("--port={RPC_PORT}"),
            "--enable_http_metadata_server=true".to_owned(),
            format!("--http_metadata_server_port={METADATA_PORT}"),
        ]),
        ports: Some(vec![
            container_port("rpc", RPC_PORT),
            container_port("metadata", METADATA_PORT),
        ]),
        resources: Some(ResourceRequirements {
            requests: Some(quantities([("cpu", "250m"), ("memory", "512Mi")])),
            limits: Some(quantities([("cpu", "1"), ("memory", "2Gi")])),
            ..ResourceRequirements::default()
        }),
        startup_probe: Some(tcp_probe("rpc", 5, 5, Some(30))),
        liveness_probe: Some(tcp_probe("rpc", 15, 30, None)),
        readiness_probe: Some(tcp_probe("metadata", 10, 15, None)),
        security_context: Some(SecurityContext {
            run_as_user: Some(0),
            run_as_group: Some(0),
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            read_only_root_filesystem: Some(false),
            ..SecurityContext::default()
        }),
        ..Container::default()
    };
    let stateful_set = StatefulSet {
        metadata: object_meta(
            MOONCAKE_MASTER_NAME,
            ep.namespace,
            Some(master_labels()),
            Default::default(),
        ),
        spec: StatefulSetSpec {
            replicas: Some(1),
            service_name: Some(MOONCAKE_MASTER_NAME.to_owned()),
            selector: selector(map([("app", MOONCAKE_MASTER_NAME)])),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(master_labels()),
                    annotations: Some(map([("karpenter.sh/do-not-disrupt", "true")])),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..StatefulSetSpec::default()
        },
        ..StatefulSet::default()
    };
    Ok(Manifest::StatefulSet(Box::new(stateful_set)))
}

fn inference_pods() -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(selector(map([("gco.io/type", "inference")]))),
        ..NetworkPolicyPeer::default()
    }
}

fn master_pods() -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(selector(map([("app", MOONCAKE_MASTER_NAME)]))),
        ..NetworkPolicyPeer::default()
    }
}

fn tcp(port: Option<i32>, end_port: Option<i32>) -> NetworkPolicyPort {
    NetworkPolicyPort {
        protocol: Some("TCP".to_owned()),
        port: port.map(IntOrString::Int),
        end_port,
    }
}

fn policy(
    namespace: &str,
    name: &str,
    selects: NetworkPolicyPeer,
    ingress: NetworkPolicyIngressRule,
    egress: Option<Vec<NetworkPolicyEgressRule>>,
) -> Manifest {
    let mut types = vec!["Ingress".to_owned()];
    if egress.is_some() {
        types.push("Egress".to_owned());
    }
    Manifest::NetworkPolicy(Box::new(NetworkPolicy {
        metadata: object_meta(
            name,
            namespace,
            Some(map([("project", "gco")])),
            Default::default(),
        ),
        spec: Some(NetworkPolicySpec {
            pod_selector: selects.pod_selector,
            ingress: Some(vec![ingress]),
            egress,
            policy_types: Some(types),
        }),
    }))
}

fn ingress_from_inference(ports: Vec<NetworkPolicyPort>) -> NetworkPolicyIngressRule {
    NetworkPolicyIngressRule {
        from: Some(vec![inference_pods()]),
        ports: Some(ports),
    }
}

/// One of the allow rules beside the namespace's default-deny posture.
pub(super) fn allow_rule(
    namespace: &str,
    name: &str,
    rule: AllowRule,
    block: &Block<'_>,
) -> Manifest {
    match rule {
        AllowRule::InferenceInternal => policy(
            namespace,
            name,
            inference_pods(),
            ingress_from_inference(vec![tcp(None, None)]),
            Some(vec![
                NetworkPolicyEgressRule {
                    to: Some(vec![inference_pods()]),
                    ports: Some(vec![tcp(None, None)]),
                },
                NetworkPolicyEgressRule {
                    to: Some(vec![master_pods()]),
                    ports: Some(vec![
                        tcp(Some(RPC_PORT), None),
                        tcp(Some(METADATA_PORT), None),
                    ]),
                },
            ]),
        ),
        AllowRule::PodToMaster => policy(
            namespace,
            name,
            master_pods(),
            ingress_from_inference(vec![tcp(Some(RPC_PORT), None)]),
            None,
        ),
        AllowRule::PodToMetadata => policy(
            namespace,
            name,
            master_pods(),
            ingress_from_inference(vec![tcp(Some(METADATA_PORT), None)]),
            None,
        ),
        AllowRule::RdmaBootstrap => {
            let (base, end) = block.bootstrap_window();
            let clamp =
                |p: i64| i32::try_from(p).unwrap_or(if p < 0 { i32::MIN } else { i32::MAX });
            policy(
                namespace,
                name,
                inference_pods(),
                ingress_from_inference(vec![tcp(Some(clamp(base)), Some(clamp(end)))]),
                None,
            )
        }
    }
}
