//! The lexical layer shared by the tree parser and the lazy scanner.

use std::fmt;

use super::pystr::push_code_point;
use super::{Int, PyStr, Value};

/// Deepest nesting of arrays and objects accepted. Python's scanner gives up
/// (RecursionError) near its recursion limit of 1000; this bound keeps the
/// parser's recursion and memory bounded on hostile input.
pub const MAX_DEPTH: usize = 1000;

/// A syntax error, located as Python's `json` locates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: &'static str,
    pub line: usize,
    pub column: usize,
    /// Offset in code points, as Python counts `char`.
    pub char_offset: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: line {} column {} (char {})",
            self.message, self.line, self.column, self.char_offset
        )
    }
}

impl std::error::Error for JsonError {}

pub(crate) struct Lexer<'a> {
    pub text: &'a str,
    pub pos: usize,
    /// Deepest nesting accepted ([`MAX_DEPTH`] unless a caller lowers it).
    pub max_depth: usize,
}

/// A string token: its raw content between the quotes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawStr<'a> {
    pub raw: &'a str,
    pub escaped: bool,
}

/// A number token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawNum<'a> {
    pub text: &'a str,
    pub is_float: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer { text, pos: 0, max_depth: MAX_DEPTH }
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    #[inline]
    pub fn skip_ws(&mut self) {
        let b = self.bytes();
        // Indentation: whole words of spaces at once.
        while let Some(word) = b[self.pos..].first_chunk::<8>()
            && u64::from_le_bytes(*word) == SPACES
        {
            self.pos += 8;
        }
        while let Some(&c) = b.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    pub fn error_at(&self, pos: usize, message: &'static str) -> JsonError {
        let before = &self.text[..pos.min(self.text.len())];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        JsonError {
            message,
            line,
            column: before[line_start..].chars().count() + 1,
            char_offset: before.chars().count(),
        }
    }

    pub fn too_deep(&self, depth: usize) -> Result<(), JsonError> {
        if depth > self.max_depth {
            return Err(self.error("Nesting too deep"));
        }
        Ok(())
    }

    pub fn error(&self, message: &'static str) -> JsonError {
        self.error_at(self.pos, message)
    }

    /// Consumes `lit` if the text continues with it.
    #[inline]
    pub fn eat(&mut self, lit: &str) -> bool {
        if self.bytes()[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    /// Scans a string whose opening quote is at `pos`.
    pub fn string(&mut self) -> Result<RawStr<'a>, JsonError> {
        let b = self.bytes();
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            // Eight bytes at a time to the next quote, backslash or control
            // character: strings are most of a spec's bytes.
            while let Some(word) = b[i..].first_chunk::<8>() {
                let hit = string_special(u64::from_le_bytes(*word));
                if hit != 0 {
                    i += (hit.trailing_zeros() / 8) as usize;
                    break;
                }
                i += 8;
            }
            let Some(&c) = b.get(i) else {
                return Err(self.error_at(start - 1, "Unterminated string starting at"));
            };
            match c {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match b.get(i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        Some(b'u') => {
                            if b.len() < i + 6 || !b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) {
                                return Err(self.error_at(i, "Invalid \\uXXXX escape"));
                            }
                            i += 6;
                        }
                        None => return Err(self.error_at(start - 1, "Unterminated string starting at")),
                        Some(_) => return Err(self.error_at(i, "Invalid \\escape")),
                    }
                }
                0..=0x1F => return Err(self.error_at(i, "Invalid control character at")),
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        Ok(RawStr { raw: &self.text[start..i], escaped })
    }

    /// Scans a number starting at `pos` (JSON's grammar, which is also what
    /// Python's scanner accepts once its backtracking is accounted for).
    pub fn number(&mut self) -> Result<RawNum<'a>, JsonError> {
        let b = self.bytes();
        let start = self.pos;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(self.error_at(start, "Expecting value")),
        }
        let mut is_float = false;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            i += 1;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if b.get(j).is_some_and(u8::is_ascii_digit) {
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                is_float = true;
                i = j;
            }
        }
        self.pos = i;
        Ok(RawNum { text: &self.text[start..i], is_float })
    }
}

impl RawStr<'_> {
    /// Python string equality with `other`, decoding escapes only when present.
    #[inline]
    pub fn eq_str(&self, other: &str) -> bool {
        if self.escaped { self.decode().eq_str(other) } else { self.raw == other }
    }

    pub fn decode(&self) -> PyStr {
        if !self.escaped {
            return PyStr::from(self.raw);
        }
        let b = self.raw.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'\\' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let simple = match b[i + 1] {
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                b'/' => Some(b'/'),
                b'b' => Some(0x08),
                b'f' => Some(0x0C),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                _ => None,
            };
            if let Some(c) = simple {
                out.push(c);
                i += 2;
                continue;
            }
            let mut cp = hex4(&b[i + 2..i + 6]);
            i += 6;
            // A high surrogate escape directly followed by a low surrogate
            // escape is one code point; any other surrogate stays alone.
            if (0xD800..0xDC00).contains(&cp) && b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
                let low = hex4(&b[i + 2..i + 6]);
                if (0xDC00..0xE000).contains(&low) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
            }
            push_code_point(&mut out, cp);
        }
        PyStr::from_wtf8(out)
    }
}

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |acc, &c| acc * 16 + (c as char).to_digit(16).unwrap_or(0))
}

impl RawNum<'_> {
    pub fn value(&self) -> Value {
        if self.is_float {
            // Correctly rounded like Python's float(), and ±inf on overflow
            // as float('1e400') gives.
            Value::Float(super::float::parse_float(self.text))
        } else {
            Value::Int(self.int())
        }
    }

    pub fn int(&self) -> Int {
        match self.text.parse::<i64>() {
            Ok(v) => Int::Small(v),
            Err(_) => Int::from_decimal(self.text).unwrap_or(Int::Small(0)),
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const SPACES: u64 = ONES * b' ' as u64;

/// High bits of the bytes of `x` that are zero. Only the lowest flagged byte
/// is sure to be a hit (borrows may flag bytes above it), which is all the
/// scanners use.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Flags `"`, `\\` and control characters (below 0x20) in a word of text.
#[inline(always)]
fn string_special(w: u64) -> u64 {
    zero_bytes(w ^ (ONES * b'"' as u64))
        | zero_bytes(w ^ (ONES * b'\\' as u64))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
}

/// The end (after the closing quote) of the string opening at `i`, and
/// whether it has escapes, in text already checked.
#[inline]
pub(crate) fn checked_string_end(b: &[u8], mut i: usize) -> (usize, bool) {
    i += 1;
    let mut escaped = false;
    loop {
        while let Some(word) = b[i..].first_chunk::<8>() {
            let word = u64::from_le_bytes(*word);
            let hit = zero_bytes(word ^ (ONES * b'"' as u64)) | zero_bytes(word ^ (ONES * b'\\' as u64));
            if hit != 0 {
                i += (hit.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match b[i] {
            b'"' => return (i + 1, escaped),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
}
