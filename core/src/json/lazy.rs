//! Checks JSON text and locates values in it without building a tree.
//!
//! The validator's fast path: [`parse`] checks the whole document's syntax
//! once, then the rules look up only the members they read
//! ([`LazyObject::fields`]) and decode only the scalars they compare. Nothing
//! is allocated unless a value is reported in a message ([`Lazy::to_value`]).

use super::lex::{Lexer, RawNum, RawStr};
use super::{Int, JsonError, PyStr, Value};

/// What a located value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    True,
    False,
    Int,
    Float,
    Str { escaped: bool },
    List,
    Object,
}

/// A syntactically valid value located in `text[start..end]`.
#[derive(Clone, Copy, Debug)]
pub struct Lazy<'a> {
    text: &'a str,
    start: usize,
    end: usize,
    kind: Kind,
}

/// Checks a whole document and returns its root.
pub fn parse(text: &str) -> Result<Lazy<'_>, JsonError> {
    let mut lx = Lexer::new(text);
    lx.skip_ws();
    let root = skip_value(&mut lx, 0)?;
    lx.skip_ws();
    if lx.pos != text.len() {
        return Err(lx.error("Extra data"));
    }
    Ok(root)
}

/// Scans one value at `lx.pos` (whitespace already skipped), checking it.
fn skip_value<'a>(lx: &mut Lexer<'a>, depth: usize) -> Result<Lazy<'a>, JsonError> {
    let start = lx.pos;
    let kind = match lx.peek() {
        Some(b'"') => Kind::Str { escaped: lx.string()?.escaped },
        Some(b'{') => {
            skip_object(lx, depth + 1)?;
            Kind::Object
        }
        Some(b'[') => {
            skip_list(lx, depth + 1)?;
            Kind::List
        }
        Some(b'n') if lx.eat("null") => Kind::Null,
        Some(b't') if lx.eat("true") => Kind::True,
        Some(b'f') if lx.eat("false") => Kind::False,
        Some(b'N') if lx.eat("NaN") => Kind::Float,
        Some(b'I') if lx.eat("Infinity") => Kind::Float,
        Some(b'-') if lx.eat("-Infinity") => Kind::Float,
        _ => {
            if lx.number()?.is_float { Kind::Float } else { Kind::Int }
        }
    };
    Ok(Lazy { text: lx.text, start, end: lx.pos, kind })
}

fn skip_list(lx: &mut Lexer<'_>, depth: usize) -> Result<(), JsonError> {
    lx.too_deep(depth)?;
    lx.pos += 1;
    lx.skip_ws();
    if lx.peek() == Some(b']') {
        lx.pos += 1;
        return Ok(());
    }
    loop {
        lx.skip_ws();
        skip_value(lx, depth)?;
        lx.skip_ws();
        match lx.peek() {
            Some(b',') => lx.pos += 1,
            Some(b']') => {
                lx.pos += 1;
                return Ok(());
            }
            _ => return Err(lx.error("Expecting ',' delimiter")),
        }
    }
}

fn skip_object(lx: &mut Lexer<'_>, depth: usize) -> Result<(), JsonError> {
    lx.too_deep(depth)?;
    lx.pos += 1;
    lx.skip_ws();
    if lx.peek() == Some(b'}') {
        lx.pos += 1;
        return Ok(());
    }
    loop {
        member(lx, depth)?;
        match lx.peek() {
            Some(b',') => {
                lx.pos += 1;
                lx.skip_ws();
            }
            Some(b'}') => {
                lx.pos += 1;
                return Ok(());
            }
            _ => return Err(lx.error("Expecting ',' delimiter")),
        }
    }
}

/// Scans `"key": value` and the whitespace after it.
fn member<'a>(lx: &mut Lexer<'a>, depth: usize) -> Result<(RawStr<'a>, Lazy<'a>), JsonError> {
    if lx.peek() != Some(b'"') {
        return Err(lx.error("Expecting property name enclosed in double quotes"));
    }
    let key = lx.string()?;
    lx.skip_ws();
    if lx.peek() != Some(b':') {
        return Err(lx.error("Expecting ':' delimiter"));
    }
    lx.pos += 1;
    lx.skip_ws();
    let v = skip_value(lx, depth)?;
    lx.skip_ws();
    Ok((key, v))
}

