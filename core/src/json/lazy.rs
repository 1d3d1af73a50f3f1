//! Checks JSON text and locates values in it without building a tree.
//!
//! The validator's fast path: [`parse_captured`] checks the whole document's
//! syntax in one pass and, on the way, records where the members a
//! [`CapturePlan`] names are (the last occurrence of each, as Python's dict
//! keeps). The rules then read those members without scanning again, and
//! decode only the scalars they compare. Other members can be found by a
//! scan of the already checked text ([`LazyObject::fields`]). Nothing is
//! allocated unless a value is reported in a message ([`Lazy::to_value`]).
//!
//! The pass does the least per byte it can without `unsafe`: offsets live in
//! registers (the scanning functions of `lex` take and return them), the
//! usual spellings of pretty-printed JSON (`": "`, a new line and its
//! indentation) are tested first, strings are searched eight bytes at a
//! time, a planned key is recognised where it is spelled before any scan of
//! its string, and errors are small until located once at the end.
//! `examples/profile_fast.rs` counts its instructions under callgrind.

use std::ops::Range;

use super::lex::{
    Fail, MAX_DEPTH, RawNum, RawStr, Syntax, bytes_eq, checked_string_end, literal, number,
    skip_ws, string,
};
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

/// Where a recorded value is, in the text [`Captures`] holds once.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Checks a whole document and returns its root.
pub fn parse(text: &str) -> Result<Lazy<'_>, JsonError> {
    static NONE: CapturePlan = CapturePlan::new(&[]);
    parse_captured(&mut Captures::new(text, &NONE))
}

/// The members to record during the pass: each slot is a key of an object
/// identified by the slot that holds it (`None`: the root object).
///
/// The plan's values are numbered as nodes: node [`ROOT`] is the document,
/// node `s + 1` the value of slot `s`.
#[derive(Debug)]
pub struct CapturePlan {
    slots: &'static [CaptureSlot],
    /// By node, the slots of the object it holds as (first, count):
    /// computed once, as the scanner asks on every object.
    children: [(u8, u8); MAX_SLOTS + 1],
}

#[derive(Debug, Clone, Copy)]
pub struct CaptureSlot {
    /// The slot whose value is the object holding this key; `None` for the root.
    pub parent: Option<u8>,
    pub key: &'static str,
}

/// Most slots a plan may have.
pub const MAX_SLOTS: usize = 32;

/// The node of the whole document.
pub const ROOT: usize = 0;

/// The node of slot `slot`'s value (`None`: the root).
const fn node_of(slot: Option<u8>) -> usize {
    match slot {
        None => ROOT,
        Some(s) => s as usize + 1,
    }
}

impl CapturePlan {
    /// A plan of `slots`. Each object's slots must be listed together, after
    /// the slot holding the object, and keys must be plain text (no quote,
    /// backslash or control character: the scanner finds them spelled as
    /// they are); a `static` plan that breaks this, or has more than
    /// [`MAX_SLOTS`] slots, does not compile.
    pub const fn new(slots: &'static [CaptureSlot]) -> Self {
        assert!(
            slots.len() <= MAX_SLOTS,
            "a capture plan has at most MAX_SLOTS slots"
        );
        let mut children = [(0u8, 0u8); MAX_SLOTS + 1];
        let mut i = 0;
        while i < slots.len() {
            if let Some(parent) = slots[i].parent {
                assert!((parent as usize) < i, "a slot's parent is an earlier slot");
            }
            let key = slots[i].key.as_bytes();
            let mut k = 0;
            while k < key.len() {
                assert!(
                    key[k] >= 0x20 && key[k] != b'"' && key[k] != b'\\',
                    "a planned key is plain text"
                );
                k += 1;
            }
            let object = node_of(slots[i].parent);
            let (first, count) = children[object];
            if count == 0 {
                children[object] = (i as u8, 1);
            } else {
                assert!(
                    first as usize + count as usize == i,
                    "an object's slots are listed together"
                );
                children[object].1 += 1;
            }
            i += 1;
        }
        CapturePlan { slots, children }
    }

    /// The slots of the object at `node`.
    #[inline]
    fn children(&self, node: usize) -> Range<usize> {
        let (first, count) = self.children[node];
        first as usize..first as usize + count as usize
    }

