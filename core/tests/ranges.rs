//! Every diagnostic's place in the text: the property that the text at a
//! range is the value (or key) its path names, over generated documents
//! written every way the validator accepts, and the documents that cannot
//! be checked.

use gco_spec::Frameworks;
use gco_spec::diagnostics::{Diagnostic, Report};
use gco_spec::document::{Located, check_document_source, locate};
use gco_spec::json::{self, Value};
use gco_spec::text_range::TextRange;
use proptest::prelude::*;

/// The number of generated documents (reported in the closing note).
const CASES: u32 = 2_000;

/// A document as generated, before it is written out.
#[derive(Debug, Clone)]
enum Gen {
    Null,
    Bool(bool),
    Int(i64),
    /// Written as is: `1.5`, `-2e3`, `0.0`.
    Float(&'static str),
    Str(String),
    List(Vec<Gen>),
    /// Keys built from a few pieces, so duplicates come up.
    Object(Vec<(String, Gen)>),
}

/// Text where UTF-8 and UTF-16 counts differ, and what must be escaped.
const PIECES: [&str; 10] = [
    "a", "mooncake", "😀", "中文", "é", "\"", "\\", "\t", "/", " ",
];

fn text(min: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&PIECES[..]), min..4).prop_map(|p| p.concat())
}

fn document() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        Just(Gen::Null),
        any::<bool>().prop_map(Gen::Bool),
        any::<i64>().prop_map(Gen::Int),
        prop::sample::select(&["1.5", "-2e3", "0.0", "1E+2"][..]).prop_map(Gen::Float),
        text(0).prop_map(Gen::Str),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Gen::List),
            prop::collection::vec((text(1), inner), 0..5).prop_map(Gen::Object),
        ]
    })
}

/// How a document is written out.
#[derive(Debug, Clone)]
struct Style {
    /// `None`: minified.
    indent: Option<&'static str>,
    newline: &'static str,
    bom: bool,
    /// Per character of a string, whether to write it as `\uXXXX` (a seed).
    escape_seed: u64,
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop::option::of(prop::sample::select(&["  ", "\t", "    "][..])),
        prop::sample::select(&["\n", "\r\n"][..]),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(indent, newline, bom, escape_seed)| Style {
            indent,
            newline,
            bom,
            escape_seed,
        })
}

fn write_str(s: &str, style: &Style, seed: &mut u64, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let escape = (*seed >> 33).is_multiple_of(3);
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '/' if escape => out.push_str("\\/"),
            c if escape || (c as u32) < 0x20 => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    let _ = style;
    out.push('"');
}

fn write(g: &Gen, style: &Style, depth: usize, seed: &mut u64, out: &mut String) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(indent) = style.indent {
            out.push_str(style.newline);
            out.push_str(&indent.repeat(depth));
        }
    };
    match g {
        Gen::Null => out.push_str("null"),
        Gen::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Gen::Int(i) => out.push_str(&i.to_string()),
        Gen::Float(f) => out.push_str(f),
        Gen::Str(s) => write_str(s, style, seed, out),
        Gen::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write(item, style, depth + 1, seed, out);
            }
            if !items.is_empty() {
                newline(out, depth);
            }
            out.push(']');
        }
        Gen::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_str(key, style, seed, out);
                out.push_str(if style.indent.is_some() { ": " } else { ":" });
                write(value, style, depth + 1, seed, out);
            }
            if !members.is_empty() {
                newline(out, depth);
            }
            out.push('}');
        }
    }
}

/// Every path of a value (the document's own, `""`, first) with the value
/// and, for a member, its key.
fn paths(
    v: &Value,
    path: String,
    key: Option<String>,
    out: &mut Vec<(String, Value, Option<String>)>,
) {
    out.push((path.clone(), v.clone(), key));
    match v {
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                paths(item, format!("{path}[{i}]"), None, out);
            }
        }
        Value::Object(o) => {
            for (k, item) in o.str_entries() {
                let k = k.as_str().unwrap().to_owned();
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                paths(item, p, Some(k), out);
            }
        }
        _ => {}
    }
}

/// The byte offset a line and UTF-16 column name, counted afresh.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        let rest = &text[start..];
        let end = rest.find(['\n', '\r']).unwrap();
        start += end
            + if rest[end..].starts_with("\r\n") {
                2
            } else {
                1
            };
    }
    if start == 0 && text.starts_with('\u{feff}') {
        start = 3;
    }
    let mut units = 0;
    let mut at = start;
    for c in text[start..].chars() {
        if units == column - 1 {
            break;
        }
        units += c.len_utf16();
        at += c.len_utf8();
    }
    assert_eq!(
        units,
        column - 1,
        "column {column} of line {line} is inside a character"
    );
    at
}

