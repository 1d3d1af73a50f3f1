//! The reference's bounds and defaults, each in one place. A vocabulary
//! with a typed enum is that enum, with its default beside it (the serving
//! modes are `mooncake::Mode`, transfer protocols `TransferProtocol`,
//! offload tiers `OffloadTier`, autoscaling metrics `MetricKind`,
//! frameworks `framework::Framework`, capacity types `spec::CapacityType`):
//! this module is a leaf, depending on nothing else in the crate.

/// The PD proxy's scheduling when `proxy.scheduling` is not set: the only
/// strategy GCO's proxy implements.
pub const MOONCAKE_DEFAULT_PROXY_SCHEDULING: &str = "round_robin";

/// PD proxy scheduling strategies the monitor understands (a warning only).
pub const MOONCAKE_PROXY_SCHEDULING: [&str; 1] = [MOONCAKE_DEFAULT_PROXY_SCHEDULING];

/// Prefill and decode instances a split topology gets when the request
/// names no count: the reference's `build` defaults, 1P1D.
pub const MOONCAKE_DEFAULT_INSTANCES: i64 = 1;

/// Inclusive bounds of a per-role instance count in an XpYd topology.
pub const MOONCAKE_TOPOLOGY_MIN: i64 = 1;
/// Upper bound of a per-role instance count: the largest fleet GCO sizes.
pub const MOONCAKE_TOPOLOGY_MAX: i64 = 1000;

/// Inclusive bounds of a store byte size. The ceiling is the signed 64-bit
/// maximum: sizes are carried as decimal strings in this range so they never
/// pass through a float or `Decimal` on the DynamoDB round trip.
pub const MOONCAKE_BYTE_SIZE_MIN: i64 = 0;
/// See [`MOONCAKE_BYTE_SIZE_MIN`].
pub const MOONCAKE_BYTE_SIZE_MAX: i64 = i64::MAX;

/// Store fields authored as byte sizes, in the order the reference checks them.
pub const MOONCAKE_STORE_BYTE_SIZE_FIELDS: [&str; 2] = ["global_segment_size", "local_buffer_size"];

/// Transfer-engine defaults mirroring Mooncake's reference configuration.
pub const MOONCAKE_DEFAULT_BOOTSTRAP_BASE_PORT: i64 = 8998;
/// See [`MOONCAKE_DEFAULT_BOOTSTRAP_BASE_PORT`].
pub const MOONCAKE_DEFAULT_NUM_WORKERS: i64 = 10;
/// See [`MOONCAKE_DEFAULT_BOOTSTRAP_BASE_PORT`].
pub const MOONCAKE_DEFAULT_ABORT_REQUEST_TIMEOUT: i64 = 480;

/// The store's global segment when `mooncake.json` gets no size (4 GiB).
pub const MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE: &str = "4294967296";
/// The store's local buffer when `mooncake.json` gets no size (2 GiB).
pub const MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE: &str = "2147483648";

/// The Mooncake-enabled vLLM image GCO's current release deploys when a
/// mooncake mode is set and no image is given. Configurable in the backend.
pub const DEFAULT_MOONCAKE_IMAGE: &str = "vllm/vllm-openai:v0.27.1";

/// Namespace GCO deploys endpoints into unless told otherwise.
pub const DEFAULT_NAMESPACE: &str = "gco-inference";

/// The container port `gco inference deploy` gives an endpoint without
/// `--port`: vLLM's own default.
pub const DEFAULT_PORT: i64 = 8000;

/// The readiness path `gco inference deploy` gives an endpoint without
/// `--health-check-path`: vLLM's health route.
pub const DEFAULT_HEALTH_CHECK_PATH: &str = "/health";

/// Replicas an endpoint gets without `--replicas`.
pub const DEFAULT_REPLICAS: i64 = 1;

/// GPUs per replica without `--gpu-count`.
pub const DEFAULT_GPU_COUNT: i64 = 1;

/// The accelerator GCO assumes without `--accelerator`; deploy leaves it out
/// of the spec.
pub const DEFAULT_ACCELERATOR: &str = "nvidia";

/// Longest endpoint name GCO can route: a DNS label.
pub const ENDPOINT_NAME_MAX_LEN: usize = 63;

/// Container ports are TCP ports.
pub const PORT_MIN: i64 = 1;
/// See [`PORT_MIN`].
pub const PORT_MAX: i64 = 65535;

/// The shared Mooncake master: one StatefulSet and Service per namespace,
/// serving the store's RPC and the transfer engine's metadata.
pub const MOONCAKE_MASTER_NAME: &str = "mooncake-master";
/// The master's RPC port (`master_server_address`).
pub const MOONCAKE_MASTER_RPC_PORT: i64 = 50051;
/// The master's HTTP metadata port (`metadata_server`).
pub const MOONCAKE_MASTER_METADATA_PORT: i64 = 8080;

/// A role autoscaler's bounds when its block leaves them out (GCO_FACTS_NEWEST 4.8).
pub const MOONCAKE_AUTOSCALE_DEFAULT_MIN: i64 = 1;
/// See [`MOONCAKE_AUTOSCALE_DEFAULT_MIN`].
pub const MOONCAKE_AUTOSCALE_DEFAULT_MAX: i64 = 10;

/// The allow rules GCO's monitor keeps beside a namespace's default-deny
/// posture, once per namespace (GCO_FACTS_NEWEST 4.7).
pub const NETWORK_POLICY_INFERENCE_INTERNAL: &str = "allow-inference-internal";
/// See [`NETWORK_POLICY_INFERENCE_INTERNAL`].
pub const NETWORK_POLICY_POD_TO_MASTER: &str = "allow-pod-to-master";
/// See [`NETWORK_POLICY_INFERENCE_INTERNAL`].
pub const NETWORK_POLICY_POD_TO_METADATA: &str = "allow-pod-to-metadata";
/// See [`NETWORK_POLICY_INFERENCE_INTERNAL`].
pub const NETWORK_POLICY_RDMA_BOOTSTRAP: &str = "allow-rdma-bootstrap";

