//! Byte sizes: the reference's `author_byte_size`, and human units for editors.

use std::borrow::Cow;
use std::fmt;

use crate::json::{Int, PyStr, Value};
use crate::limits::{MOONCAKE_BYTE_SIZE_MAX, MOONCAKE_BYTE_SIZE_MIN};
use crate::pyrepr::{py_strip, repr_str, repr_text};

/// What `author_byte_size` was given, reduced to what its rules look at.
#[derive(Debug, Clone)]
pub enum ByteSizeArg<'a> {
    Bool(bool),
    Int(Int),
    Str(Cow<'a, str>),
    /// A string holding a lone surrogate, which `&str` cannot.
    WideStr(PyStr),
    /// Anything else, by Python type name (`NoneType`, `float`, `list`, `dict`).
    Other(&'static str),
}

impl<'a> From<&'a Value> for ByteSizeArg<'a> {
    fn from(v: &'a Value) -> Self {
        match v {
            Value::Bool(b) => ByteSizeArg::Bool(*b),
            Value::Int(i) => ByteSizeArg::Int(i.clone()),
            Value::Str(s) => match s.as_str() {
                Some(t) => ByteSizeArg::Str(Cow::Borrowed(t)),
                None => ByteSizeArg::WideStr(s.clone()),
            },
            other => ByteSizeArg::Other(other.type_name()),
        }
    }
}

/// Why a value is not a byte size. Each variant carries the offending value;
/// `Display` gives the reference's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteSizeError {
    Bool(bool),
    /// The `repr` of a string that is not all ASCII digits once stripped.
    NotDigits(String),
    WrongType(&'static str),
    /// The decimal value outside `[0, 2^63-1]`.
    OutOfRange(String),
}

impl fmt::Display for ByteSizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ByteSizeError::Bool(b) => write!(
                f,
                "byte-size value must be an integer, got bool: {}",
                if *b { "True" } else { "False" }
            ),
            ByteSizeError::NotDigits(repr) => write!(
                f,
                "byte-size value must be a base-10 integer string \
                 (ASCII digits only, no sign, point, or exponent), got {repr}"
            ),
            ByteSizeError::WrongType(name) => {
                write!(
                    f,
                    "byte-size value must be an int or a base-10 digit string, got {name}"
                )
            }
            ByteSizeError::OutOfRange(v) => write!(
                f,
                "byte-size value out of range [{MOONCAKE_BYTE_SIZE_MIN}, {MOONCAKE_BYTE_SIZE_MAX}]: {v}"
            ),
        }
    }
}

impl std::error::Error for ByteSizeError {}

/// Renders a byte size as the canonical decimal string stored in the spec,
/// exactly as the reference's `author_byte_size`.
pub fn author_byte_size(arg: ByteSizeArg<'_>) -> Result<String, ByteSizeError> {
    match arg {
        // Text already in the stored form (the usual case) is that form:
        // no number parsed and printed again.
        ByteSizeArg::Str(text) if is_authored_byte_size(&text) => Ok(text.into_owned()),
        arg => byte_size_value(arg).map(|size| size.to_string()),
    }
}

/// Whether `text` is already what [`author_byte_size`] makes of it: decimal
/// digits with no sign, space or leading zero, within the bounds.
fn is_authored_byte_size(text: &str) -> bool {
    const MAX: &str = "9223372036854775807";
    const _: () = assert!(MOONCAKE_BYTE_SIZE_MIN == 0 && MOONCAKE_BYTE_SIZE_MAX == i64::MAX);
    let b = text.as_bytes();
    !b.is_empty()
        && b.iter().all(u8::is_ascii_digit)
        && (b[0] != b'0' || b.len() == 1)
        // Equal lengths of digits compare as their numbers do.
        && (b.len() < MAX.len() || (b.len() == MAX.len() && text <= MAX))
}

/// [`author_byte_size`]'s verdict and value, without rendering the text (the
/// validator needs only the verdict).
pub fn byte_size_value(arg: ByteSizeArg<'_>) -> Result<Int, ByteSizeError> {
    let size = match arg {
        ByteSizeArg::Bool(b) => return Err(ByteSizeError::Bool(b)),
        ByteSizeArg::Int(i) => i,
        ByteSizeArg::Str(text) => {
            // ASCII digits only: what `Int::from_decimal` reads, but no sign.
            let stripped = py_strip(&text);
            match Int::from_decimal(stripped) {
                Some(size) if !stripped.starts_with('-') => size,
                _ => return Err(ByteSizeError::NotDigits(repr_text(&text))),
            }
        }
        ByteSizeArg::WideStr(s) => return Err(ByteSizeError::NotDigits(repr_str(&s))),
        ByteSizeArg::Other(name) => return Err(ByteSizeError::WrongType(name)),
    };
    if !size.in_range(MOONCAKE_BYTE_SIZE_MIN, MOONCAKE_BYTE_SIZE_MAX) {
        return Err(ByteSizeError::OutOfRange(size.to_string()));
    }
    Ok(size)
}

