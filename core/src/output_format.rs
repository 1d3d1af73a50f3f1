//! The formats `gco-spec validate --output-format` writes, Ruff's names for
//! them: `text` for people, and what CI systems read (GitHub's workflow
//! annotations, GitLab's Code Quality report, SARIF 2.1.0, JUnit XML), and
//! `json`, the API's diagnostics with their ranges.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::diagnostics::Severity;
use crate::document::Located;
use crate::message_kind::{KINDS, MessageKind};
use crate::text_range::TextRange;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// `FILE:LINE:COL: path: message`, one line each.
    Text,
    /// Per file: `ok`, `errors` and `warnings` as `POST /api/validate`
    /// gives them, each with its `range` and `code`.
    Json,
    /// GitHub Actions workflow commands (`::error file=…::message`).
    Github,
    /// GitLab's Code Quality report.
    Gitlab,
    /// SARIF 2.1.0, one rule per message kind.
    Sarif,
    /// JUnit XML, one test case per file.
    Junit,
}

/// A file's diagnostics, each with its kind.
pub struct Checked {
    pub file: String,
    pub diagnostics: Vec<(Located, &'static MessageKind)>,
}

impl Checked {
    /// Kinds told from the messages.
    pub fn new(file: String, diagnostics: Vec<Located>) -> Checked {
        let diagnostics = diagnostics
            .into_iter()
            .map(|l| {
                let kind = MessageKind::of(&l.diagnostic);
                (l, kind)
            })
            .collect();
        Checked { file, diagnostics }
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|(l, _)| l.diagnostic.severity == severity)
            .count()
    }

    /// Whether the file fails the run.
    pub fn fails(&self, warnings_as_errors: bool) -> bool {
        self.count(Severity::Error) > 0 || (warnings_as_errors && self.count(Severity::Warning) > 0)
    }
}

/// The whole output for `files`.
pub fn render(format: OutputFormat, files: &[Checked], warnings_as_errors: bool) -> String {
    match format {
        OutputFormat::Text => text(files),
        OutputFormat::Json => pretty(&json_report(files)),
        OutputFormat::Github => github(files),
        OutputFormat::Gitlab => pretty(&gitlab(files)),
        OutputFormat::Sarif => pretty(&sarif(files)),
        OutputFormat::Junit => junit(files, warnings_as_errors),
    }
}

fn pretty(v: &Json) -> String {
    // serde_json writes any `Json` value.
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn each(files: &[Checked]) -> impl Iterator<Item = (&str, &Located, &'static MessageKind)> {
    files.iter().flat_map(|f| {
        f.diagnostics
            .iter()
            .map(move |(l, kind)| (f.file.as_str(), l, *kind))
    })
}

fn text(files: &[Checked]) -> String {
    let mut out = String::new();
    for (file, l, _) in each(files) {
        let _ = match l.range {
            Some(r) => writeln!(
                out,
                "{file}:{}:{}: {}",
                r.start.line, r.start.column, l.diagnostic
            ),
            None => writeln!(out, "{file}: {}", l.diagnostic),
        };
    }
    out
}

fn range_json(r: &Option<TextRange>) -> Json {
    match r {
        Some(r) => json!({
            "start": {"line": r.start.line, "column": r.start.column, "offset": r.start.offset},
            "end": {"line": r.end.line, "column": r.end.column, "offset": r.end.offset},
        }),
        None => Json::Null,
    }
}

fn json_report(files: &[Checked]) -> Json {
    let list = |f: &Checked, severity: Severity| -> Vec<Json> {
        f.diagnostics
            .iter()
            .filter(|(l, _)| l.diagnostic.severity == severity)
            .map(|(l, kind)| {
                json!({
                    "path": l.diagnostic.path,
                    "message": l.diagnostic.message,
                    "range": range_json(&l.range),
                    "code": kind.code,
                })
            })
            .collect()
    };
    Json::Array(
        files
            .iter()
            .map(|f| {
                json!({
                    "file": f.file,
                    "ok": f.count(Severity::Error) == 0,
                    "errors": list(f, Severity::Error),
                    "warnings": list(f, Severity::Warning),
                })
            })
            .collect(),
    )
}

/// The message with its field path, as `text` shows it.
fn message(l: &Located) -> String {
    match l.diagnostic.path.as_str() {
        "" => l.diagnostic.message.clone(),
        path => format!("{path}: {}", l.diagnostic.message),
    }
}

/// GitHub's escaping of a workflow command's message (and, with `property`,
/// of a property's value).
fn github_escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

fn github(files: &[Checked]) -> String {
    let mut out = String::new();
    for (file, l, kind) in each(files) {
        let command = match l.diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = format!("file={}", github_escape(file, true));
        if let Some(r) = l.range {
            let _ = write!(
                props,
                ",line={},col={},endLine={},endColumn={}",
                r.start.line, r.start.column, r.end.line, r.end.column
            );
        }
        let title = format!("{} {}", kind.code, kind.name);
        let _ = writeln!(
            out,
            "::{command} {props},title={}::{}",
            github_escape(&title, true),
            github_escape(&message(l), false)
        );
    }
    out
}

/// FNV-1a, 64 bits: a stable fingerprint without a hashing dependency.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(b"\0") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn gitlab(files: &[Checked]) -> Json {
    let mut seen = std::collections::HashSet::new();
    let mut issues = Vec::new();
    for (file, l, kind) in each(files) {
        // The same message twice in a file still needs two fingerprints.
        let mut n = 0u32;
        let fingerprint = loop {
            let count = n.to_string();
            let fp = fnv1a(&[
                file,
                kind.code,
                &l.diagnostic.path,
                &l.diagnostic.message,
                &count,
            ]);
            if seen.insert(fp) {
                break fp;
            }
            n += 1;
        };
        let location = match l.range {
            Some(r) => json!({
                "path": file,
                "positions": {
                    "begin": {"line": r.start.line, "column": r.start.column},
                    "end": {"line": r.end.line, "column": r.end.column},
                },
            }),
            None => json!({"path": file, "lines": {"begin": 1}}),
        };
        issues.push(json!({
            "type": "issue",
            "check_name": format!("{} {}", kind.code, kind.name),
            "description": message(l),
            "categories": ["Bug Risk"],
            "severity": match l.diagnostic.severity {
                Severity::Error => "major",
                Severity::Warning => "minor",
            },
            "fingerprint": format!("{fingerprint:016x}"),
            "location": location,
        }));
    }
    Json::Array(issues)
}