    /// The node of the member `key` of the object at `node`, if planned.
    /// Callers that ask for an object's members in the plan's order find
    /// the `i`th at `position` `i` at once. Inline, so that a constant key
    /// is compared as a constant.
    #[inline(always)]
    pub fn member(&self, node: usize, position: usize, key: &str) -> Option<usize> {
        let slots = self.children(node);
        let at = slots.start + position;
        if slots.contains(&at) && bytes_eq(self.slots[at].key.as_bytes(), key.as_bytes()) {
            return Some(at + 1);
        }
        self.slot_where(slots, |k| k == key).map(|s| s + 1)
    }

    /// The first slot in `range` whose key `is_key`.
    #[inline(always)]
    fn slot_where(&self, range: Range<usize>, is_key: impl Fn(&str) -> bool) -> Option<usize> {
        range.into_iter().find(|&s| is_key(self.slots[s].key))
    }
}

/// Where the planned values of a text are: by node, the last occurrence's.
#[derive(Debug)]
pub struct Captures<'a> {
    text: &'a str,
    plan: &'static CapturePlan,
    spans: [Option<Span>; MAX_SLOTS + 1],
}

impl<'a> Captures<'a> {
    /// Nothing recorded yet; [`parse_captured`] fills it in.
    pub fn new(text: &'a str, plan: &'static CapturePlan) -> Self {
        Captures {
            text,
            plan,
            spans: [None; MAX_SLOTS + 1],
        }
    }

    pub fn plan(&self) -> &'static CapturePlan {
        self.plan
    }

    /// The recorded value at `node`, if present ([`ROOT`] once checked).
    #[inline]
    pub fn get(&self, node: usize) -> Option<Lazy<'a>> {
        self.spans[node].map(|Span { start, end, kind }| Lazy {
            text: self.text,
            start,
            end,
            kind,
        })
    }

    /// The member of a planned object (its `slots`) whose key is spelled
    /// plainly at `open`, a quote: the offset after the key's string, and
    /// the member's node. Planned keys are plain text (see
    /// [`CapturePlan::new`]), so a match is a whole string token, found
    /// without scanning it first.
    #[inline(always)]
    fn claim_plain(&mut self, slots: Range<usize>, open: usize) -> Option<(usize, usize)> {
        let b = self.text.as_bytes();
        let slot = self.plan.slot_where(slots, |key| {
            let close = open + 1 + key.len();
            b.get(close) == Some(&b'"') && bytes_eq(&b[open + 1..close], key.as_bytes())
        })?;
        Some((
            open + self.plan.slots[slot].key.len() + 2,
            self.claim(slot + 1),
        ))
    }

    /// The member of a planned object (its `slots`) whose key is the string
    /// with escapes in `text[open..end]`.
    #[cold]
    fn claim_escaped(&mut self, slots: Range<usize>, open: usize, end: usize) -> Option<usize> {
        let key = RawStr {
            raw: &self.text[open + 1..end - 1],
            escaped: true,
        }
        .decode();
        let slot = self.plan.slot_where(slots, |k| key.eq_str(k))?;
        Some(self.claim(slot + 1))
    }

    /// `node` for a new occurrence of its key: a repeated key replaces the
    /// earlier value whole, so what was recorded for it is forgotten.
    #[inline(always)]
    fn claim(&mut self, node: usize) -> usize {
        if self.spans[node].is_some() {
            self.clear(node);
        }
        node
    }

    /// Forgets the value at `node` and everything recorded inside it.
    #[cold]
    fn clear(&mut self, node: usize) {
        if self.spans[node].take().is_some() {
            for slot in self.plan.children(node) {
                self.clear(slot + 1);
            }
        }
    }
}

/// Checks a whole document and records the members its plan names in `caps`.
pub fn parse_captured<'a>(caps: &mut Captures<'a>) -> Result<Lazy<'a>, JsonError> {
    let text = caps.text;
    match document(text.as_bytes(), caps) {
        Ok(root) => {
            caps.spans[ROOT] = Some(root);
            Ok(Lazy {
                text,
                start: root.start,
                end: root.end,
                kind: root.kind,
            })
        }
        Err(e) => Err(e.locate(text)),
    }
}

fn document(b: &[u8], caps: &mut Captures<'_>) -> Result<Span, Fail> {
    let start = skip_ws(b, 0);
    let (end, kind) = value(b, start, 0, Some(ROOT), caps)?;
    let after = skip_ws(b, end);
    if after != b.len() {
        return Err(Fail::at(after, Syntax::ExtraData));
    }
    Ok(Span { start, end, kind })
}

