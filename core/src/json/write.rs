//! [`Value`] to text, as `json.dumps(value)` prints it (ASCII only, `", "`
//! and `": "` separators, `NaN`/`Infinity` for non-finite floats).

use std::fmt::Write;

use super::{PyStr, Value};
use crate::pyrepr::float_repr;

pub(crate) fn dumps_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&json_float(*f)),
        Value::Str(s) => string_into(s, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps_into(item, out);
            }
            out.push(']');
        }
        Value::Object(obj) => {
            out.push('{');
            for (i, (k, v)) in obj.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                key_into(k, out);
                out.push_str(": ");
                dumps_into(v, out);
            }
            out.push('}');
        }
    }
}

/// Indented JSON (two spaces), for people to read and edit.
pub(crate) fn pretty_into(v: &Value, indent: usize, out: &mut String) {
    let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
    match v {
        Value::List(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(out, indent + 2);
                pretty_into(item, indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(out, indent);
            out.push(']');
        }
        Value::Object(obj) if !obj.is_empty() => {
            out.push_str("{\n");
            for (i, (k, v)) in obj.iter().enumerate() {
                pad(out, indent + 2);
                key_into(k, out);
                out.push_str(": ");
                pretty_into(v, indent + 2, out);
                out.push_str(if i + 1 < obj.len() { ",\n" } else { "\n" });
            }
            pad(out, indent);
            out.push('}');
        }
        other => dumps_into(other, out),
    }
}

fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else {
        float_repr(f)
    }
}

/// Keys are strings in JSON; `json.dumps` converts the other hashable ones.
fn key_into(k: &Value, out: &mut String) {
    match k {
        Value::Str(s) => string_into(s, out),
        Value::Int(i) => string_into(&PyStr::from(i.to_string()), out),
        Value::Float(f) => string_into(&PyStr::from(json_float(*f)), out),
        Value::Bool(b) => out.push_str(if *b { "\"true\"" } else { "\"false\"" }),
        Value::Null => out.push_str("\"null\""),
        // Unhashable keys cannot exist in a Python dict; builders refuse them.
        Value::List(_) | Value::Object(_) => string_into(&PyStr::from(k.repr()), out),
    }
}

/// A JSON string with every code point outside printable ASCII escaped.
pub fn string_into(s: &PyStr, out: &mut String) {
    out.push('"');
    let bytes = s.as_bytes();
    // Most text is printable ASCII needing no escape: copy it in one go.
    let plain = bytes.iter().position(|&b| !(0x20..0x7F).contains(&b) || b == b'"' || b == b'\\').unwrap_or(bytes.len());
    out.push_str(std::str::from_utf8(&bytes[..plain]).unwrap_or_default());
    if plain == bytes.len() {
        out.push('"');
        return;
    }
    for cp in PyStr::code_points_of(&bytes[plain..]) {
        match cp {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0x20..=0x7E => out.push(cp as u8 as char),
            0x10000.. => {
                let v = cp - 0x10000;
                let _ = write!(out, "\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            }
            _ => {
                let _ = write!(out, "\\u{cp:04x}");
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use crate::json::parse;

    #[test]
    fn pretty_prints_and_parses_back() {
        let v = parse(r#"{"a": [1, {"b": []}], "c": {}}"#).unwrap();
        let text = v.to_json_pretty();
        assert_eq!(text, "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {}\n}");
        assert_eq!(parse(&text).unwrap(), v);
    }

    #[test]
    fn dumps_as_python() {
        let v = parse(r#"{"a": [1, 2.0, 1e400, NaN, null, true], "é\ud800": "x\u007f\"\\\n", "😀": {}}"#).unwrap();
        assert_eq!(
            v.to_json(),
            r#"{"a": [1, 2.0, Infinity, NaN, null, true], "\u00e9\ud800": "x\u007f\"\\\n", "\ud83d\ude00": {}}"#
        );
    }
}
