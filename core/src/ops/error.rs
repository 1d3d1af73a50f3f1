//! Why a change was refused.

use std::fmt;

use crate::diagnostics::Diagnostic;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: OpErrorKind,
    /// The field at fault (a spec path, or the argument's name).
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpErrorKind {
    /// The arguments or the resulting spec are invalid.
    Invalid,
    /// The endpoint's state does not allow the change.
    Conflict,
    /// A condition the caller set on the change (an owner-conditioned
    /// delete's label or lifecycle id) does not hold: nothing is written.
    ConditionFailed,
}

impl OpError {
    pub(super) fn invalid(path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError::new(OpErrorKind::Invalid, path, message)
    }

    pub(super) fn conflict(path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError::new(OpErrorKind::Conflict, path, message)
    }

    pub(super) fn condition_failed(path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError::new(OpErrorKind::ConditionFailed, path, message)
    }

    fn new(kind: OpErrorKind, path: impl Into<String>, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(self.path.clone(), self.message.clone())
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpError {}
