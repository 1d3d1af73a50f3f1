//! The GCO inference endpoint spec: types, defaults, validation and every
//! operation on an endpoint record, as pure functions.
//!
//! This crate knows nothing of HTTP, DynamoDB or the DOM. The `mooncake`
//! block's rules answer exactly as GCO's Python reference does (same
//! accept/reject, same first message byte for byte); see `ARCHITECTURE.md`.

pub mod bytesize;
pub mod commands;
pub mod deploy;
pub mod ecr;
pub mod diagnostics;
pub mod diff;
pub mod document;
pub mod json;
pub mod limits;
pub mod mooncake;
pub mod names;
pub mod ops;
pub mod plan;
pub mod pyrepr;
#[cfg(feature = "cli")]
pub mod cli;
pub mod protocol;
pub mod record;
pub mod spec;
pub mod time;
#[cfg(feature = "serde")]
pub mod types;
mod suggest;
#[cfg(feature = "wasm")] mod wasm;

pub use bytesize::{author_byte_size, format_byte_size, parse_byte_size, ByteSizeArg, ByteSizeError, HumanSizeError};
pub use diagnostics::{Diagnostic, Report, Severity};
pub use json::{JsonError, Value};
pub use mooncake::{check_mooncake, validate_mooncake, validate_mooncake_json, BuildArgs, BuildError, Mode, Role};
pub use deploy::{plan_deploy, new_record, DeployCheck, DeployContext, Deployment};
pub use ops::{apply, Change, OpError, OpErrorKind};
pub use plan::{plan, plan_deployment, Plan, PlanError};
pub use commands::{change_commands, deploy_commands, record_commands, Commands};
pub use record::{DesiredState, Record};
pub use spec::check_spec;