/// Scans the value at `i` (whitespace already skipped), checking it: the
/// offset after it, and what it is. `node` is which planned value it is, if
/// it is one; `depth` is how many containers hold it.
///
/// Inline, so that a scalar costs no call and a planned [`object`] recurses
/// through itself alone (the plan bounds that depth; deeper nesting is
/// [`unplanned`], scanned without recursion).
#[inline(always)]
fn value(
    b: &[u8],
    i: usize,
    depth: usize,
    node: Option<usize>,
    caps: &mut Captures<'_>,
) -> Result<(usize, Kind), Fail> {
    match (b.get(i), node) {
        (Some(b'{'), Some(_)) => Ok((object(b, i, depth + 1, node, caps)?, Kind::Object)),
        (Some(b'{'), None) => Ok((unplanned(b, i, depth + 1)?, Kind::Object)),
        (Some(b'['), _) => Ok((unplanned(b, i, depth + 1)?, Kind::List)),
        _ => scalar(b, i),
    }
}

/// Scans the planned object `node` opening at `i`, at nesting `depth`,
/// recording the members the plan names.
fn object(
    b: &[u8],
    i: usize,
    depth: usize,
    node: Option<usize>,
    caps: &mut Captures<'_>,
) -> Result<usize, Fail> {
    if depth > MAX_DEPTH {
        return Err(Fail::at(i, Syntax::TooDeep));
    }
    let slots = node.map_or(0..0, |node| caps.plan.children(node));
    let mut i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return Err(Fail::at(i, Syntax::ExpectingKey));
        }
        let (key_end, member) = match caps.claim_plain(slots.clone(), i) {
            Some((end, member)) => (end, Some(member)),
            None => match string(b, i)? {
                (end, true) if !slots.is_empty() => {
                    (end, caps.claim_escaped(slots.clone(), i, end))
                }
                (end, _) => (end, None),
            },
        };
        let start = after_colon(b, key_end)?;
        let (end, kind) = value(b, start, depth, member, caps)?;
        if let Some(member) = member {
            caps.spans[member] = Some(Span { start, end, kind });
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Ok(i + 1),
            _ => return Err(Fail::at(i, Syntax::ExpectingComma)),
        }
    }
}

/// Scans the container opening at `i`, at nesting `depth`, that the plan
/// does not look into, without recursion: each level it opens costs a bit,
/// not a stack frame, so a document nested past [`MAX_DEPTH`] is an error
/// in any stack (a debug build's, a test thread's, wasm's). Only planned
/// objects recurse, and the plan bounds their nesting.
fn unplanned(b: &[u8], mut i: usize, depth: usize) -> Result<usize, Fail> {
    let mut open = Levels::default();
    'value: loop {
        // `i` is at a value, whitespace skipped.
        match b.get(i) {
            Some(&c @ (b'{' | b'[')) => {
                if depth + open.count > MAX_DEPTH {
                    return Err(Fail::at(i, Syntax::TooDeep));
                }
                let is_object = c == b'{';
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(if is_object { &b'}' } else { &b']' }) {
                    i += 1;
                } else {
                    open.push(is_object);
                    if is_object {
                        i = member_value(b, i)?;
                    }
                    continue 'value;
                }
            }
            _ => i = scalar(b, i)?.0,
        }
        // After a value: close what ends here, up to the next value.
        loop {
            let Some(in_object) = open.innermost_is_object() else {
                return Ok(i);
            };
            i = skip_ws(b, i);
            match b.get(i) {
                Some(b',') => {
                    i = skip_ws(b, i + 1);
                    if in_object {
                        i = member_value(b, i)?;
                    }
                    continue 'value;
                }
                Some(b'}') if in_object => open.pop(),
                Some(b']') if !in_object => open.pop(),
                _ => return Err(Fail::at(i, Syntax::ExpectingComma)),
            }
            i += 1;
        }
    }
}

/// The containers [`unplanned`] has open, as whether each is an object:
/// the first 64 levels in a register, deeper ones (rare) on the heap.
#[derive(Default)]
struct Levels {
    count: usize,
    first: u64,
    deeper: Vec<bool>,
}

impl Levels {
    #[inline(always)]
    fn push(&mut self, is_object: bool) {
        if self.count < 64 {
            self.first = self.first & !(1 << self.count) | (is_object as u64) << self.count;
        } else {
            self.deeper.push(is_object);
        }
        self.count += 1;
    }

