//! Python's `repr()`, `str()`, `str.strip()` and float formatting, as messages and
//! rendered texts print them.

mod tables;

use crate::json::{PyStr, Value, float_repr};

fn in_table(table: &[(u32, u32)], cp: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `str.isprintable()` for one code point.
pub fn is_printable(cp: u32) -> bool {
    use tables::{
        NON_PRINTABLE_INDEX as INDEX, NON_PRINTABLE_RUNS as RUNS, NON_PRINTABLE_STRIDE as STRIDE,
    };
    // The last indexed run starting at or before `cp` (the first starts at 0),
    // then the runs after it until the one holding `cp`: odd runs are printable.
    let k = INDEX
        .partition_point(|&(start, _)| start <= cp)
        .saturating_sub(1);
    let (mut end, at) = INDEX[k];
    let mut run = k * STRIDE;
    let mut bytes = RUNS[at as usize..].iter();
    loop {
        let mut len = 0;
        let mut shift = 0;
        loop {
            // Past the last run (U+10FFFF): not a code point.
            let Some(&b) = bytes.next() else { return false };
            len |= u32::from(b & 0x7F) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        end += len;
        if cp < end {
            return run % 2 == 1;
        }
        run += 1;
    }
}

/// `str.isspace()` for one code point.
pub fn is_space(cp: u32) -> bool {
    // ASCII first: almost every call.
    if cp < 0x80 {
        return matches!(cp, 0x09..=0x0D | 0x1C..=0x20);
    }
    in_table(tables::WHITESPACE, cp)
}

/// `text.lower()` as far as any test against ASCII text or word characters
/// can tell. Only ASCII letters, two characters that lower-case into ASCII
/// (`İ` to `i̇`, the Kelvin sign `K` to `k`), and whether a character is a
/// word character decide such a test, and lower-casing any other character
/// keeps it non-ASCII and keeps its word-ness (`scope.rs`'s test checks
/// every code point against `str::to_lowercase`). So the others stay as
/// they are: std's full lower-casing would bring about 8 KB of Unicode
/// tables (gzipped) into the validator package for no different answer.
pub fn py_lower(text: &str) -> String {
    let mut lower = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{130}' => lower.push_str("i\u{307}"),
            '\u{212A}' => lower.push('k'),
            c => lower.push(c.to_ascii_lowercase()),
        }
    }
    lower
}

/// `text.strip()`: removes Python's whitespace (wider than Rust's `trim`,
/// e.g. U+001C to U+001F) from both ends.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(|c: char| is_space(c as u32))
}

/// `str(value)`: a string's text (lone surrogates replaced), any other
/// value's repr.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string_lossy(),
        other => other.repr(),
    }
}

/// `repr(value)` appended to `out`.
impl Value {
    /// Python's `repr(value)`.
    pub fn repr(&self) -> String {
        let mut out = String::new();
        repr_into(self, &mut out);
        out
    }
}

impl std::fmt::Debug for PyStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&repr_str(self))
    }
}

pub fn repr_into(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            use std::fmt::Write;
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => repr_str_into(s, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(item, out);
            }
            out.push(']');
        }
        Value::Object(obj) => {
            out.push('{');
            for (i, (k, v)) in obj.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(k, out);
                out.push_str(": ");
                repr_into(v, out);
            }
            out.push('}');
        }
    }
}

/// `repr()` of text, as messages quote what was sent: `'a b'`.
pub fn repr_text(text: &str) -> String {
    repr_str(&PyStr::from(text))
}

pub fn repr_str(s: &PyStr) -> String {
    let mut out = String::with_capacity(s.as_bytes().len() + 2);
    repr_str_into(s, &mut out);
    out
}

/// `repr(str)`: single quotes unless the text has `'` and no `"`; escapes
/// backslash, the quote, `\t\n\r`, and every non-printable code point.
fn repr_str_into(s: &PyStr, out: &mut String) {
    use std::fmt::Write;
    let bytes = s.as_bytes();
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for cp in s.code_points() {
        match cp {
            0x5C => out.push_str("\\\\"),
            0x09 => out.push_str("\\t"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            _ if cp == quote as u32 => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7E => out.push(cp as u8 as char),
            _ if cp < 0x80 => {
                let _ = write!(out, "\\x{cp:02x}");
            }
            _ if is_printable(cp) => out.push(char::from_u32(cp).unwrap_or('\u{FFFD}')),
            _ if cp <= 0xFF => {
                let _ = write!(out, "\\x{cp:02x}");
            }
            _ if cp <= 0xFFFF => {
                let _ = write!(out, "\\u{cp:04x}");
            }
            _ => {
                let _ = write!(out, "\\U{cp:08x}");
            }
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_as_python_quotes_them() {
        let r = |s: &str| repr_str(&PyStr::from(s));
        assert_eq!(r("x"), "'x'");
        assert_eq!(r("it's"), "\"it's\"");
        assert_eq!(r("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(r("a\\b"), "'a\\\\b'");
        assert_eq!(r("\t\n\r\x0b\x1f\x7f"), "'\\t\\n\\r\\x0b\\x1f\\x7f'");
        assert_eq!(r("\u{85}\u{a0}\u{ad}é"), "'\\x85\\xa0\\xadé'");
        assert_eq!(r("\u{2028}\u{200b}\u{fffe}"), "'\\u2028\\u200b\\ufffe'");
        assert_eq!(r("\u{e0001}\u{1f600}"), "'\\U000e0001\u{1f600}'");
    }

    #[test]
    fn printable_as_python_3_11() {
        let printable = [
            0x20, 0x7E, 0xA1, 0x37A, 0xFFFD, 0x1B000, 0x1F600, 0x30000, 0x3134A, 0xE0100, 0xE01EF,
        ];
        let not = [
            0x0, 0x1F, 0x7F, 0xA0, 0xAD, 0x378, 0x200B, 0x2028, 0x3000, 0xFFFE, 0x2FFFE, 0x3134B,
            0xE0001, 0xE01F0, 0x10FFFF,
        ];
        for cp in printable {
            assert!(is_printable(cp), "{cp:#x}");
        }
        for cp in not {
            assert!(!is_printable(cp), "{cp:#x}");
        }
        assert!(!is_printable(0x110000));
    }

    #[test]
    fn printable_table_is_consistent() {
        // The runs cover the code space exactly and the index points at them.
        let (mut end, mut at, mut run) = (0u32, 0usize, 0usize);
        while at < tables::NON_PRINTABLE_RUNS.len() {
            if run % tables::NON_PRINTABLE_STRIDE == 0 {
                assert_eq!(
                    tables::NON_PRINTABLE_INDEX[run / tables::NON_PRINTABLE_STRIDE],
                    (end, at as u16)
                );
            }
            let (mut len, mut shift) = (0u32, 0);
            loop {
                let b = tables::NON_PRINTABLE_RUNS[at];
                at += 1;
                len |= u32::from(b & 0x7F) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            assert!(len > 0);
            // A run's first code point, and the one before it, differ.
            assert_ne!(is_printable(end), run % 2 == 0, "run {run} at {end:#x}");
            end += len;
            run += 1;
        }
        assert_eq!(end, 0x110000);
        assert_eq!(run % 2, 1, "the last run is non-printable");
        assert_eq!(
            tables::NON_PRINTABLE_INDEX.len(),
            run.div_ceil(tables::NON_PRINTABLE_STRIDE)
        );
    }

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(py_strip("\x1c\x1d 12\u{3000}\u{85}"), "12");
        assert_eq!(py_strip("\u{200b}1"), "\u{200b}1");
    }
}
