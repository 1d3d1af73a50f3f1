//! Checks a JSON document of any kind users hand in: an endpoint record, a
//! deploy request, a spec, or a bare `mooncake` block.

use crate::deploy::{DeployContext, plan_deploy};
use crate::diagnostics::{Diagnostic, Report};
use crate::framework::Frameworks;
use crate::json::{self, Value};
use crate::mooncake::check_mooncake;
use crate::names::endpoint_name_issues;
use crate::record::Record;
use crate::spec::{check_spec, spec_mode};

/// What a document is, told from its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Record,
    DeployRequest,
    Spec,
    MooncakeBlock,
}

impl DocumentKind {
    pub fn of(v: &Value) -> DocumentKind {
        let Some(o) = v.as_object() else {
            return DocumentKind::MooncakeBlock;
        };
        let has = |k: &str| o.contains_key(k);
        if has("spec") && has("endpoint_name") {
            DocumentKind::Record
        } else if has("endpoint_name")
            || o.str_entries()
                .any(|(k, _)| k.as_bytes().starts_with(b"mooncake_"))
        {
            DocumentKind::DeployRequest
        } else if has("mode") && !has("image") {
            DocumentKind::MooncakeBlock
        } else {
            DocumentKind::Spec
        }
    }
}

/// Every diagnostic of a document, errors first, with the frameworks the
/// team's GCO accepts (a file check knows no deployed regions).
pub fn check_document(v: &Value, frameworks: &Frameworks) -> Report {
    match DocumentKind::of(v) {
        DocumentKind::MooncakeBlock => check_mooncake(v),
        DocumentKind::Spec => check_spec(v, frameworks),
        DocumentKind::DeployRequest => {
            let ctx = DeployContext {
                frameworks: *frameworks,
                ..DeployContext::default()
            };
            plan_deploy(v, &ctx).report
        }
        DocumentKind::Record => check_record(v, frameworks),
    }
}

/// Parses and checks a document.
pub fn check_document_text(text: &str, frameworks: &Frameworks) -> Report {
    match json::parse(text) {
        Ok(v) => check_document(&v, frameworks),
        Err(e) => {
            let mut report = Report::default();
            report.push(Diagnostic::error("", format!("invalid JSON: {e}")));
            report
        }
    }
}

fn check_record(v: &Value, frameworks: &Frameworks) -> Report {
    let record = match Record::from_value(v) {
        Ok(r) => r,
        Err(e) => {
            let mut report = Report::default();
            report.push(Diagnostic::error(
                e.field,
                format!("{} {}", e.field, e.message),
            ));
            return report;
        }
    };
    let mut report = Report::default();
    for issue in endpoint_name_issues(&record.endpoint_name, spec_mode(&record.spec)) {
        let d = if issue.is_error() {
            Diagnostic::error
        } else {
            Diagnostic::warning
        };
        report.push(d("endpoint_name", issue.message(&record.endpoint_name)));
    }
    for (i, region) in record.target_regions.iter().enumerate() {
        if !crate::names::is_region(region) {
            report.push(Diagnostic::error(
                format!("target_regions[{i}]"),
                format!(
                    "target_regions[{i}] must be an AWS region such as 'us-east-1', got {}",
                    crate::pyrepr::repr_text(region)
                ),
            ));
        }
    }
    if let Some(block) = record.spec.get("mooncake") {
        crate::scope::check_scope(block, &record.target_regions, "spec.", &mut report);
    }
    for d in check_spec(&Value::Object(record.spec), frameworks).diagnostics {
        report.push(Diagnostic {
            path: format!("spec.{}", d.path),
            ..d
        });
    }
    report.sort();
    report
}

/// The record a document stands for: a stored record as it is, or the one a
/// deploy request would create. Errors when it is neither, or invalid.
pub fn record_of_document(v: &Value, ctx: &DeployContext<'_>) -> Result<Record, Report> {
    match DocumentKind::of(v) {
        DocumentKind::Record => {
            let report = check_record(v, &ctx.frameworks);
            match Record::from_value(v) {
                Ok(record) if report.is_ok() => Ok(record),
                _ => Err(report),
            }
        }
        DocumentKind::DeployRequest => {
            let check = plan_deploy(v, ctx);
            check
                .deployment
                .map(crate::plan::preview_record)
                .ok_or(check.report)
        }
        DocumentKind::Spec | DocumentKind::MooncakeBlock => {
            let mut report = Report::default();
            report.push(Diagnostic::error(
                "",
                "expected a deploy request or an endpoint record",
            ));
            Err(report)
        }
    }
}
