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
use crate::text_range::{LineIndex, TextRange};

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

/// A diagnostic and where in the text it is: `None` when the document was
/// not given as text, or the text has no place for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Located {
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub diagnostic: Diagnostic,
    pub range: Option<TextRange>,
}

/// Checks a file's bytes as `gco-spec validate` and editors do: every
/// diagnostic of [`check_document`], errors first, each with its range.
/// Text that cannot be checked (not UTF-8, not JSON, empty, nested too
/// deep) is one error, placed where the text goes wrong.
pub fn check_document_source(source: &[u8], frameworks: &Frameworks) -> Vec<Located> {
    match read_source(source) {
        Ok((text, document)) => locate(text, check_document(&document, frameworks)),
        Err(refusal) => vec![refusal],
    }
}

/// A document's text and value, or the one diagnostic saying why it has
/// none. A leading byte-order mark is allowed (editors write one), and
/// counted in the ranges' byte offsets.
pub fn read_source(source: &[u8]) -> Result<(&str, Value), Located> {
    let text = match std::str::from_utf8(source) {
        Ok(text) => text,
        Err(e) => {
            let valid = &source[..e.valid_up_to()];
            // The valid part is UTF-8 by construction.
            let before = std::str::from_utf8(valid).unwrap_or_default();
            let at = LineIndex::new(before).position(before.len());
            let bad = e.error_len().unwrap_or(source.len() - valid.len());
            let mut end = at;
            end.offset += bad;
            end.column += 1;
            return Err(Located {
                diagnostic: Diagnostic::error(
                    "",
                    format!(
                        "not UTF-8 text: byte 0x{:02x} at line {} column {} (byte {}) is no UTF-8 character",
                        source[valid.len()],
                        at.line,
                        at.column,
                        at.offset
                    ),
                ),
                range: Some(TextRange { start: at, end }),
            });
        }
    };
    read_text(text)
}

/// [`read_source`] for text already known to be UTF-8 (a JS string).
pub fn read_text(text: &str) -> Result<(&str, Value), Located> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = LineIndex::new(text);
    if body.trim_matches([' ', '\t', '\n', '\r']).is_empty() {
        return Err(Located {
            diagnostic: Diagnostic::error("", "invalid JSON: the document is empty"),
            range: Some(lines.range(text.len(), text.len())),
        });
    }
    match json::parse(body) {
        Ok(document) => Ok((text, document)),
        Err(e) => Err(invalid_json(text, body, e)),
    }
}

/// The error for `body` (the end of `text`) that does not parse, placed at
/// the character Python's message names.
pub fn invalid_json(text: &str, body: &str, e: json::JsonError) -> Located {
    let at = body
        .char_indices()
        .nth(e.char_offset)
        .map_or(body.len(), |(i, _)| i);
    Located {
        diagnostic: Diagnostic::error("", format!("invalid JSON: {e}")),
        range: Some(LineIndex::new(text).char_range(text.len() - body.len() + at)),
    }
}

/// Places each diagnostic of a check of `text` (errors first; `text` is
/// what [`read_source`] read, a leading byte-order mark allowed): the value
/// at fault; for a missing member the object lacking it; for an unknown
/// member its key.
pub fn locate(text: &str, mut report: Report) -> Vec<Located> {
    report.sort();
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let shift = text.len() - body.len();
    let lines = LineIndex::new(text);
    // A bare block's checks name its fields `mooncake.…`, as in a spec; a
    // deploy request's too, of the block built from its fields. A bare
    // block is told as `DocumentKind::of` tells it: a `mode`, no `image`.
    let has = |key: &str| json::spans::find(body, key).complete;
    let bare_block = report
        .diagnostics
        .iter()
        .any(|d| d.path.starts_with("mooncake"))
        && !has("mooncake")
        && has("mode")
        && !has("image");
    report
        .diagnostics
        .into_iter()
        .map(|diagnostic| {
            let mut path = diagnostic.path.as_str();
            if bare_block
                && let Some(rest) = path.strip_prefix("mooncake")
                && (rest.is_empty() || rest.starts_with('.'))
            {
                path = rest.strip_prefix('.').unwrap_or(rest);
            }
            let mut found = json::spans::find(body, path);
            if !found.complete
                && let Some(field) = request_field(path)
            {
                // A deploy request gives the block by its fields: the
                // fault is in the field the block was built from.
                let by_field = json::spans::find(body, &field);
                let head = field.split('.').next().unwrap_or_default();
                if by_field.complete || json::spans::find(body, head).complete {
                    found = by_field;
                }
            }
            let span = match found.key {
                Some(key) if diagnostic.names_key() => key,
                _ => found.value,
            };
            let range = Some(lines.range(shift + span.start, shift + span.end));
            Located { diagnostic, range }
        })
        .collect()
}

/// The deploy request's fields a built block's paths come from, as
/// `deploy` builds the block: `mooncake.topology.prefill` from
/// `prefill_replicas`, `mooncake.store.x` from `mooncake_store.x`.
const BLOCK_FROM_FIELDS: [(&str, &str); 7] = [
    ("mooncake.mode", "mooncake_mode"),
    ("mooncake.topology.prefill", "prefill_replicas"),
    ("mooncake.topology.decode", "decode_replicas"),
    ("mooncake.store", "mooncake_store"),
    ("mooncake.transfer", "mooncake_transfer"),
    ("mooncake.proxy", "mooncake_proxy"),
    ("mooncake.autoscaling", "mooncake_autoscaling"),
];

/// The request field block path `path` comes from ([`BLOCK_FROM_FIELDS`]).
fn request_field(path: &str) -> Option<String> {
    BLOCK_FROM_FIELDS.iter().find_map(|(block, field)| {
        let below = path.strip_prefix(block)?;
        (below.is_empty() || below.starts_with('.')).then(|| [field, below].concat())
    })
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