/// Why a human byte size (`4 GiB`) could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HumanSizeError {
    Empty,
    /// The number part is missing or malformed: carries the input.
    BadNumber(String),
    /// The unit is not one of the known ones: carries the unit.
    UnknownUnit(String),
    /// A fraction that does not come to a whole number of bytes.
    NotWhole(String),
    /// Above 2^63-1 bytes or negative: carries the input.
    OutOfRange(String),
}

impl fmt::Display for HumanSizeError {
    /// Inputs are quoted as Python's `repr` quotes them, like every other
    /// value in the core's messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = repr_text;
        match self {
            HumanSizeError::Empty => f.write_str("enter a size, e.g. 4 GiB or 4294967296"),
            HumanSizeError::BadNumber(s) => write!(
                f,
                "{} is not a size: write a number then a unit, e.g. 4 GiB",
                quoted(s)
            ),
            HumanSizeError::UnknownUnit(u) => write!(
                f,
                "unknown unit {}: use B, KB, MB, GB, TB, PB, EB (powers of 1000) or KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024)",
                quoted(u)
            ),
            HumanSizeError::NotWhole(s) => {
                write!(f, "{} is not a whole number of bytes", quoted(s))
            }
            HumanSizeError::OutOfRange(s) => write!(
                f,
                "{} is out of range: sizes go from 0 to {MOONCAKE_BYTE_SIZE_MAX} bytes",
                quoted(s)
            ),
        }
    }
}

impl std::error::Error for HumanSizeError {}

/// The forms a human size may take, for a reader who typed another.
pub const BYTE_SIZE_FORMS: &str = "whole bytes (4294967296) or a number and a unit: B, KB, MB, GB, TB, PB, EB (powers of 1000) or KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024)";

/// Units an editor accepts, with their factors. Decimal units are powers of
/// 1000 and binary ones powers of 1024, as in the IEC convention; the
/// ambiguous single letters (`K`, `G`) are refused rather than guessed.
const UNITS: [(&str, u64); 13] = [
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("PB", 1_000_000_000_000_000),
    ("EB", 1_000_000_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
    ("EiB", 1 << 60),
];

/// Reads `4GiB`, `4 GB`, `1.5 GiB`, `512MiB` or `4294967296` and returns the
/// canonical decimal string of the byte count. Units are case-sensitive in
/// their `i` only: `gib` and `GIB` read as `GiB`, `gb` as `GB`.
pub fn parse_byte_size(input: &str) -> Result<String, HumanSizeError> {
    let text = input.trim();
    if text.is_empty() {
        return Err(HumanSizeError::Empty);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == ','))
        .unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim_start());
    let number: String = number.chars().filter(|c| *c != '_' && *c != ',').collect();
    if number.is_empty()
        || number.starts_with('.')
        || number.ends_with('.')
        || number.matches('.').count() > 1
    {
        if text.starts_with('-') {
            return Err(HumanSizeError::OutOfRange(input.to_owned()));
        }
        return Err(HumanSizeError::BadNumber(input.to_owned()));
    }
    let factor = if unit.is_empty() {
        1
    } else {
        UNITS
            .iter()
            .find(|(name, _)| {
                name.eq_ignore_ascii_case(unit) && (name.contains('i') == unit.contains(['i', 'I']))
            })
            .map(|(_, f)| *f)
            .ok_or_else(|| HumanSizeError::UnknownUnit(unit.to_owned()))?
    };
    let (whole, frac) = number.split_once('.').unwrap_or((&number, ""));
    let out_of_range = || HumanSizeError::OutOfRange(input.to_owned());
    if whole.len() > 20 {
        return Err(out_of_range());
    }
    let whole: u64 = whole.parse().map_err(|_| out_of_range())?;
    let mut bytes = whole.checked_mul(factor).ok_or_else(out_of_range)?;
    if !frac.is_empty() {
        if frac.len() > 18 {
            return Err(HumanSizeError::NotWhole(input.to_owned()));
        }
        // frac_value / 10^len of `factor` bytes is whole when frac_value is
        // a multiple of 10^len / gcd(10^len, factor); reduced first, this
        // stays within 64 bits.
        let scale = 10u64.pow(frac.len() as u32);
        let frac_value: u64 = frac
            .parse()
            .map_err(|_| HumanSizeError::BadNumber(input.to_owned()))?;
        let common = gcd(scale, factor);
        let (scale, factor) = (scale / common, factor / common);
        if !frac_value.is_multiple_of(scale) {
            return Err(HumanSizeError::NotWhole(input.to_owned()));
        }
        let extra = (frac_value / scale)
            .checked_mul(factor)
            .ok_or_else(out_of_range)?;
        bytes = bytes.checked_add(extra).ok_or_else(out_of_range)?;
    }
    if bytes > MOONCAKE_BYTE_SIZE_MAX as u64 {
        return Err(out_of_range());
    }
    Ok(bytes.to_string())
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Formats a canonical byte count for an editor in the unit that divides it
/// exactly with the smallest number, binary units winning ties
/// (`4294967296` -> `4 GiB`, `4000000000` -> `4 GB`, `1000001` -> `1000001 B`). Reading the result with
/// [`parse_byte_size`] gives the input back. `None` when `canonical` is not a
/// byte size.
pub fn format_byte_size(canonical: &str) -> Option<String> {
    let canonical = author_byte_size(ByteSizeArg::Str(Cow::Borrowed(canonical))).ok()?;
    let bytes: u64 = canonical.parse().ok()?;
    if bytes == 0 {
        return Some("0 B".into());
    }
    let (name, factor) = UNITS
        .iter()
        .filter(|(_, f)| bytes.is_multiple_of(*f))
        .min_by_key(|(name, f)| (bytes / f, !name.contains('i')))
        .expect("bytes divide by 1");
    Some(format!("{} {name}", bytes / factor))
}

