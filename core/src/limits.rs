//! The reference's vocabularies and bounds, each in one place.

/// Serving modes a `mooncake` block may declare, sorted as the reference
/// lists them in messages. `disaggregated` splits prefill and decode; `store`
/// runs a single KV-store instance; `both` composes the two.
pub const MOONCAKE_MODES: [&str; 3] = ["both", "disaggregated", "store"];

/// KV transfer intents, sorted. `rdma` (the default) is scheduled on EFA and
/// rendered to vLLM as `efa`; `tcp` is the non-EFA fallback.
pub const MOONCAKE_TRANSFER_PROTOCOLS: [&str; 2] = ["rdma", "tcp"];

/// The transfer protocol a block gets when `transfer.protocol` is absent.
pub const MOONCAKE_DEFAULT_TRANSFER_PROTOCOL: &str = "rdma";

/// Offload tiers the monitor understands. The reference does not enforce
/// them, so an unknown tier is a warning here, never an error.
pub const MOONCAKE_OFFLOAD_TIERS: [&str; 3] = ["cpu", "disk", "none"];

/// PD proxy scheduling strategies the monitor understands (a warning only).
pub const MOONCAKE_PROXY_SCHEDULING: [&str; 1] = ["round_robin"];

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

/// Longest endpoint name GCO can route: a DNS label.
pub const ENDPOINT_NAME_MAX_LEN: usize = 63;

/// Longest endpoint name whose derived object names (`-prefill`,
/// `-mooncake`: up to 9 more characters) still fit a 63-character
/// Kubernetes name, less a margin GCO keeps; see GCO_FACTS section 2.
pub const SPLIT_MODE_NAME_MAX_LEN: usize = 55;

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

/// The metric a role autoscales on when its block names none: CPU at 70%.
pub const MOONCAKE_DEFAULT_AUTOSCALE_METRIC: (&str, i64) = ("cpu", 70);

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

/// The PD proxy's replicas when `proxy.replicas` is not set.
pub const MOONCAKE_DEFAULT_PROXY_REPLICAS: i64 = 1;

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
