//! [`Value`] to text, as `json.dumps(value)` prints it (ASCII only, `", "`
//! and `": "` separators, `NaN`/`Infinity` for non-finite floats).
//!
//! Output is ASCII by construction, so it is written as bytes and checked
//! once at the end rather than string by string.

use std::io::Write;

use super::float_repr;
use super::{Int, PyStr, Value};

/// Room the output starts with: a whole spec or record (about 1 KiB)
/// without growing, which would copy it twice on the way.
const OUTPUT_CAPACITY: usize = 1024;

/// `json.dumps(v)`.
pub(crate) fn dumps(v: &Value) -> String {
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    dumps_into(v, &mut out);
    ascii(out)
}

/// `json.dumps(v, indent=2)`.
pub(crate) fn pretty(v: &Value) -> String {
    let mut out = Vec::with_capacity(OUTPUT_CAPACITY);
    pretty_into(v, 0, &mut out);
    ascii(out)
}

fn ascii(out: Vec<u8>) -> String {
    // No `expect`: it would format the error with `Debug`, code the wasm
    // validator would carry for a case that cannot happen.
    match String::from_utf8(out) {
        Ok(text) => text,
        Err(_) => unreachable!("JSON output is ASCII"),
    }
}

fn dumps_into(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(i) => int_into(i, out),
        Value::Float(f) => out.extend_from_slice(json_float(*f).as_bytes()),
        Value::Str(s) => string_into(s, out),
        Value::List(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                dumps_into(item, out);
            }
            out.push(b']');
        }
        Value::Object(obj) => {
            out.push(b'{');
            for (i, (k, v)) in obj.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                key_into(k, out);
                out.extend_from_slice(b": ");
                dumps_into(v, out);
            }
            out.push(b'}');
        }
    }
}

fn pretty_into(v: &Value, indent: usize, out: &mut Vec<u8>) {
    let pad = |out: &mut Vec<u8>, n: usize| out.resize(out.len() + n, b' ');
    match v {
        Value::List(items) if !items.is_empty() => {
            out.extend_from_slice(b"[\n");
            for (i, item) in items.iter().enumerate() {
                pad(out, indent + 2);
                pretty_into(item, indent + 2, out);
                out.extend_from_slice(if i + 1 < items.len() { b",\n" } else { b"\n" });
            }
            pad(out, indent);
            out.push(b']');
        }
        Value::Object(obj) if !obj.is_empty() => {
            out.extend_from_slice(b"{\n");
            for (i, (k, v)) in obj.iter().enumerate() {
                pad(out, indent + 2);
                key_into(k, out);
                out.extend_from_slice(b": ");
                pretty_into(v, indent + 2, out);
                out.extend_from_slice(if i + 1 < obj.len() { b",\n" } else { b"\n" });
            }
            pad(out, indent);
            out.push(b'}');
        }
        other => dumps_into(other, out),
    }
}

fn int_into(i: &Int, out: &mut Vec<u8>) {
    match i {
        Int::Small(v) => {
            // Digits from the right, without the formatting machinery.
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut n = v.unsigned_abs();
            loop {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            if *v < 0 {
                out.push(b'-');
            }
            out.extend_from_slice(&digits[at..]);
        }
        Int::Big(text) => out.extend_from_slice(text.as_bytes()),
    }
}

fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        float_repr(f)
    }
}

/// Keys are strings in JSON; `json.dumps` converts the other hashable ones.
fn key_into(k: &Value, out: &mut Vec<u8>) {
    match k {
        Value::Str(s) => string_into(s, out),
        Value::Int(i) => string_into(&PyStr::from(i.to_string()), out),
        Value::Float(f) => string_into(&PyStr::from(json_float(*f)), out),
        Value::Bool(b) => out.extend_from_slice(if *b { b"\"true\"" } else { b"\"false\"" }),
        Value::Null => out.extend_from_slice(b"\"null\""),
        // Unhashable keys cannot exist in a Python dict; builders refuse them.
        Value::List(_) | Value::Object(_) => string_into(&PyStr::from(k.repr()), out),
    }
}

/// A JSON string with every code point outside printable ASCII escaped.
fn string_into(s: &PyStr, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    let run = plain_run(bytes);
    // Most strings need no escape: one copy between the quotes.
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(&bytes[..run]);
    if run < bytes.len() {
        escaped_tail_into(bytes, run, out);
    }
    out.push(b'"');
}

