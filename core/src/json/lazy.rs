//! Checks JSON text and locates values in it without building a tree.
//!
//! The validator's fast path: [`parse_captured`] checks the whole document's
//! syntax in one pass and, on the way, records where the members a
//! [`CapturePlan`] names are (the last occurrence of each, as Python's dict
//! keeps). The rules then read those members without scanning again, and
//! decode only the scalars they compare. Members outside the plan are found
//! by a scan of the already checked text ([`LazyObject::fields`]). Nothing is
//! allocated unless a value is reported in a message ([`Lazy::to_value`]).

use super::lex::{Lexer, RawNum, RawStr, checked_string_end};
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
    const NONE: CapturePlan = CapturePlan { slots: &[] };
    Ok(parse_captured(text, &NONE)?.0)
}

/// The members to record during the pass: each slot is a key of an object
/// identified by the slot that holds it (`None`: the root object).
#[derive(Debug)]
pub struct CapturePlan {
    pub slots: &'static [CaptureSlot],
}

impl CapturePlan {
    /// The slots of one object. A plan lists each object's slots together,
    /// so they are one range (checked by the tests of each plan).
    #[inline]
    pub fn children(&self, parent: Option<u8>) -> std::ops::Range<usize> {
        let start = self.slots.iter().position(|s| s.parent == parent).unwrap_or(self.slots.len());
        let len = self.slots[start..].iter().take_while(|s| s.parent == parent).count();
        start..start + len
    }