    #[inline(always)]
    fn pop(&mut self) {
        self.count -= 1;
        if self.count >= 64 {
            self.deeper.pop();
        }
    }

    /// Whether the innermost open container is an object; `None` when none is open.
    #[inline(always)]
    fn innermost_is_object(&self) -> Option<bool> {
        match self.count {
            0 => None,
            n @ 1..=64 => Some(self.first >> (n - 1) & 1 == 1),
            _ => self.deeper.last().copied(),
        }
    }
}

/// Checks the key and colon of the member at `i` of an unplanned object:
/// the offset of its value.
#[inline(always)]
fn member_value(b: &[u8], i: usize) -> Result<usize, Fail> {
    if b.get(i) != Some(&b'"') {
        return Err(Fail::at(i, Syntax::ExpectingKey));
    }
    let (key_end, _) = string(b, i)?;
    after_colon(b, key_end)
}

/// The offset of the value after the key ending at `key_end`.
#[inline(always)]
fn after_colon(b: &[u8], key_end: usize) -> Result<usize, Fail> {
    match b.get(key_end..key_end + 3) {
        // `": "` before a value: the usual spelling, in one test.
        Some(&[b':', b' ', c]) if c > b' ' => Ok(key_end + 2),
        _ => {
            let i = skip_ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return Err(Fail::at(i, Syntax::ExpectingColon));
            }
            Ok(skip_ws(b, i + 1))
        }
    }
}

/// Scans the value at `i`, which is not a container.
#[inline(always)]
fn scalar(b: &[u8], i: usize) -> Result<(usize, Kind), Fail> {
    let lit = |lit, kind| literal(b, i, lit).map(|end| (end, kind));
    let found = match b.get(i) {
        Some(b'"') => {
            let (end, escaped) = string(b, i)?;
            return Ok((end, Kind::Str { escaped }));
        }
        Some(b'n') => lit("null", Kind::Null),
        Some(b't') => lit("true", Kind::True),
        Some(b'f') => lit("false", Kind::False),
        Some(b'N') => lit("NaN", Kind::Float),
        Some(b'I') => lit("Infinity", Kind::Float),
        Some(b'-') => lit("-Infinity", Kind::Float),
        _ => None,
    };
    match found {
        Some(found) => Ok(found),
        None => {
            let (end, is_float) = number(b, i)?;
            Ok((end, if is_float { Kind::Float } else { Kind::Int }))
        }
    }
}

impl<'a> Lazy<'a> {
    #[inline]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    #[inline]
    pub fn as_object(&self) -> Option<LazyObject<'a>> {
        (self.kind == Kind::Object).then_some(LazyObject(*self))
    }

    /// The integer, for an integer literal.
    #[inline]
    pub fn as_int(&self) -> Option<Int> {
        (self.kind == Kind::Int).then(|| self.raw_num().int())
    }

    /// Python string equality with `other`.
    #[inline]
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
    #[inline]
    pub fn plain_str(&self) -> Option<&'a str> {
        match self.kind {
            Kind::Str { escaped: false } => Some(&self.text[self.start + 1..self.end - 1]),
            _ => None,
        }
    }

    /// Decodes the value into a tree (for messages and the slow path).
    pub fn to_value(&self) -> Value {
        match super::parse(&self.text[self.start..self.end]) {
            Ok(value) => value,
            Err(_) => unreachable!("a located value is valid JSON"),
        }
    }

    #[inline]
    pub fn source(&self) -> &'a str {
        &self.text[self.start..self.end]
    }

    #[inline]
    fn raw_str(&self, escaped: bool) -> RawStr<'a> {
        RawStr {
            raw: &self.text[self.start + 1..self.end - 1],
            escaped,
        }
    }

    #[inline]
    fn raw_num(&self) -> RawNum<'a> {
        RawNum {
            text: &self.text[self.start..self.end],
            is_float: self.kind == Kind::Float,
        }
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
        let b = self.0.text.as_bytes();
        let mut i = skip_ws(b, self.0.start + 1);
        if b[i] == b'}' {
            return found;
        }
        loop {
            let member = checked_member(self.0.text, i);
            if let Some(k) = keys.iter().position(|k| member.key.eq_str(k)) {
                found[k] = Some(member.value);
            }
            if b[member.next] == b',' {
                i = skip_ws(b, member.next + 1);
            } else {
                return found;
            }
        }
    }

    pub fn as_lazy(&self) -> Lazy<'a> {
        self.0
    }
}

