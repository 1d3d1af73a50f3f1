//! The lexical layer of the tree parser.

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

/// Which of Python's syntax errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    ExpectingValue,
    ExpectingKey,
    ExpectingColon,
    ExpectingComma,
    /// Located at the opening quote.
    Unterminated,
    BadUnicodeEscape,
    BadEscape,
    ControlCharacter,
    TooDeep,
    ExtraData,
}

impl Syntax {
    pub fn message(self) -> &'static str {
        match self {
            Syntax::ExpectingValue => "Expecting value",
            Syntax::ExpectingKey => "Expecting property name enclosed in double quotes",
            Syntax::ExpectingColon => "Expecting ':' delimiter",
            Syntax::ExpectingComma => "Expecting ',' delimiter",
            Syntax::Unterminated => "Unterminated string starting at",
            Syntax::BadUnicodeEscape => "Invalid \\uXXXX escape",
            Syntax::BadEscape => "Invalid \\escape",
            Syntax::ControlCharacter => "Invalid control character at",
            Syntax::TooDeep => "Nesting too deep",
            Syntax::ExtraData => "Extra data",
        }
    }
}

/// A syntax error at a byte offset. The parser passes this small error up
/// and locates it in lines and columns once, at the top ([`Fail::locate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub at: usize,
    pub what: Syntax,
}

impl Fail {
    #[cold]
    pub fn at(at: usize, what: Syntax) -> Fail {
        Fail { at, what }
    }

    /// Locates the error in `text`, as Python's `json` does.
    #[cold]
    pub fn locate(self, text: &str) -> JsonError {
        let before = &text[..self.at.min(text.len())];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        JsonError {
            message: self.what.message(),
            line,
            column: before[line_start..].chars().count() + 1,
            char_offset: before.chars().count(),
        }
    }
}

// The scanning functions below take the text's bytes and an offset, and
// return the offset after what they scanned: the hot loops keep the offset in
// a register rather than in a struct behind a reference.

/// The offset of the first byte at or after `i` that is not JSON whitespace.
/// Most calls find a token at once, so that test comes first; then the
/// shapes of pretty-printed text: one space, or a new line and its
/// indentation (a run of spaces is skipped a word at a time). Anything else
/// is a call, which keeps the inline part small in the parser's loops.
#[inline(always)]
fn skip_ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if c > b' ' => return i,
        // `": "` and `", "`.
        Some(b' ') if b.get(i + 1).is_some_and(|&c| c > b' ') => return i + 1,
        Some(b'\n') => {
            let after = i + 1 + leading_spaces(&b[i + 1..]);
            if b.get(after).is_some_and(|&c| c > b' ') {
                return after;
            }
        }
        _ => {}
    }
    skip_any_ws(b, i)
}

/// [`skip_ws`] for any whitespace.
#[inline(never)]
fn skip_any_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        match c {
            b' ' => i += leading_spaces(&b[i..]),
            b'\n' | b'\t' | b'\r' => i += 1,
            _ => break,
        }
    }
    i
}

/// How many spaces `b` starts with, counted a word at a time.
#[inline(always)]
fn leading_spaces(b: &[u8]) -> usize {
    let mut n = 0;
    while let Some(word) = b[n..].first_chunk::<8>() {
        // The lowest byte that is not a space is the lowest non-zero byte.
        let others = u64::from_le_bytes(*word) ^ SPACES;
        if others != 0 {
            return n + (others.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + b[n..].iter().take_while(|&&c| c == b' ').count()
}

/// Scans the string whose opening quote is at `open`: the offset after its
/// closing quote, and whether it has escapes.
#[inline(always)]
fn string(b: &[u8], open: usize) -> Result<(usize, bool), Fail> {
    let mut i = open + 1;
    // Eight bytes at a time to the next quote, backslash or control
    // character: strings are most of a spec's bytes, and most end at the
    // first such byte, so that case is inline and the rest is a call.
    while let Some(word) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*word);
        let hit = string_special(word);
        if hit != 0 {
            // The flag is the high bit of the first special byte.
            let bit = hit.trailing_zeros();
            i += (bit / 8) as usize;
            if (word >> (bit & !7)) as u8 == b'"' {
                return Ok((i + 1, false));
            }
            break;
        }
        i += 8;
    }
    string_from(b, open, i)
}

/// The rest of [`string`] from `i`: escapes, control characters, and the
/// last bytes of the text, where no whole word is left.
#[inline(never)]
fn string_from(b: &[u8], open: usize, mut i: usize) -> Result<(usize, bool), Fail> {
    let mut escaped = false;
    loop {
        while let Some(word) = b[i..].first_chunk::<8>() {
            let hit = string_special(u64::from_le_bytes(*word));
            if hit != 0 {
                i += (hit.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        let Some(&c) = b.get(i) else {
            return Err(Fail::at(open, Syntax::Unterminated));
        };
        match c {
            b'"' => return Ok((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') => {
                        if b.len() < i + 6 || !b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) {
                            return Err(Fail::at(i, Syntax::BadUnicodeEscape));
                        }
                        i += 6;
                    }
                    None => return Err(Fail::at(open, Syntax::Unterminated)),
                    Some(_) => return Err(Fail::at(i, Syntax::BadEscape)),
                }
            }
            0..=0x1F => return Err(Fail::at(i, Syntax::ControlCharacter)),
            _ => i += 1,
        }
    }
}

/// Scans the number at `start` (JSON's grammar, which is also what Python's
/// scanner accepts once its backtracking is accounted for): the offset after
/// it, and whether it is a float.
#[inline(always)]
fn number(b: &[u8], start: usize) -> Result<(usize, bool), Fail> {
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(b, i + 1),
        _ => return Err(Fail::at(start, Syntax::ExpectingValue)),
    }
    // Most numbers in a spec are small integers: done at the first byte
    // that cannot continue a number.
    if !matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
        return Ok((i, false));
    }
    let mut is_float = false;
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        is_float = true;
        i = digits_end(b, i + 2);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            i = digits_end(b, j + 1);
        }
    }
    Ok((i, is_float))
}

