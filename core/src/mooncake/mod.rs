//! The optional `mooncake` block: its rules, its warnings and its builder.

mod build;
mod lint;
pub(crate) mod rules;

pub use lint::{BLOCK_KEYS, SECTION_KEYS};

pub use build::{
    Assembled, BuildArgs, BuildError, ErrorKind, assemble_mooncake_block, author_mooncake_block,
    build_mooncake_block, py_dict,
};

use crate::diagnostics::{Diagnostic, Report};
use crate::json::{Object, Value};
use rules::{AllErrors, FirstError};

vocabulary! {
    /// A serving mode: `disaggregated` splits prefill and decode; `store`
    /// runs a single KV-store instance; `both` composes the two. Sorted by
    /// name, as the reference lists them in messages.
    #[cfg_attr(feature = "schema", schemars(rename = "MooncakeMode"))]
    pub enum Mode {
        Both = "both",
        Disaggregated = "disaggregated",
        Store = "store",
    }
}

impl Mode {
    pub(crate) fn of(v: &Value) -> Option<Mode> {
        v.as_str().and_then(Mode::parse)
    }

    /// Split modes run prefill and decode behind a PD proxy, so they need a
    /// topology and may autoscale per role.
    pub fn is_split(self) -> bool {
        matches!(self, Mode::Disaggregated | Mode::Both)
    }

    /// Store-bearing modes run the KV store, so the builder enables it.
    pub fn has_store(self) -> bool {
        matches!(self, Mode::Store | Mode::Both)
    }
}

vocabulary! {
    /// A role of a split topology.
    pub enum Role {
        Prefill = "prefill",
        Decode = "decode",
    }
}

vocabulary! {
    /// How KV blocks move between instances (`transfer.protocol`), sorted
    /// as the reference lists them in messages: RDMA over EFA (scheduled on
    /// EFA nodes, with the shared master for the transfer engine's
    /// handshake, and named `efa` to vLLM), or TCP, the non-EFA fallback.
    pub enum TransferProtocol {
        Rdma = "rdma",
        Tcp = "tcp",
    }
}

vocabulary! {
    /// The store's offload tiers the monitor understands (`store.offload`).
    /// The reference does not enforce them, so an unknown tier is a warning.
    pub enum OffloadTier {
        Cpu = "cpu",
        Disk = "disk",
        None = "none",
    }
}

vocabulary! {
    /// The metrics a role autoscales on: the resource metrics a plain HPA
    /// reads, then the GPU ones KEDA serves.
    pub enum MetricKind {
        Cpu = "cpu",
        Memory = "memory",
        Gpu = "gpu",
        GpuMemory = "gpu_memory",
    }
}

impl TransferProtocol {
    /// The protocol a block gets when `transfer.protocol` is absent: GCO's
    /// Mooncake runs on EFA.
    pub const DEFAULT: TransferProtocol = TransferProtocol::Rdma;
}

/// A valid block's `transfer.protocol` as the monitor reads it: as stored,
/// the default when absent.
pub fn transfer_protocol_of(block: &Object) -> &str {
    block
        .get("transfer")
        .and_then(Value::as_object)
        .and_then(|t| t.get("protocol"))
        .and_then(Value::as_str)
        .unwrap_or(TransferProtocol::DEFAULT.as_str())
}

/// The monitor's `_needs_shared_master`: a store mode, or RDMA transfer
/// (whose handshake goes through the master's metadata server).
pub fn needs_shared_master(mode: Mode, block: &Object) -> bool {
    mode.has_store() || transfer_protocol_of(block) == TransferProtocol::Rdma.as_str()
}

impl MetricKind {
    /// The metric a role autoscales on when its block names none, with its
    /// target: CPU at 70%.
    pub const DEFAULT_TARGET: (MetricKind, i64) = (MetricKind::Cpu, 70);

    /// A GPU metric makes the autoscaler a KEDA ScaledObject.
    pub fn is_gpu(self) -> bool {
        matches!(self, MetricKind::Gpu | MetricKind::GpuMemory)
    }

    /// The ContainerInsights metric a GPU trigger reads.
    pub fn cloudwatch_metric(self) -> Option<&'static str> {
        match self {
            MetricKind::Gpu => Some("pod_gpu_utilization"),
            MetricKind::GpuMemory => Some("pod_gpu_memory_utilization"),
            _ => None,
        }
    }
}

impl Role {
    fn topology_path(self) -> &'static str {
        match self {
            Role::Prefill => "mooncake.topology.prefill",
            Role::Decode => "mooncake.topology.decode",
        }
    }

    fn autoscaling_path(self) -> &'static str {
        match self {
            Role::Prefill => "mooncake.autoscaling.prefill",
            Role::Decode => "mooncake.autoscaling.decode",
        }
    }

    fn bound_path(self, max: bool) -> &'static str {
        match (self, max) {
            (Role::Prefill, false) => "mooncake.autoscaling.prefill.min_replicas",
            (Role::Prefill, true) => "mooncake.autoscaling.prefill.max_replicas",
            (Role::Decode, false) => "mooncake.autoscaling.decode.min_replicas",
            (Role::Decode, true) => "mooncake.autoscaling.decode.max_replicas",
        }
    }
}

/// The reference's verdict on a block: its first error, with the path of the
/// field at fault. The message is the reference's, byte for byte.
pub fn validate_mooncake(block: &Value) -> Result<(), Diagnostic> {
    let mut sink = FirstError::default();
    let _ = rules::check(block, &mut sink);
    match sink.0 {
        None => Ok(()),
        Some((path, message)) => Err(Diagnostic::error(path, message)),
    }
}

/// Every problem of a block: all errors (the first is [`validate_mooncake`]'s)
/// then the warnings.
pub fn check_mooncake(block: &Value) -> Report {
    let mut sink = AllErrors::default();
    let _ = rules::check(block, &mut sink);
    let mut report = Report::default();
    for (path, message) in sink.0 {
        report.push(Diagnostic::error(path, message));
    }
    lint::lint(block, &mut report);
    report
}
