//! Python's `repr()`, `str.strip()` and float formatting, for messages.

mod tables;

use crate::json::{PyStr, Value};

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
    !in_table(tables::NON_PRINTABLE, cp)
}

/// `str.isspace()` for one code point.
pub fn is_space(cp: u32) -> bool {
    // ASCII first: almost every call.
    if cp < 0x80 {
        return matches!(cp, 0x09..=0x0D | 0x1C..=0x20);
    }
    in_table(tables::WHITESPACE, cp)
}

/// `text.strip()`: removes Python's whitespace (wider than Rust's `trim`,
/// e.g. U+001C to U+001F) from both ends.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(|c: char| is_space(c as u32))
}

/// `repr(value)` appended to `out`.
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
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') { '"' } else { '\'' };
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

/// `repr(float)`: the shortest digits that round-trip, in positional notation
/// for exponents -4 to 15 (`0.0001`, `2.0`) and scientific outside (`1e-05`,
/// `1e+16`), as CPython's `float_repr_style = 'short'`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` gives the same shortest round-trip digits: "d.ddde<exp>".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let decpt = exp + 1;
    let mut out = String::with_capacity(24);
    if f.is_sign_negative() {
        out.push('-');
    }
    if (-3..=16).contains(&decpt) {
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(&digits);
        } else if decpt >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (decpt - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", e.abs()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_python_prints_them() {
        for (f, s) in [
            (2.0, "2.0"),
            (1e21, "1e+21"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.5e-7, "1.5e-07"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-12.5, "-12.5"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(float_repr(f), s, "{f:e}");
        }
    }

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
    fn strip_uses_python_whitespace() {
        assert_eq!(py_strip("\x1c\x1d 12\u{3000}\u{85}"), "12");
        assert_eq!(py_strip("\u{200b}1"), "\u{200b}1");
    }
}
