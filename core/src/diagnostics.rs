//! Problems found in a spec, each with the place it is at.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Severity {
    /// The spec is refused.
    Error,
    /// Accepted, but probably not what the author meant.
    Warning,
}

/// One problem: where it is (a dotted field path such as
/// `mooncake.autoscaling.decode.max_replicas`, with `[i]` for list items),
/// how bad it is, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Diagnostic {
    pub path: String,
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn error(path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub fn warning(path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Whether the message is about a member's key rather than its value
    /// (an unknown member), so an editor marks the key.
    pub fn names_key(&self) -> bool {
        self.message.starts_with("unknown key ")
            || self.message.starts_with("unknown spec key ")
            || self.message.starts_with("unknown deploy field ")
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Every diagnostic of a check, errors first in the order the reference
/// checks them, then warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    pub fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    pub fn extend(&mut self, other: Report) {
        self.diagnostics.extend(other.diagnostics);
    }

    pub fn is_ok(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// The first error: the message a fail-fast check gives.
    pub fn first_error(&self) -> Option<&Diagnostic> {
        self.errors().next()
    }

    /// Errors first, then warnings, each in their order (a stable partition:
    /// no sort, which would cost the wasm build its merge-sort code).
    pub fn sort(&mut self) {
        let (mut errors, warnings): (Vec<_>, Vec<_>) = std::mem::take(&mut self.diagnostics)
            .into_iter()
            .partition(Diagnostic::is_error);
        errors.extend(warnings);
        self.diagnostics = errors;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_puts_errors_first_keeping_order() {
        let mut report = Report::default();
        for d in [
            Diagnostic::warning("w1", "a"),
            Diagnostic::error("e1", "b"),
            Diagnostic::warning("w2", "c"),
            Diagnostic::error("e2", "d"),
            Diagnostic::error("e3", "e"),
        ] {
            report.push(d);
        }
        report.sort();
        let paths: Vec<&str> = report.diagnostics.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["e1", "e2", "e3", "w1", "w2"]);
    }
}