/// A file name as a URI reference (RFC 3986): bytes outside the unreserved
/// set and `/` percent-encoded.
fn uri_reference(file: &str) -> String {
    let mut out = String::new();
    for &b in file.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn sarif(files: &[Checked]) -> Json {
    let rules: Vec<Json> = KINDS
        .iter()
        .map(|k| {
            json!({
                "id": k.code,
                "name": k.name,
                "shortDescription": {"text": k.summary},
                "fullDescription": {"text": format!("{} GCO's source: {}.", k.summary, k.source)},
                "helpUri": k.source_url,
                "help": {"text": format!("GCO's source: {} ({}).", k.source, k.source_url)},
                "defaultConfiguration": {"level": if k.at_key { "warning" } else { "error" }},
            })
        })
        .collect();
    let results: Vec<Json> = each(files)
        .map(|(file, l, kind)| {
            let mut physical = json!({"artifactLocation": {"uri": uri_reference(file)}});
            if let Some(r) = l.range {
                physical["region"] = json!({
                    "startLine": r.start.line,
                    "startColumn": r.start.column,
                    "endLine": r.end.line,
                    "endColumn": r.end.column,
                    "byteOffset": r.start.offset,
                    "byteLength": r.end.offset - r.start.offset,
                });
            }
            let mut location = json!({"physicalLocation": physical});
            if !l.diagnostic.path.is_empty() {
                location["logicalLocations"] =
                    json!([{"fullyQualifiedName": l.diagnostic.path, "kind": "member"}]);
            }
            json!({
                "ruleId": kind.code,
                "ruleIndex": kind.index(),
                "level": level(l.diagnostic.severity),
                "message": {"text": message(l)},
                "locations": [location],
            })
        })
        .collect();
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gco-spec",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/aws-solutions-library-samples/global-capacity-orchestrator-on-aws",
                "rules": rules,
            }},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    })
}

/// Text as XML character data or an attribute value; characters XML 1.0
/// cannot hold become U+FFFD.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn junit(files: &[Checked], warnings_as_errors: bool) -> String {
    let failures = files.iter().filter(|f| f.fails(warnings_as_errors)).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\"",
        files.len()
    );
    let _ = writeln!(out, "<testsuites name=\"gco-spec\" {counts}>");
    let _ = writeln!(out, "  <testsuite name=\"gco-spec validate\" {counts}>");
    for f in files {
        let name = xml(&f.file);
        let _ = write!(
            out,
            "    <testcase name=\"{name}\" classname=\"gco-spec.validate\" file=\"{name}\""
        );
        if f.diagnostics.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        let lines = text(std::slice::from_ref(f));
        let summary = format!(
            "{}, {}",
            plural(f.count(Severity::Error), "error"),
            plural(f.count(Severity::Warning), "warning")
        );
        if f.fails(warnings_as_errors) {
            let _ = writeln!(
                out,
                "      <failure message=\"{summary}\" type=\"gco-spec\">{}</failure>",
                xml(&lines)
            );
        } else {
            let _ = writeln!(out, "      <system-out>{}</system-out>", xml(&lines));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_for_each_consumer() {
        assert_eq!(github_escape("a%b\r\n:,", false), "a%25b%0D%0A:,");
        assert_eq!(github_escape("a:b,c", true), "a%3Ab%2Cc");
        assert_eq!(
            xml("<a & \"b\" \u{1}>"),
            "&lt;a &amp; &quot;b&quot; \u{FFFD}&gt;"
        );
        assert_eq!(uri_reference("dir/a b%.json"), "dir/a%20b%25.json");
    }
}