/// The rest of [`string_into`] from the first byte to escape at `at`.
#[inline(never)]
fn escaped_tail_into(bytes: &[u8], mut at: usize, out: &mut Vec<u8>) {
    while at < bytes.len() {
        if let Some(cp) = PyStr::code_points_of(&bytes[at..]).next() {
            escape_into(cp, out);
        }
        at += wtf8_len(bytes[at]);
        let run = at + plain_run(&bytes[at..]);
        out.extend_from_slice(&bytes[at..run]);
        at = run;
    }
}

/// The length of the leading run of bytes `json.dumps` copies unchanged:
/// printable ASCII other than `"` and `\\`.
#[inline(always)]
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let (chunks, _) = bytes.as_chunks::<8>();
    let mut at = 0;
    for chunk in chunks {
        let w = u64::from_ne_bytes(*chunk);
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        let high_or_del = (((w & !HIGH) + ONES) | w) & HIGH;
        let special = control
            | high_or_del
            | has_zero(w ^ (ONES * u64::from(b'"')))
            | has_zero(w ^ (ONES * u64::from(b'\\')));
        if special != 0 {
            break;
        }
        at += 8;
    }
    while at < bytes.len() && PLAIN[usize::from(bytes[at])] {
        at += 1;
    }
    at
}

/// Which bytes `json.dumps` copies unchanged, by value.
static PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7F {
        table[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    table
};

/// The length of the WTF-8 sequence a lead byte starts.
fn wtf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

fn escape_into(cp: u32, out: &mut Vec<u8>) {
    let short: &[u8] = match cp {
        0x22 => b"\\\"",
        0x5C => b"\\\\",
        0x0A => b"\\n",
        0x0D => b"\\r",
        0x09 => b"\\t",
        0x08 => b"\\b",
        0x0C => b"\\f",
        0x10000.. => {
            let v = cp - 0x10000;
            let _ = write!(
                out,
                "\\u{:04x}\\u{:04x}",
                0xD800 + (v >> 10),
                0xDC00 + (v & 0x3FF)
            );
            return;
        }
        _ => {
            let _ = write!(out, "\\u{cp:04x}");
            return;
        }
    };
    out.extend_from_slice(short);
}

#[cfg(test)]
mod tests {
    use crate::json::parse;

    #[test]
    fn pretty_prints_and_parses_back() {
        let v = parse(r#"{"a": [1, {"b": []}], "c": {}}"#).unwrap();
        let text = v.to_json_pretty();
        assert_eq!(
            text,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {}\n}"
        );
        assert_eq!(parse(&text).unwrap(), v);
    }

    #[test]
    fn plain_run_stops_at_the_first_byte_to_escape() {
        let plain = |b: u8| (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\';
        for len in 0..=17 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    // A second special byte after the first, where a borrow
                    // of the word test could otherwise mislead.
                    let mut text = vec![b'a'; len];
                    text[at] = byte;
                    if at + 1 < len {
                        text[at + 1] = 0x00;
                    }
                    let expected = text.iter().position(|&b| !plain(b)).unwrap_or(len);
                    assert_eq!(
                        super::plain_run(&text),
                        expected,
                        "{byte:#x} at {at} of {len}"
                    );
                }
            }
            assert_eq!(super::plain_run(&vec![b'~'; len]), len);
        }
    }

    #[test]
    fn escapes_every_byte_class_at_every_offset() {
        // Each special character at each position of a 17-byte string, so
        // the eight-byte scan and the byte loop are both exercised.
        for special in ["\"", "\\", "\n", "\u{1f}", "\u{7f}", "é", "😀"] {
            for at in 0..17 {
                let mut text = "a".repeat(17);
                text.replace_range(at..at + 1, special);
                let expected = {
                    let mut e = String::from("\"");
                    for c in text.chars() {
                        match c {
                            '"' => e.push_str("\\\""),
                            '\\' => e.push_str("\\\\"),
                            '\n' => e.push_str("\\n"),
                            ' '..='~' => e.push(c),
                            c => {
                                for unit in c.encode_utf16(&mut [0; 2]) {
                                    e.push_str(&format!("\\u{unit:04x}"));
                                }
                            }
                        }
                    }
                    e.push('"');
                    e
                };
                assert_eq!(
                    crate::json::Value::str(&text).to_json(),
                    expected,
                    "{special:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn dumps_as_python() {
        let v = parse(
            r#"{"a": [1, 2.0, 1e400, NaN, null, true], "é\ud800": "x\u007f\"\\\n", "😀": {}}"#,
        )
        .unwrap();
        assert_eq!(
            v.to_json(),
            r#"{"a": [1, 2.0, Infinity, NaN, null, true], "\u00e9\ud800": "x\u007f\"\\\n", "\ud83d\ude00": {}}"#
        );
    }
}
