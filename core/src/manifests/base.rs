//! What GCO's base pass keeps in `gco-inference` for every endpoint there,
//! never the monitor: the tenant write fence (09-tenant-write-fence.yaml
//! @381fc5c046) and the inference proxy's ingress rule
//! (03-network-policies.yaml, as GCO's network-policy tests pin it).
//!
//! The fence's CEL expressions are GCO's code, not copied: each validation
//! keeps GCO's message and reason, and a named placeholder as its
//! expression (which no API server compiles, so the object is never
//! applied weaker than GCO's).

use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::meta::{map, selector};
use super::{Manifest, Notes};
use crate::limits::{
    DEFAULT_NAMESPACE, ENDPOINT_TLS_PORT, NETWORK_POLICY_PROXY_INGRESS, TENANT_WRITE_FENCE,
};

const NAMESPACE_LABEL: &str = "kubernetes.io/metadata.name";

/// The fence's validations: GCO's `message` for each, in its order.
const FENCE_MESSAGES: [&str; 6] = [
    "only the inference monitor may create gco-inference objects labelled gco.io/type: inference, or add or remove that label",
    "only the inference monitor may change what an object it manages in gco-inference runs, serves or carries",
    "only the inference monitor may create gco-inference ConfigMaps named <name>-tls-proxy, <name>-pd-proxy or <name>-mooncake",
    "only the inference monitor may set, change or remove the gco.io/lifecycle-id, gco.io/region-generation and gco.io/leader-epoch annotations in gco-inference",
    "only cert-manager's controller may write the Secret gco-inference/gco-inference-tls",
    "only trust-manager may write the ConfigMap gco-jobs/gco-internal-ca",
];

fn fence_meta() -> ObjectMeta {
    ObjectMeta {
        name: Some(TENANT_WRITE_FENCE.to_owned()),
        labels: Some(map([("app", "gco"), ("project", "gco")])),
        ..ObjectMeta::default()
    }
}

fn note_base_pass(notes: &mut Notes) {
    notes.push(format!(
        "{TENANT_WRITE_FENCE} and {NETWORK_POLICY_PROXY_INGRESS} are GCO's base pass's, not the monitor's: they are there before any endpoint, and the monitor never changes them"
    ));
}

/// `gco-tenant-write-fence`, the policy.
pub(super) fn write_fence(notes: &mut Notes) -> Manifest {
    note_base_pass(notes);
    notes.push(format!(
        "{TENANT_WRITE_FENCE}: GCO's CEL (its variables, each validation's expression and messageExpression) is not copied; each expression is a named placeholder"
    ));
    let rule = |group: &str, resources: &[&str]| NamedRuleWithOperations {
        api_groups: Some(vec![group.to_owned()]),
        api_versions: Some(vec!["v1".to_owned()]),
        operations: Some(vec!["CREATE".to_owned(), "UPDATE".to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        ..NamedRuleWithOperations::default()
    };
    let validations = FENCE_MESSAGES
        .iter()
        .enumerate()
        .map(|(i, message)| Validation {
            expression: format!("<GCO's rule {} of 09-tenant-write-fence.yaml>", i + 1),
            message: Some((*message).to_owned()),
            reason: Some("Forbidden".to_owned()),
            ..Validation::default()
        })
        .collect();
    Manifest::ValidatingAdmissionPolicy(Box::new(ValidatingAdmissionPolicy {
        metadata: fence_meta(),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".to_owned()),
            match_constraints: Some(MatchResources {
                namespace_selector: Some(LabelSelector {
                    match_expressions: Some(vec![LabelSelectorRequirement {
                        key: NAMESPACE_LABEL.to_owned(),
                        operator: "In".to_owned(),
                        values: Some(vec![DEFAULT_NAMESPACE.to_owned(), "gco-jobs".to_owned()]),
                    }]),
                    ..LabelSelector::default()
                }),
                resource_rules: Some(vec![
                    rule("", &["configmaps", "secrets", "services"]),
                    rule("apps", &["deployments", "statefulsets"]),
                ]),
                ..MatchResources::default()
            }),
            validations: Some(validations),
            ..ValidatingAdmissionPolicySpec::default()
        }),
        ..ValidatingAdmissionPolicy::default()
    }))
}

/// `gco-tenant-write-fence`, its binding: refuse what the policy refuses.
pub(super) fn write_fence_binding(notes: &mut Notes) -> Manifest {
    note_base_pass(notes);
    Manifest::ValidatingAdmissionPolicyBinding(Box::new(ValidatingAdmissionPolicyBinding {
        metadata: fence_meta(),
        spec: ValidatingAdmissionPolicyBindingSpec {
            policy_name: TENANT_WRITE_FENCE.to_owned(),
            validation_actions: vec!["Deny".to_owned()],
            ..ValidatingAdmissionPolicyBindingSpec::default()
        },
    }))
}

/// `allow-inference-proxy-ingress`: every model pod in `gco-inference`
/// admits the inference proxy (`gco-system`, `app: inference-proxy`) on
/// the TLS sidecar's port only.
pub(super) fn proxy_ingress(notes: &mut Notes) -> Manifest {
    note_base_pass(notes);
    notes.push(format!(
        "{NETWORK_POLICY_PROXY_INGRESS}: its selector, peer and port are GCO's tests'; its label project: gco and policyTypes [Ingress] are as read (every shipped policy has them)"
    ));
    let proxy = NetworkPolicyPeer {
        namespace_selector: Some(selector(map([(NAMESPACE_LABEL, "gco-system")]))),
        pod_selector: Some(selector(map([("app", "inference-proxy")]))),
        ..NetworkPolicyPeer::default()
    };
    Manifest::NetworkPolicy(Box::new(NetworkPolicy {
        metadata: ObjectMeta {
            name: Some(NETWORK_POLICY_PROXY_INGRESS.to_owned()),
            namespace: Some(DEFAULT_NAMESPACE.to_owned()),
            labels: Some(map([("project", "gco")])),
            ..ObjectMeta::default()
        },
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(selector(map([("gco.io/type", "inference")]))),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![NetworkPolicyIngressRule {
                from: Some(vec![proxy]),
                ports: Some(vec![NetworkPolicyPort {
                    protocol: Some("TCP".to_owned()),
                    port: Some(IntOrString::Int(ENDPOINT_TLS_PORT as i32)),
                    end_port: None,
                }]),
            }]),
            ..NetworkPolicySpec::default()
        }),
    }))
}
