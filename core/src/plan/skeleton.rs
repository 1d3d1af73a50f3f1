//! Which Kubernetes objects GCO's monitor applies for an endpoint, under
//! which names, in its pass order (GCO_FACTS_NEWEST 4.1, 4.2). The plan and
//! the manifests both render this one list, so neither decides the objects,
//! their order or their names.

use super::Block;
use crate::limits::{
    DEFAULT_NAMESPACE, MOONCAKE_MASTER_NAME, NETWORK_POLICY_INFERENCE_INTERNAL,
    NETWORK_POLICY_POD_TO_MASTER, NETWORK_POLICY_POD_TO_METADATA, NETWORK_POLICY_PROXY_INGRESS,
    NETWORK_POLICY_RDMA_BOOTSTRAP, TENANT_WRITE_FENCE,
};
use crate::mooncake::Role;

vocabulary! {
    /// A Kubernetes object kind the monitor manages.
    pub enum Kind {
        Deployment = "Deployment",
        Service = "Service",
        ConfigMap = "ConfigMap",
        Secret = "Secret",
        StatefulSet = "StatefulSet",
        /// An allow rule beside the namespace's default-deny posture.
        NetworkPolicy = "NetworkPolicy",
        HorizontalPodAutoscaler = "HorizontalPodAutoscaler",
        /// KEDA's autoscaler, for metrics a plain HPA cannot read (GPU).
        ScaledObject = "ScaledObject",
        /// A cluster-wide admission rule (the tenant write fence), and what
        /// binds it.
        ValidatingAdmissionPolicy = "ValidatingAdmissionPolicy",
        ValidatingAdmissionPolicyBinding = "ValidatingAdmissionPolicyBinding",
    }
}

/// One of the namespace's four allow rules (GCO_FACTS_NEWEST 4.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllowRule {
    /// Inference pods among themselves, and out to the master.
    InferenceInternal,
    /// Into the master's RPC port.
    PodToMaster,
    /// Into the master's metadata port.
    PodToMetadata,
    /// Into the KV bootstrap window of every inference pod.
    RdmaBootstrap,
}

impl AllowRule {
    const ALL: [AllowRule; 4] = [
        AllowRule::InferenceInternal,
        AllowRule::PodToMaster,
        AllowRule::PodToMetadata,
        AllowRule::RdmaBootstrap,
    ];

    fn name(self) -> &'static str {
        match self {
            AllowRule::InferenceInternal => NETWORK_POLICY_INFERENCE_INTERNAL,
            AllowRule::PodToMaster => NETWORK_POLICY_POD_TO_MASTER,
            AllowRule::PodToMetadata => NETWORK_POLICY_POD_TO_METADATA,
            AllowRule::RdmaBootstrap => NETWORK_POLICY_RDMA_BOOTSTRAP,
        }
    }
}

/// What GCO's base pass (the regional stack's manifests, not the monitor)
/// keeps in `gco-inference` for every endpoint there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseObject {
    /// `gco-tenant-write-fence` (09-tenant-write-fence.yaml): only the
    /// monitor changes what it manages in `gco-inference`.
    WriteFence,
    /// Its binding (Deny).
    WriteFenceBinding,
    /// `allow-inference-proxy-ingress` (03-network-policies.yaml): model
    /// pods admit the inference proxy only, on the sidecar's 8443.
    ProxyIngress,
}

/// What an object is for, which decides how it is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Kept by GCO's base pass; the monitor never changes it.
    BasePass(BaseObject),
    /// `{name}-tls-proxy`, the program of every model pod's TLS sidecar.
    TlsProgram,
    /// The classic endpoint's canary Deployment or Service, `{name}-canary`.
    Canary,
    /// The namespace's `mooncake-master`: its headless Service and its
    /// StatefulSet.
    Master,
    AllowRule(AllowRule),
    /// `{name}-mooncake`, the `mooncake.json` the pods mount.
    MooncakeConfig,
    /// A serving Deployment or its Service: a split role's, or (`None`) the
    /// one of a plain endpoint or of store mode.
    Serving(Option<Role>),
    /// A split role's HPA, or KEDA's ScaledObject when a metric is a GPU one.
    Autoscaler(Role),
    /// `{name}-pd-proxy`, the PD proxy's program.
    ProxyProgram,
    /// `{name}-admin`, the PD proxy's generated admin key.
    AdminSecret,
    /// The PD proxy's Deployment or its Service.
    Proxy,
}

impl Part {
    /// Shared by every Mooncake endpoint of the namespace, so never removed
    /// with one endpoint.
    pub(crate) fn is_shared(self) -> bool {
        matches!(self, Part::Master | Part::AllowRule(_) | Part::BasePass(_))
    }
}

/// One object: its kind, its name and what it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skeleton {
    pub kind: Kind,
    pub name: String,
    pub part: Part,
}