/// What a canonical byte count comes to, for a reader checking a size:
/// the bytes with their digits grouped, then the count in the largest
/// binary and decimal units it reaches, to two decimals
/// (`8000000000` -> `8,000,000,000 bytes = 7.45 GiB = 8 GB`). `None` when
/// `canonical` is not a byte size.
pub fn describe_byte_size(canonical: &str) -> Option<String> {
    let canonical = author_byte_size(ByteSizeArg::Str(Cow::Borrowed(canonical))).ok()?;
    let bytes: u64 = canonical.parse().ok()?;
    let mut grouped = String::new();
    for (i, c) in canonical.chars().enumerate() {
        if i > 0 && (canonical.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = format!("{grouped} {}", if bytes == 1 { "byte" } else { "bytes" });
    for binary in [true, false] {
        let Some((name, factor)) = UNITS
            .iter()
            .filter(|(name, f)| *f > 1 && name.contains('i') == binary && bytes >= *f)
            .max_by_key(|(_, f)| *f)
        else {
            continue;
        };
        out.push_str(&format!(" = {} {name}", two_decimals(bytes, *factor)));
    }
    Some(out)
}

/// `numerator / denominator` to two decimals, trailing zeros dropped
/// (`7.45`, `8`, `1.5`), rounded half up on the exact quotient. In
/// integers, so every build prints the same digits without linking a
/// float formatter (about 4 KB of the console's wasm).
fn two_decimals(numerator: u64, denominator: u64) -> String {
    let (numerator, denominator) = (u128::from(numerator), u128::from(denominator));
    let hundredths = (numerator * 200 + denominator) / (2 * denominator);
    let (whole, fraction) = (hundredths / 100, hundredths % 100);
    match fraction {
        0 => whole.to_string(),
        f if f % 10 == 0 => format!("{whole}.{}", f / 10),
        f => format!("{whole}.{f:02}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_decimals_round_the_exact_quotient_half_up() {
        for (n, d, text) in [
            (8_000_000_000, 1 << 30, "7.45"),
            (8_000_000_000, 1_000_000_000, "8"),
            (1_610_612_736, 1 << 30, "1.5"),
            (1_125, 1_000, "1.13"),
            (1_124, 1_000, "1.12"),
            (1_995, 1_000, "2"),
            (1_050, 1_000, "1.05"),
            (u64::MAX, 1 << 60, "16"),
            (u64::MAX, 1_000_000_000_000_000_000, "18.45"),
        ] {
            assert_eq!(two_decimals(n, d), text, "{n} / {d}");
        }
    }

    #[test]
    fn sizes_are_described_in_both_unit_systems() {
        assert_eq!(
            describe_byte_size("8000000000").unwrap(),
            "8,000,000,000 bytes = 7.45 GiB = 8 GB"
        );
        assert_eq!(
            describe_byte_size("4294967296").unwrap(),
            "4,294,967,296 bytes = 4 GiB = 4.29 GB"
        );
        assert_eq!(describe_byte_size("1").unwrap(), "1 byte");
        assert_eq!(describe_byte_size("999").unwrap(), "999 bytes");
        assert_eq!(describe_byte_size("1000").unwrap(), "1,000 bytes = 1 KB");
        assert_eq!(describe_byte_size("x"), None);
    }

    #[test]
    fn authored_sizes_are_recognised_exactly() {
        let mut texts: Vec<String> = [
            "",
            "0",
            "00",
            "01",
            "1",
            " 1",
            "1 ",
            "+1",
            "-1",
            "1_000",
            "\u{0661}",
            "1.0",
            "1e3",
            "4294967296",
            "34359738368",
            "9223372036854775806",
            "9223372036854775807",
            "9223372036854775808",
            "09223372036854775807",
            "10000000000000000000",
            "99999999999999999999",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.extend((0..2000).map(|i| (i * 7919).to_string()));
        for text in &texts {
            // The full path (number parsed and printed), which the shortcut
            // must agree with.
            let authored =
                byte_size_value(ByteSizeArg::Str(Cow::Borrowed(text))).map(|size| size.to_string());
            assert_eq!(
                is_authored_byte_size(text),
                authored.as_deref() == Ok(text.as_str()),
                "{text:?}"
            );
        }
    }

    fn author(v: &str) -> Result<String, String> {
        author_byte_size(ByteSizeArg::from(&crate::json::parse(v).unwrap()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn authors_as_the_reference() {
        assert_eq!(author("4294967296"), Ok("4294967296".into()));
        assert_eq!(author("\" \\u001c0042\\t\""), Ok("42".into()));
        assert_eq!(
            author("\"9223372036854775807\""),
            Ok("9223372036854775807".into())
        );
        assert_eq!(
            author("9223372036854775808"),
            Err(
                "byte-size value out of range [0, 9223372036854775807]: 9223372036854775808".into()
            )
        );
        assert_eq!(
            author("-1"),
            Err("byte-size value out of range [0, 9223372036854775807]: -1".into())
        );
        assert_eq!(
            author("true"),
            Err("byte-size value must be an integer, got bool: True".into())
        );
        assert_eq!(
            author("null"),
            Err("byte-size value must be an int or a base-10 digit string, got NoneType".into())
        );
        assert_eq!(
            author("2.0"),
            Err("byte-size value must be an int or a base-10 digit string, got float".into())
        );
        assert_eq!(
            author("\"1e3\""),
            Err("byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '1e3'".into())
        );
        assert_eq!(
            author("\"\\u0663\""),
            Err("byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '٣'".into())
        );
    }

    #[test]
    fn human_sizes() {
        assert_eq!(parse_byte_size("4GiB"), Ok("4294967296".into()));
        assert_eq!(parse_byte_size("4 GB"), Ok("4000000000".into()));
        assert_eq!(parse_byte_size("512MiB"), Ok("536870912".into()));
        assert_eq!(parse_byte_size("4294967296"), Ok("4294967296".into()));
        assert_eq!(parse_byte_size("1.5 GiB"), Ok("1610612736".into()));
        assert_eq!(parse_byte_size("4 gib"), Ok("4294967296".into()));
        assert!(matches!(
            parse_byte_size("4 G"),
            Err(HumanSizeError::UnknownUnit(_))
        ));
        assert!(matches!(
            parse_byte_size("1.0000001 KB"),
            Err(HumanSizeError::NotWhole(_))
        ));
        assert!(matches!(
            parse_byte_size("8 EiB"),
            Err(HumanSizeError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_byte_size("-1"),
            Err(HumanSizeError::OutOfRange(_))
        ));
        assert!(matches!(parse_byte_size(""), Err(HumanSizeError::Empty)));
        assert!(matches!(
            parse_byte_size("GiB"),
            Err(HumanSizeError::BadNumber(_))
        ));
        assert_eq!(format_byte_size("4294967296").as_deref(), Some("4 GiB"));
        assert_eq!(format_byte_size("4000000000").as_deref(), Some("4 GB"));
        assert_eq!(format_byte_size("1000001").as_deref(), Some("1000001 B"));
        assert_eq!(format_byte_size("0").as_deref(), Some("0 B"));
        assert_eq!(format_byte_size("x"), None);
    }
}