/// The end of the run of ASCII digits at `i`.
#[inline(always)]
fn digits_end(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The offset after the literal `lit` if the text continues with it at `i`.
#[inline(always)]
fn literal(b: &[u8], i: usize, lit: &str) -> Option<usize> {
    b.get(i..)?
        .starts_with(lit.as_bytes())
        .then_some(i + lit.len())
}

/// A cursor over the text for the tree parser, on the functions above.
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
        Lexer {
            text,
            pos: 0,
            max_depth: MAX_DEPTH,
        }
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
        self.pos = skip_ws(self.bytes(), self.pos);
    }

    /// The error `what` at the current position.
    #[cold]
    pub fn fail(&self, what: Syntax) -> Fail {
        Fail::at(self.pos, what)
    }

    #[inline]
    pub fn too_deep(&self, depth: usize) -> Result<(), Fail> {
        if depth > self.max_depth {
            return Err(self.fail(Syntax::TooDeep));
        }
        Ok(())
    }

    /// Consumes `lit` if the text continues with it.
    #[inline]
    pub fn eat(&mut self, lit: &str) -> bool {
        literal(self.bytes(), self.pos, lit)
            .map(|end| self.pos = end)
            .is_some()
    }

    /// Scans a string whose opening quote is at `pos`.
    #[inline]
    pub fn string(&mut self) -> Result<RawStr<'a>, Fail> {
        let open = self.pos;
        let (end, escaped) = string(self.bytes(), open)?;
        self.pos = end;
        Ok(RawStr {
            raw: &self.text[open + 1..end - 1],
            escaped,
        })
    }

    /// Scans a number starting at `pos`.
    #[inline]
    pub fn number(&mut self) -> Result<RawNum<'a>, Fail> {
        let start = self.pos;
        let (end, is_float) = number(self.bytes(), start)?;
        self.pos = end;
        Ok(RawNum {
            text: &self.text[start..end],
            is_float,
        })
    }
}

impl RawStr<'_> {
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
            if (0xD800..0xDC00).contains(&cp)
                && b.get(i) == Some(&b'\\')
                && b.get(i + 1) == Some(&b'u')
            {
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
    h.iter().fold(0, |acc, &c| {
        acc * 16 + (c as char).to_digit(16).unwrap_or(0)
    })
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
        Int::from_decimal(self.text).expect("an integer token is an optional '-' and digits")
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const SPACES: u64 = ONES * b' ' as u64;

/// High bits of the bytes of `x` that are zero. Only the lowest flagged byte
/// is sure to be a hit (borrows may flag bytes above it), which is all the
/// string scan uses.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Flags `"`, `\\` and control characters (below 0x20) in a word of text.
#[inline(always)]
fn string_special(w: u64) -> u64 {
    // Flipping bit 1 maps `"` (0x22) to 0x20 and keeps 0x00-0x1F below
    // 0x20, while every other byte stays at 0x21 or above: one test for
    // bytes below 0x21 finds quotes and control characters together.
    let quote_or_control = w ^ (ONES * 0x02);
    zero_bytes(w ^ (ONES * b'\\' as u64))
        | (quote_or_control.wrapping_sub(ONES * 0x21) & !quote_or_control & HIGHS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_special_finds_the_first_special_byte() {
        let special = |c: u8| c == b'"' || c == b'\\' || c < 0x20;
        for c in 0..=255u8 {
            for at in 0..8 {
                for filler in [b'a', 0xFF, b' ', b'#', b'!'] {
                    let mut word = [filler; 8];
                    word[at] = c;
                    let hit = string_special(u64::from_le_bytes(word));
                    let first = word.iter().position(|&b| special(b));
                    let found = (hit != 0).then(|| (hit.trailing_zeros() / 8) as usize);
                    assert_eq!(found, first, "{c:#x} at {at} among {filler:#x}");
                }
            }
        }
    }

    #[test]
    fn skip_ws_skips_runs_and_stops_at_tokens() {
        let cases = [
            ("", 0),
            ("x", 0),
            (" ", 1),
            (" x", 1),
            ("  x", 2),
            ("          ", 10),
            ("\n", 1),
            ("\n  ", 3),
            ("\n                   }", 20),
            ("\n \n x", 4),
            (" \n x", 3),
            ("\n\t\r x", 4),
        ];
        for (text, end) in cases {
            assert_eq!(skip_ws(text.as_bytes(), 0), end, "{text:?}");
        }
    }
}