    /// Whether each object's slots are contiguous, as [`Self::children`] needs.
    pub fn is_grouped(&self) -> bool {
        self.slots.iter().enumerate().all(|(i, s)| {
            let range = self.children(s.parent);
            range.contains(&i)
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct CaptureSlot {
    /// The slot whose value is the object holding this key; `None` for the root.
    pub parent: Option<u8>,
    pub key: &'static str,
}

/// Most slots a plan may have.
pub const MAX_SLOTS: usize = 32;

/// Where the planned members are: by slot, the last occurrence's value.
#[derive(Debug, Clone, Copy)]
pub struct Captures<'a> {
    pub plan: &'static CapturePlan,
    pub values: [Option<Lazy<'a>>; MAX_SLOTS],
}

impl<'a> Captures<'a> {
    /// The slot of `key` in the object that is slot `parent`'s value.
    pub fn slot(&self, parent: Option<u8>, key: &str) -> Option<u8> {
        let range = self.plan.children(parent);
        self.plan.slots[range.clone()].iter().position(|s| s.key == key).map(|i| (range.start + i) as u8)
    }

    /// Forgets everything recorded inside slot `parent`'s value (a repeated
    /// key replaces the whole earlier value).
    fn clear_inside(&mut self, parent: u8) {
        for i in 0..self.plan.slots.len() {
            if self.plan.slots[i].parent == Some(parent) && self.values[i].take().is_some() {
                self.clear_inside(i as u8);
            }
        }
    }
}

/// Checks a whole document and records the members `plan` names.
pub fn parse_captured<'a>(
    text: &'a str,
    plan: &'static CapturePlan,
) -> Result<(Lazy<'a>, Captures<'a>), JsonError> {
    assert!(plan.slots.len() <= MAX_SLOTS, "a capture plan has at most {MAX_SLOTS} slots");
    let mut caps = Captures { plan, values: [None; MAX_SLOTS] };
    let mut lx = Lexer::new(text);
    lx.skip_ws();
    let root = skip_value(&mut lx, 0, Some(Holder::Root), &mut caps)?;
    lx.skip_ws();
    if lx.pos != text.len() {
        return Err(lx.error("Extra data"));
    }
    Ok((root, caps))
}

/// Which planned object a value is, when it is an object.
#[derive(Clone, Copy)]
enum Holder {
    Root,
    Slot(u8),
}

/// Scans one value at `lx.pos` (whitespace already skipped), checking it.
/// Containers are scanned in this one function, so nesting costs one stack
/// frame per level (deep documents run in small stacks, wasm's included).
fn skip_value<'a>(
    lx: &mut Lexer<'a>,
    depth: usize,
    holder: Option<Holder>,
    caps: &mut Captures<'a>,
) -> Result<Lazy<'a>, JsonError> {
    let start = lx.pos;
    let kind = match lx.peek() {
        Some(b'"') => Kind::Str { escaped: lx.string()?.escaped },
        Some(open @ (b'{' | b'[')) => {
            lx.too_deep(depth + 1)?;
            let is_object = open == b'{';
            let close = if is_object { b'}' } else { b']' };
            // The slots of this object, when the plan names it.
            let planned = match holder {
                Some(Holder::Root) if is_object => caps.plan.children(None),
                Some(Holder::Slot(s)) if is_object => caps.plan.children(Some(s)),
                _ => 0..0,
            };
            lx.pos += 1;
            lx.skip_ws();
            if lx.peek() == Some(close) {
                lx.pos += 1;
            } else {
                loop {
                    let mut slot = None;
                    if is_object {
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
                        slot = caps.plan.slots[planned.clone()]
                            .iter()
                            .position(|s| key.eq_str(s.key))
                            .map(|i| (planned.start + i) as u8);
                        // A repeated key replaces the earlier value whole.
                        if let Some(slot) = slot
                            && caps.values[slot as usize].is_some()
                        {
                            caps.clear_inside(slot);
                        }
                    }
                    let v = skip_value(lx, depth + 1, slot.map(Holder::Slot), caps)?;
                    if let Some(slot) = slot {
                        caps.values[slot as usize] = Some(v);
                    }
                    lx.skip_ws();
                    match lx.peek() {
                        Some(b',') => {
                            lx.pos += 1;
                            lx.skip_ws();
                        }
                        Some(c) if c == close => {
                            lx.pos += 1;
                            break;
                        }
                        _ => return Err(lx.error("Expecting ',' delimiter")),
                    }
                }
            }
            if is_object { Kind::Object } else { Kind::List }
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
            let (key, v) = checked_member(&mut lx);
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

/// `"key": value` in text already checked: no validation, containers
/// skipped by counting brackets outside strings.
fn checked_member<'a>(lx: &mut Lexer<'a>) -> (RawStr<'a>, Lazy<'a>) {
    let b = lx.text.as_bytes();
    let (key_end, key_escaped) = checked_string_end(b, lx.pos);
    let key = RawStr { raw: &lx.text[lx.pos + 1..key_end - 1], escaped: key_escaped };
    lx.pos = key_end;
    lx.skip_ws();
    lx.pos += 1; // the colon
    lx.skip_ws();
    let start = lx.pos;
    let (end, kind) = match b[start] {
        b'"' => {
            let (end, escaped) = checked_string_end(b, start);
            (end, Kind::Str { escaped })
        }
        open @ (b'{' | b'[') => {
            let mut depth = 1usize;
            let mut i = start + 1;
            while depth > 0 {
                match b[i] {
                    b'"' => i = checked_string_end(b, i).0,
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                    }
                    _ => i += 1,
                }
            }
            (i, if open == b'{' { Kind::Object } else { Kind::List })
        }
        b'n' => (start + 4, Kind::Null),
        b't' => (start + 4, Kind::True),
        b'f' => (start + 5, Kind::False),
        _ => {
            let mut i = start;
            let mut float = false;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                float |= matches!(b[i], b'.' | b'e' | b'E' | b'N' | b'I');
                i += 1;
            }
            (i, if float { Kind::Float } else { Kind::Int })
        }
    };
    lx.pos = end;
    lx.skip_ws();
    (key, Lazy { text: lx.text, start, end, kind })
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
    fn captures_the_last_occurrence_and_forgets_replaced_values() {
        static PLAN: CapturePlan = CapturePlan {
            slots: &[
                CaptureSlot { parent: None, key: "store" },
                CaptureSlot { parent: None, key: "mode" },
                CaptureSlot { parent: Some(0), key: "enabled" },
            ],
        };
        let text = r#"{"store": {"enabled": true}, "mode": 1, "x": {"store": 2}, "st\u006fre": {"size": 1}, "mode": "both"}"#;
        let (_, caps) = parse_captured(text, &PLAN).unwrap();
        assert_eq!(caps.values[0].unwrap().source(), r#"{"size": 1}"#);
        assert!(caps.values[2].is_none(), "the replaced store's members are forgotten");
        assert!(caps.values[1].unwrap().str_eq("both"));
        assert!(PLAN.is_grouped());
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