fn slice(text: &str, range: &TextRange) -> String {
    for p in [range.start, range.end] {
        assert_eq!(offset_of(text, p.line, p.column), p.offset, "{p:?}");
    }
    text[range.start.offset..range.end.offset].to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn the_text_at_every_range_is_what_the_path_names(g in document(), style in style()) {
        let mut text = String::new();
        if style.bom {
            text.push('\u{feff}');
        }
        let mut seed = style.escape_seed;
        write(&g, &style, 0, &mut seed, &mut text);
        let document = json::parse(text.trim_start_matches('\u{feff}')).unwrap();
        let mut all = Vec::new();
        paths(&document, String::new(), None, &mut all);
        // Keys holding `.` or `[`, and an empty key at the top (`""` is the
        // document), make paths ambiguous: generated keys are none of these. One diagnostic on each value, and one on each key.
        let mut report = Report::default();
        for (path, _, key) in &all {
            report.push(Diagnostic::error(path.clone(), "value"));
            if key.is_some() {
                report.push(Diagnostic::warning(path.clone(), "unknown key here"));
            }
        }
        let located = locate(&text, report);
        let mut keys = all.iter().filter(|(_, _, k)| k.is_some());
        for (i, Located { diagnostic, range }) in located.iter().enumerate() {
            let at = slice(&text, range.as_ref().unwrap());
            if i < all.len() {
                let (path, value, _) = &all[i];
                prop_assert_eq!(&diagnostic.path, path);
                prop_assert_eq!(&json::parse(&at).unwrap(), value, "{} at {:?}", path, at);
            } else {
                let (path, _, key) = keys.next().unwrap();
                prop_assert_eq!(&diagnostic.path, path);
                let written = json::parse(&at).unwrap();
                prop_assert_eq!(written.as_str(), key.as_deref());
            }
        }
    }
}

fn check(source: &[u8]) -> Vec<Located> {
    check_document_source(source, &Frameworks::CURRENT)
}

/// The only diagnostic of `source`: its message and the text at its range.
fn only(source: &str) -> (String, String) {
    let found = check(source.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    let range = found[0].range.unwrap();
    (found[0].diagnostic.message.clone(), slice(source, &range))
}

#[test]
fn places_the_value_the_missing_members_object_and_the_unknown_key() {
    let text = "{\r\n\t\"mode\": \"disaggregated\",\r\n\t\"topology\": {\"prefill\": 0, \"decode\": 1},\r\n\t\"colour\": \"中\"\r\n}";
    let found = check(text.as_bytes());
    let at: Vec<(&str, String)> = found
        .iter()
        .map(|l| {
            (
                l.diagnostic.path.as_str(),
                slice(text, l.range.as_ref().unwrap()),
            )
        })
        .collect();
    assert_eq!(found[0].diagnostic.path, "mooncake.topology.prefill");
    assert_eq!(at[0].1, "0");
    let start = found[0].range.unwrap().start;
    assert_eq!((start.line, start.column), (3, 26));
    let unknown = at.iter().find(|(_, t)| t == "\"colour\"");
    assert!(unknown.is_some(), "{at:?}");

    let missing = "{\"mode\": \"disaggregated\", \"topology\": {\"decode\": 1}}";
    let found = check(missing.as_bytes());
    assert_eq!(found[0].diagnostic.path, "mooncake.topology.prefill");
    assert_eq!(slice(missing, &found[0].range.unwrap()), "{\"decode\": 1}");
}

#[test]
fn text_that_cannot_be_checked_is_one_placed_error() {
    let (message, at) = only("{\n  \"mode\": }");
    assert_eq!(
        message,
        "invalid JSON: Expecting value: line 2 column 11 (char 12)"
    );
    assert_eq!(at, "}");
    assert_eq!(
        only(" \n"),
        (
            "invalid JSON: the document is empty".to_owned(),
            String::new()
        )
    );
    assert_eq!(only("").0, "invalid JSON: the document is empty");
    let deep = "[".repeat(1001);
    let (message, at) = only(&deep);
    assert!(
        message.starts_with("invalid JSON: Nesting too deep: line 1 column 1001"),
        "{message}"
    );
    assert_eq!(at, "[");
    let bytes = b"{\"mode\": \"\xff\"}";
    let found = check(bytes);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].diagnostic.message,
        "not UTF-8 text: byte 0xff at line 1 column 11 (byte 10) is no UTF-8 character"
    );
    let range = found[0].range.unwrap();
    assert_eq!((range.start.offset, range.end.offset), (10, 11));
    assert_eq!((range.start.column, range.end.column), (11, 12));
}

#[test]
fn a_byte_order_mark_is_read_past_and_counted_in_offsets_only() {
    let text = "\u{feff}{\"mode\": \"nope\"}";
    let found = check(text.as_bytes());
    let range = found[0].range.unwrap();
    assert_eq!(&text[range.start.offset..range.end.offset], "\"nope\"");
    assert_eq!(range.start.column, 10);
}

/// A deploy request gives the block by its fields: a fault in the block
/// deploy builds is placed at the field it was built from.
#[test]
fn a_deploy_requests_block_faults_are_placed_at_its_fields() {
    let text = r#"{
  "endpoint_name": "pd",
  "image": "vllm/vllm-openai:v0.11.0",
  "mooncake_mode": "disaggregated",
  "prefill_replicas": 0,
  "decode_replicas": "x",
  "mooncake_transfer": {"protocol": "carrier-pigeon"}
}"#;
    let found = check(text.as_bytes());
    let at: Vec<(String, String)> = found
        .iter()
        .filter(|l| l.diagnostic.path.starts_with("mooncake."))
        .map(|l| {
            (
                l.diagnostic.path.clone(),
                slice(text, l.range.as_ref().unwrap()),
            )
        })
        .collect();
    assert!(
        at.contains(&("mooncake.topology.prefill".into(), "0".into())),
        "{at:?}"
    );
    assert!(
        at.iter()
            .all(|(_, t)| !t.starts_with('{') || t.contains("carrier")),
        "no fault placed at the whole request: {at:?}"
    );
}
