//! The reference's vocabularies, bounds and defaults, each in one place.
//! (The serving modes are [`crate::mooncake::Mode`]; the frameworks and
//! capacity types a spec may name are in [`crate::spec`].)

/// KV transfer over RDMA: scheduled on EFA nodes, with the shared master
/// for the transfer engine's handshake, and named `efa` to vLLM.
pub const MOONCAKE_PROTOCOL_RDMA: &str = "rdma";
/// KV transfer over TCP: the non-EFA fallback.
pub const MOONCAKE_PROTOCOL_TCP: &str = "tcp";

/// KV transfer intents, sorted as the reference lists them in messages.
pub const MOONCAKE_TRANSFER_PROTOCOLS: [&str; 2] = [MOONCAKE_PROTOCOL_RDMA, MOONCAKE_PROTOCOL_TCP];

/// The transfer protocol a block gets when `transfer.protocol` is absent:
/// GCO's Mooncake runs on EFA.
pub const MOONCAKE_DEFAULT_TRANSFER_PROTOCOL: &str = MOONCAKE_PROTOCOL_RDMA;

/// Offload tiers the monitor understands. The reference does not enforce
/// them, so an unknown tier is a warning here, never an error.
pub const MOONCAKE_OFFLOAD_TIERS: [&str; 3] = ["cpu", "disk", "none"];

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

/// Autoscaling metrics a plain HPA reads (resource metrics).
pub const RESOURCE_METRICS: [&str; 2] = ["cpu", "memory"];

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

/// The bootstrap ports the `allow-rdma-bootstrap` NetworkPolicy opens above
/// `transfer.bootstrap_base_port`: vLLM derives one port per worker from it.
pub const MOONCAKE_BOOTSTRAP_PORT_SPAN: i64 = 100;

/// Autoscaling metrics KEDA serves (from GPU exporters).
pub const KEDA_METRICS: [&str; 2] = ["gpu", "gpu_memory"];

/// Every autoscaling metric type GCO scales on: the resource metrics, then
/// KEDA's.
pub const AUTOSCALE_METRICS: [&str; 4] = [
    RESOURCE_METRICS[0],
    RESOURCE_METRICS[1],
    KEDA_METRICS[0],
    KEDA_METRICS[1],
];

/// The metric a role autoscales on when its block names none: CPU at 70%.
pub const MOONCAKE_DEFAULT_AUTOSCALE_METRIC: (&str, i64) = (RESOURCE_METRICS[0], 70);

/// The PD proxy's replicas when `proxy.replicas` is not set.
pub const MOONCAKE_DEFAULT_PROXY_REPLICAS: i64 = 1;

/// The PD proxy's container port: fixed, whatever `spec.port` says
/// (GCO_FACTS_NEWEST 4.5).
pub const MOONCAKE_PROXY_PORT: i64 = 8000;

/// The port of the Services that front an endpoint (a plain endpoint's,
/// store mode's and the PD proxy's), forwarding to their pods' port.
pub const SERVICE_PORT: i64 = 80;

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
    use crate::mooncake::Mode;

    #[test]
    fn vocabularies_are_listed_as_the_reference_lists_them() {
        assert_eq!(choices(MOONCAKE_TRANSFER_PROTOCOLS), "{rdma, tcp}");
        assert_eq!(
            choices(Mode::ALL.map(Mode::as_str)),
            "{both, disaggregated, store}"
        );
        assert_eq!(choices([]), "{}");
        assert!(MOONCAKE_TRANSFER_PROTOCOLS.contains(&MOONCAKE_DEFAULT_TRANSFER_PROTOCOL));
        assert!(MOONCAKE_PROXY_SCHEDULING.contains(&MOONCAKE_DEFAULT_PROXY_SCHEDULING));
        assert!(AUTOSCALE_METRICS.contains(&MOONCAKE_DEFAULT_AUTOSCALE_METRIC.0));
    }

    /// The typed views (and so the JSON Schema) name the same vocabularies.
    #[cfg(feature = "serde")]
    #[test]
    fn typed_views_spell_the_vocabularies() {
        use crate::types::{CapacityType, Framework, MooncakeMode, OffloadTier, TransferProtocol};
        let names = |json: String| -> Vec<String> { serde_json::from_str(&json).unwrap() };
        let modes = [
            MooncakeMode::Both,
            MooncakeMode::Disaggregated,
            MooncakeMode::Store,
        ];
        assert_eq!(
            names(serde_json::to_string(&modes).unwrap()),
            Mode::ALL.map(Mode::as_str)
        );
        let protocols = [TransferProtocol::Rdma, TransferProtocol::Tcp];
        assert_eq!(
            names(serde_json::to_string(&protocols).unwrap()),
            MOONCAKE_TRANSFER_PROTOCOLS
        );
        let tiers = [OffloadTier::Cpu, OffloadTier::Disk, OffloadTier::None];
        assert_eq!(
            names(serde_json::to_string(&tiers).unwrap()),
            MOONCAKE_OFFLOAD_TIERS
        );
        assert_eq!(
            names(serde_json::to_string(&Framework::ALL).unwrap()),
            Framework::ALL.map(Framework::as_str)
        );
        let capacity = [CapacityType::Spot, CapacityType::OnDemand];
        assert_eq!(
            names(serde_json::to_string(&capacity).unwrap()),
            crate::spec::CAPACITY_TYPES
        );
    }
}