impl<'a> Lazy<'a> {
    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn as_object(&self) -> Option<LazyObject<'a>> {
        (self.kind == Kind::Object).then_some(LazyObject(*self))
    }

    /// The integer, for an integer literal.
    pub fn as_int(&self) -> Option<Int> {
        (self.kind == Kind::Int).then(|| self.raw_num().int())
    }

    /// Python string equality with `other`.
    pub fn str_eq(&self, other: &str) -> bool {
        match self.kind {
            Kind::Str { escaped } => self.raw_str(escaped).eq_str(other),
            _ => false,
        }
    }

    pub fn as_pystr(&self) -> Option<PyStr> {
        match self.kind {
            Kind::Str { escaped } => Some(self.raw_str(escaped).decode()),
            _ => None,
        }
    }

    /// The text without quotes, for a string with no escapes.
    pub fn plain_str(&self) -> Option<&'a str> {
        match self.kind {
            Kind::Str { escaped: false } => Some(&self.text[self.start + 1..self.end - 1]),
            _ => None,
        }
    }

    /// Decodes the value into a tree (for messages and the slow path).
    pub fn to_value(&self) -> Value {
        super::parse(&self.text[self.start..self.end]).expect("a located value is valid JSON")
    }

    pub fn source(&self) -> &'a str {
        &self.text[self.start..self.end]
    }

    fn raw_str(&self, escaped: bool) -> RawStr<'a> {
        RawStr { raw: &self.text[self.start + 1..self.end - 1], escaped }
    }

    fn raw_num(&self) -> RawNum<'a> {
        RawNum { text: &self.text[self.start..self.end], is_float: self.kind == Kind::Float }
    }
}

/// A located object.
#[derive(Clone, Copy, Debug)]
pub struct LazyObject<'a>(Lazy<'a>);

impl<'a> LazyObject<'a> {
    /// The values of `keys`, each the last occurrence (Python's dict keeps the
    /// last value of a repeated key), in one scan of the object.
    pub fn fields<const N: usize>(&self, keys: [&str; N]) -> [Option<Lazy<'a>>; N] {
        let mut found = [None; N];
        let mut lx = Lexer::new(self.0.text);
        lx.pos = self.0.start + 1;
        lx.skip_ws();
        if lx.peek() == Some(b'}') {
            return found;
        }
        loop {
            // Depth no longer matters: the document was checked as a whole.
            let (key, v) = member(&mut lx, 0).expect("a located object is valid JSON");
            if let Some(i) = keys.iter().position(|k| key.eq_str(k)) {
                found[i] = Some(v);
            }
            if lx.peek() == Some(b',') {
                lx.pos += 1;
                lx.skip_ws();
            } else {
                return found;
            }
        }
    }

    pub fn as_lazy(&self) -> Lazy<'a> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_last_duplicate_and_escaped_keys() {
        let root = parse(r#"{"mode": "store", "m\u006fde": "both", "x": [1, {"mode": 1}]}"#).unwrap();
        let [mode, x, missing] = root.as_object().unwrap().fields(["mode", "x", "y"]);
        assert!(mode.unwrap().str_eq("both"));
        assert_eq!(x.unwrap().kind(), Kind::List);
        assert!(missing.is_none());
    }

    #[test]
    fn same_verdict_as_the_tree_parser() {
        for text in ["01", "[1,]", "{\"a\":}", "\"\\ud800\"", " {} ", "[[[]]]", "1e5", "-Infinity", "nan"] {
            assert_eq!(parse(text).is_ok(), super::super::parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        assert!(parse(&"[".repeat(200_000)).is_err());
        assert!(parse(&"{\"a\":".repeat(200_000)).is_err());
    }
}
