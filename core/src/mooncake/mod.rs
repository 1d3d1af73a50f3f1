//! The optional `mooncake` block: its rules, its warnings and its builder.

mod build;
mod lint;
pub(crate) mod rules;

pub use build::{
    Assembled, BuildArgs, BuildError, ErrorKind, assemble_mooncake_block, author_mooncake_block,
    build_mooncake_block, py_dict,
};

use crate::diagnostics::{Diagnostic, Report};
use crate::json::Value;
use rules::{AllErrors, FirstError};

/// A serving mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Disaggregated,
    Store,
    Both,
}

impl Mode {
    /// Every mode, sorted by name as the reference lists them in messages.
    /// `disaggregated` splits prefill and decode; `store` runs a single
    /// KV-store instance; `both` composes the two.
    pub const ALL: [Mode; 3] = [Mode::Both, Mode::Disaggregated, Mode::Store];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Disaggregated => "disaggregated",
            Mode::Store => "store",
            Mode::Both => "both",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }

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

/// A role of a split topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Prefill,
    Decode,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
        }
    }

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