/// The NetworkPolicy GCO's base pass keeps in `gco-inference` so that model
/// pods admit only the inference proxy (03-network-policies.yaml).
pub const NETWORK_POLICY_PROXY_INGRESS: &str = "allow-inference-proxy-ingress";

/// The ValidatingAdmissionPolicy (and binding) GCO's base pass applies so
/// that only the inference monitor changes what it manages in
/// `gco-inference` (09-tenant-write-fence.yaml).
pub const TENANT_WRITE_FENCE: &str = "gco-tenant-write-fence";

/// The bootstrap ports the `allow-rdma-bootstrap` NetworkPolicy opens above
/// `transfer.bootstrap_base_port`: vLLM derives one port per worker from it.
pub const MOONCAKE_BOOTSTRAP_PORT_SPAN: i64 = 100;

/// The PD proxy's replicas when `proxy.replicas` is not set.
pub const MOONCAKE_DEFAULT_PROXY_REPLICAS: i64 = 1;

/// The PD proxy's container port: fixed, whatever `spec.port` says
/// (GCO_FACTS_NEWEST 4.5).
pub const MOONCAKE_PROXY_PORT: i64 = 8000;

/// The one port every model Service publishes, named `https`: each model
/// pod's `endpoint-tls-proxy` sidecar, which relays to the pod's own server
/// over loopback (GCO's `tests/test_inference_endpoint_tls.py`, after
/// 7a0b3c6fd4). A model may not listen on it.
pub const ENDPOINT_TLS_PORT: i64 = 8443;
/// See [`ENDPOINT_TLS_PORT`].
pub const ENDPOINT_TLS_PORT_NAME: &str = "https";
/// The TLS sidecar's container, the last of every model pod.
pub const ENDPOINT_TLS_PROXY_CONTAINER: &str = "endpoint-tls-proxy";
/// The wildcard certificate (`*.gco-inference.svc`) cert-manager issues in
/// `gco-inference`, which every sidecar serves.
pub const ENDPOINT_TLS_SECRET: &str = "gco-inference-tls";

/// The EFA device each GPU container of an RDMA pod requests, and the taint
/// EFA nodes carry.
pub const EFA_RESOURCE: &str = "vpc.amazonaws.com/efa";

/// Percent of traffic a canary may take: at least some traffic (else it
/// tests nothing) and never all (that is a promotion).
pub const CANARY_WEIGHT_MIN: i64 = 1;
/// See [`CANARY_WEIGHT_MIN`].
pub const CANARY_WEIGHT_MAX: i64 = 99;
/// The canary's share of traffic when none is given (GCO's CLI `-w` default).
pub const CANARY_DEFAULT_WEIGHT: i64 = 10;
/// The canary's replicas when none are given (GCO's CLI `-r` default).
pub const CANARY_DEFAULT_REPLICAS: i64 = 1;

/// A sorted vocabulary as the reference lists it in a message: `{a, b, c}`.
pub fn choices<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    format!("{{{}}}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Framework;
    use crate::mooncake::{MetricKind, Mode, OffloadTier, Role, TransferProtocol};
    use crate::record::DesiredState;
    use crate::spec::CapacityType;

    /// The texts the messages print, as they were written out before the
    /// enums became their source.
    #[test]
    fn vocabularies_are_listed_as_the_reference_lists_them() {
        assert_eq!(choices(TransferProtocol::NAMES), "{rdma, tcp}");
        assert_eq!(choices(Mode::NAMES), "{both, disaggregated, store}");
        assert_eq!(OffloadTier::NAMES.join(", "), "cpu, disk, none");
        assert_eq!(MetricKind::NAMES, ["cpu", "memory", "gpu", "gpu_memory"]);
        assert_eq!(choices([]), "{}");
        assert!(MOONCAKE_PROXY_SCHEDULING.contains(&MOONCAKE_DEFAULT_PROXY_SCHEDULING));
    }

    /// The serde names (and so the JSON Schema's) are the vocabularies'
    /// texts, and each text parses back to its value.
    #[cfg(feature = "serde")]
    #[test]
    fn serde_spells_the_vocabularies() {
        fn check<T>(all: &[T], names: &[&str], parse: fn(&str) -> Option<T>)
        where
            T: serde::Serialize + PartialEq + std::fmt::Debug + Copy,
        {
            let spelled: Vec<String> =
                serde_json::from_value(serde_json::to_value(all).unwrap()).unwrap();
            assert_eq!(spelled, names);
            for (value, name) in all.iter().zip(names) {
                assert_eq!(parse(name), Some(*value));
            }
        }
        check(&Mode::ALL, &Mode::NAMES, Mode::parse);
        check(&Role::ALL, &Role::NAMES, Role::parse);
        check(
            &TransferProtocol::ALL,
            &TransferProtocol::NAMES,
            TransferProtocol::parse,
        );
        check(&OffloadTier::ALL, &OffloadTier::NAMES, OffloadTier::parse);
        check(&MetricKind::ALL, &MetricKind::NAMES, MetricKind::parse);
        check(&Framework::ALL, &Framework::NAMES, Framework::parse);
        check(
            &CapacityType::ALL,
            &CapacityType::NAMES,
            CapacityType::parse,
        );
        check(
            &DesiredState::ALL,
            &DesiredState::NAMES,
            DesiredState::parse,
        );
    }
}
