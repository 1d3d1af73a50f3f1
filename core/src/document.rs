//! Checks a JSON document of any of the kinds users hand in.

use crate::diagnostics::{Diagnostic, Report};
use crate::json;

/// Parses and checks a document: every diagnostic, errors first.
pub fn check_document_text(text: &str) -> Report {
    let mut report = Report::default();
    match json::parse(text) {
        Err(e) => report.push(Diagnostic::error("", format!("invalid JSON: {e}"))),
        Ok(v) => report.extend(crate::mooncake::check_mooncake(&v)),
    }
    report
}