/// The objects of endpoint `name` in `namespace` (with its valid
/// `mooncake` block, if any, and whether its spec has a canary), in the
/// monitor's pass order: what the base pass keeps in `gco-inference`, the
/// shared master and the allow rules, the configs (the TLS sidecar's
/// program, then `mooncake.json`), the Deployments, their autoscalers, then
/// the Services and the PD proxy (a classic endpoint: its Deployment and
/// Service, then the canary's).
pub(crate) fn skeleton(
    name: &str,
    namespace: &str,
    block: Option<&Block<'_>>,
    canary: bool,
) -> Vec<Skeleton> {
    let object = |kind, name: String, part| Skeleton { kind, name, part };
    let mut out = Vec::new();
    if namespace == DEFAULT_NAMESPACE {
        for (kind, part) in [
            (Kind::ValidatingAdmissionPolicy, BaseObject::WriteFence),
            (
                Kind::ValidatingAdmissionPolicyBinding,
                BaseObject::WriteFenceBinding,
            ),
        ] {
            out.push(object(
                kind,
                TENANT_WRITE_FENCE.to_owned(),
                Part::BasePass(part),
            ));
        }
        out.push(object(
            Kind::NetworkPolicy,
            NETWORK_POLICY_PROXY_INGRESS.to_owned(),
            Part::BasePass(BaseObject::ProxyIngress),
        ));
    }
    let Some(block) = block else {
        out.push(object(
            Kind::ConfigMap,
            tls_program_name(name),
            Part::TlsProgram,
        ));
        for kind in [Kind::Deployment, Kind::Service] {
            out.push(object(kind, name.to_owned(), Part::Serving(None)));
        }
        if canary {
            for kind in [Kind::Deployment, Kind::Service] {
                out.push(object(kind, canary_name(name), Part::Canary));
            }
        }
        return out;
    };
    if block.needs_master() {
        for kind in [Kind::Service, Kind::StatefulSet] {
            out.push(object(kind, MOONCAKE_MASTER_NAME.to_owned(), Part::Master));
        }
        for rule in AllowRule::ALL {
            out.push(object(
                Kind::NetworkPolicy,
                rule.name().to_owned(),
                Part::AllowRule(rule),
            ));
        }
    }
    out.push(object(
        Kind::ConfigMap,
        tls_program_name(name),
        Part::TlsProgram,
    ));
    out.push(object(
        Kind::ConfigMap,
        mooncake_config_name(name),
        Part::MooncakeConfig,
    ));
    let roles: &[Option<Role>] = if block.mode.is_split() {
        &[Some(Role::Prefill), Some(Role::Decode)]
    } else {
        &[None]
    };
    for &role in roles {
        out.push(object(
            Kind::Deployment,
            serving_name(name, role),
            Part::Serving(role),
        ));
    }
    for role in roles.iter().flatten().copied() {
        if let Some(scaling) = block.role_autoscaling(role) {
            let kind = if scaling.needs_keda() {
                Kind::ScaledObject
            } else {
                Kind::HorizontalPodAutoscaler
            };
            out.push(object(
                kind,
                serving_name(name, Some(role)),
                Part::Autoscaler(role),
            ));
        }
    }
    for &role in roles {
        out.push(object(
            Kind::Service,
            serving_name(name, role),
            Part::Serving(role),
        ));
    }
    if block.mode.is_split() {
        out.push(object(
            Kind::ConfigMap,
            proxy_program_name(name),
            Part::ProxyProgram,
        ));
        if block.named_admin_secret().is_none() {
            out.push(object(
                Kind::Secret,
                admin_secret_name(name, block),
                Part::AdminSecret,
            ));
        }
        for kind in [Kind::Deployment, Kind::Service] {
            out.push(object(kind, proxy_name(name), Part::Proxy));
        }
    }
    out
}

/// A serving Deployment's and Service's name: `{name}-<role>`, or `{name}`.
pub(crate) fn serving_name(name: &str, role: Option<Role>) -> String {
    match role {
        Some(role) => format!("{name}-{}", role.as_str()),
        None => name.to_owned(),
    }
}

/// `{name}-tls-proxy`, which the endpoint's canary shares.
pub(crate) fn tls_program_name(name: &str) -> String {
    format!("{name}-tls-proxy")
}

pub(crate) fn canary_name(name: &str) -> String {
    format!("{name}-canary")
}

pub(crate) fn mooncake_config_name(name: &str) -> String {
    format!("{name}-mooncake")
}

pub(crate) fn proxy_name(name: &str) -> String {
    format!("{name}-proxy")
}

pub(crate) fn proxy_program_name(name: &str) -> String {
    format!("{name}-pd-proxy")
}

/// The Secret the PD proxy reads its admin key from: the one the spec
/// names, else the generated `{name}-admin`.
pub(crate) fn admin_secret_name(name: &str, block: &Block<'_>) -> String {
    block
        .named_admin_secret()
        .map_or_else(|| format!("{name}-admin"), str::to_owned)
}