/// A member of an object in checked text.
struct Member<'a> {
    key: RawStr<'a>,
    value: Lazy<'a>,
    /// The offset of the `,` or `}` after it.
    next: usize,
}

/// The member `"key": value` at `i` in text already checked: no
/// validation, containers skipped by counting brackets outside strings.
fn checked_member(text: &str, i: usize) -> Member<'_> {
    let b = text.as_bytes();
    let (key_end, key_escaped) = checked_string_end(b, i);
    let colon = skip_ws(b, key_end);
    let start = skip_ws(b, colon + 1);
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
            (
                i,
                if open == b'{' {
                    Kind::Object
                } else {
                    Kind::List
                },
            )
        }
        b'n' => (start + 4, Kind::Null),
        b't' => (start + 4, Kind::True),
        b'f' => (start + 5, Kind::False),
        _ => {
            let mut i = start;
            let mut float = false;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                float |= matches!(b[i], b'.' | b'e' | b'E' | b'N' | b'I');
                i += 1;
            }
            (i, if float { Kind::Float } else { Kind::Int })
        }
    };
    Member {
        key: RawStr {
            raw: &text[i + 1..key_end - 1],
            escaped: key_escaped,
        },
        value: Lazy {
            text,
            start,
            end,
            kind,
        },
        next: skip_ws(b, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_last_duplicate_and_escaped_keys() {
        let root =
            parse(r#"{"mode": "store", "m\u006fde": "both", "x": [1, {"mode": 1}]}"#).unwrap();
        let [mode, x, missing] = root.as_object().unwrap().fields(["mode", "x", "y"]);
        assert!(mode.unwrap().str_eq("both"));
        assert_eq!(x.unwrap().kind(), Kind::List);
        assert!(missing.is_none());
    }

    #[test]
    fn captures_the_last_occurrence_and_forgets_replaced_values() {
        static PLAN: CapturePlan = CapturePlan::new(&[
            CaptureSlot {
                parent: None,
                key: "store",
            },
            CaptureSlot {
                parent: None,
                key: "mode",
            },
            CaptureSlot {
                parent: Some(0),
                key: "enabled",
            },
        ]);
        let text = r#"{"store": {"enabled": true}, "mode": 1, "x": {"store": 2}, "st\u006fre": {"size": 1}, "mode": "both"}"#;
        let mut caps = Captures::new(text, &PLAN);
        parse_captured(&mut caps).unwrap();
        // Nodes: slot s's value is node s + 1.
        assert_eq!(caps.get(1).unwrap().source(), r#"{"size": 1}"#);
        assert!(
            caps.get(3).is_none(),
            "the replaced store's members are forgotten"
        );
        assert!(caps.get(2).unwrap().str_eq("both"));
        assert_eq!(caps.get(ROOT).unwrap().source(), text);
    }

    #[test]
    fn same_verdict_and_error_as_the_tree_parser() {
        let texts = [
            "01",
            "[1,]",
            "{\"a\":}",
            "\"\\ud800\"",
            " {} ",
            "[[[]]]",
            "1e5",
            "-Infinity",
            "nan",
            "",
            " ",
            "1.",
            ".5",
            "1e",
            "1e+",
            "-",
            "-0",
            "+1",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "{'a':1}",
            "[1 2]",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12G4\"",
            "\"abc",
            "\"abcdefghijklmnop",
            "\"\\",
            "\u{feff}1",
            "1 2",
            "nul",
            "tru",
            "{\"a\":1}x",
            "{\n  \"mode\": \"store\",\n  \"x\": [1, 2.5e3, true, false, null, NaN, Infinity]\n}",
            "{\"é\": \"ü\u{1F600}\", \"b\": }",
            "[\"\u{1F600}\", \"\u{1}\"]",
            "{\"mode\":\"store\"\n,\"store\"\n:\n{}}",
        ];
        for text in texts {
            let lazy = parse(text).map(|v| v.source().to_owned());
            let tree = super::super::parse(text)
                .map(|_| text.trim_matches([' ', '\t', '\n', '\r']).to_owned());
            assert_eq!(lazy, tree, "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        assert!(parse(&"[".repeat(200_000)).is_err());
        assert!(parse(&"{\"a\":".repeat(200_000)).is_err());
    }
}
