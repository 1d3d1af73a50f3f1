//! What the rules need to read of a value, over a tree or over raw text.
//!
//! The rules are written once against [`View`]; [`Value`] serves the
//! collecting check and the builder, [`Captured`] (text checked in one pass
//! that records the members the rules read) the fast fail-fast check of JSON
//! text, so both give the same verdict by construction.

use crate::bytesize::ByteSizeArg;
use crate::json::lazy::{self, CapturePlan, CaptureSlot, Captures, Kind, Lazy, LazyObject};
use crate::json::{Int, Object, Value};

pub(crate) trait View: Copy {
    type Obj: ObjectView<V = Self>;
    fn as_object(self) -> Option<Self::Obj>;
    fn is_null(self) -> bool;
    /// Python's `value is True`.
    fn is_true(self) -> bool;
    fn is_str(self) -> bool;
    /// Python string equality.
    fn str_eq(self, s: &str) -> bool;
    /// A plain integer (not a bool, not a float).
    fn as_int(self) -> Option<Int>;
    fn byte_size_arg(&self) -> ByteSizeArg<'_>;
    /// Python's `repr(value)`.
    fn repr(self) -> String;
}

pub(crate) trait ObjectView: Copy {
    type V: View;
    /// The values of `keys` (present ones, `null` included), in one pass.
    fn fields<const N: usize>(self, keys: [&str; N]) -> [Option<Self::V>; N];
}

/// Python's `d.get(key)`: absent and `null` are both `None`.
pub(crate) fn non_null<V: View>(v: Option<V>) -> Option<V> {
    v.filter(|v| !v.is_null())
}

/// `repr(d.get(key))`.
pub(crate) fn repr_opt<V: View>(v: Option<V>) -> String {
    v.map_or_else(|| "None".to_owned(), View::repr)
}

impl<'a> View for &'a Value {
    type Obj = &'a Object;

    fn as_object(self) -> Option<&'a Object> {
        Value::as_object(self)
    }
    fn is_null(self) -> bool {
        matches!(self, Value::Null)
    }
    fn is_true(self) -> bool {
        Value::is_true(self)
    }
    fn is_str(self) -> bool {
        matches!(self, Value::Str(_))
    }
    fn str_eq(self, s: &str) -> bool {
        matches!(self, Value::Str(v) if v.eq_str(s))
    }
    fn as_int(self) -> Option<Int> {
        Value::as_int(self).cloned()
    }
    fn byte_size_arg(&self) -> ByteSizeArg<'_> {
        ByteSizeArg::from(*self)
    }
    fn repr(self) -> String {
        Value::repr(self)
    }
}

impl<'a> ObjectView for &'a Object {
    type V = &'a Value;

    fn fields<const N: usize>(self, keys: [&str; N]) -> [Option<&'a Value>; N] {
        keys.map(|k| self.get(k))
    }
}

impl<'a> View for Lazy<'a> {
    type Obj = LazyObject<'a>;

    #[inline]
    fn as_object(self) -> Option<LazyObject<'a>> {
        Lazy::as_object(&self)
    }
    #[inline]
    fn is_null(self) -> bool {
        self.kind() == Kind::Null
    }
    #[inline]
    fn is_true(self) -> bool {
        self.kind() == Kind::True
    }
    #[inline]
    fn is_str(self) -> bool {
        matches!(self.kind(), Kind::Str { .. })
    }
    #[inline]
    fn str_eq(self, s: &str) -> bool {
        Lazy::str_eq(&self, s)
    }
    #[inline]
    fn as_int(self) -> Option<Int> {
        Lazy::as_int(&self)
    }
    #[inline]
    fn byte_size_arg(&self) -> ByteSizeArg<'_> {
        lazy_byte_size_arg(*self)
    }
    #[inline]
    fn repr(self) -> String {
        self.to_value().repr()
    }
}

impl<'a> ObjectView for LazyObject<'a> {
    type V = Lazy<'a>;

    fn fields<const N: usize>(self, keys: [&str; N]) -> [Option<Lazy<'a>>; N] {
        LazyObject::fields(&self, keys)
    }
}

/// What `author_byte_size` sees of a value in text: the text's lifetime, so
/// a [`Captured`] value can lend it too.
fn lazy_byte_size_arg(value: Lazy<'_>) -> ByteSizeArg<'_> {
    match value.kind() {
        Kind::True => ByteSizeArg::Bool(true),
        Kind::False => ByteSizeArg::Bool(false),
        Kind::Int => ByteSizeArg::Int(value.as_int().expect("an integer literal")),
        Kind::Str { escaped: false } => {
            ByteSizeArg::Str(value.plain_str().expect("a plain string").into())
        }
        Kind::Str { escaped: true } => {
            let s = value.as_pystr().expect("a string");
            match s.as_str() {
                Some(text) => ByteSizeArg::Str(text.to_owned().into()),
                None => ByteSizeArg::WideStr(s),
            }
        }
        Kind::Null => ByteSizeArg::Other("NoneType"),
        Kind::Float => ByteSizeArg::Other("float"),
        Kind::List => ByteSizeArg::Other("list"),
        Kind::Object => ByteSizeArg::Other("dict"),
    }
}

const fn slot(parent: Option<u8>, key: &'static str) -> CaptureSlot {
    CaptureSlot { parent, key }
}

/// The members `rules::check` reads, so one pass over the text can record
/// them, each object's in the order the rules ask for them. Every member the
/// rules read must be here (the fast path panics on one that is not): the
/// rule tests run every branch on both paths, and the test below reads every
/// object's members.
pub(crate) static MOONCAKE_PLAN: CapturePlan = CapturePlan::new(&[
    slot(None, "mode"),                   // 0
    slot(None, "store"),                  // 1
    slot(None, "transfer"),               // 2
    slot(None, "topology"),               // 3
    slot(None, "autoscaling"),            // 4
    slot(Some(1), "global_segment_size"), // 5
    slot(Some(1), "local_buffer_size"),   // 6
    slot(Some(1), "cold_tier_enabled"),   // 7
    slot(Some(1), "enabled"),             // 8
    slot(Some(2), "protocol"),            // 9
    slot(Some(2), "device_name"),         // 10
    slot(Some(3), "prefill"),             // 11
    slot(Some(3), "decode"),              // 12
    slot(Some(4), "enabled"),             // 13
    slot(Some(4), "prefill"),             // 14
    slot(Some(4), "decode"),              // 15
    slot(Some(14), "min_replicas"),       // 16
    slot(Some(14), "max_replicas"),       // 17
    slot(Some(15), "min_replicas"),       // 18
    slot(Some(15), "max_replicas"),       // 19
]);

/// A value in checked text: a node of [`MOONCAKE_PLAN`] that the pass
/// recorded. Two words, so the rules pass their values around for free.
#[derive(Clone, Copy)]
pub(crate) struct Captured<'a, 'c> {
    caps: &'c Captures<'a>,
    node: usize,
}

impl<'a, 'c> Captured<'a, 'c> {
    /// The document of `caps`, which [`lazy::parse_captured`] has checked.
    pub(crate) fn root(caps: &'c Captures<'a>) -> Self {
        Captured {
            caps,
            node: lazy::ROOT,
        }
    }

    #[inline]
    fn value(self) -> Lazy<'a> {
        self.caps
            .get(self.node)
            .expect("a captured value was recorded")
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CapturedObject<'a, 'c>(Captured<'a, 'c>);

impl<'a, 'c> View for Captured<'a, 'c> {
    type Obj = CapturedObject<'a, 'c>;

    #[inline]
    fn as_object(self) -> Option<Self::Obj> {
        (self.value().kind() == Kind::Object).then_some(CapturedObject(self))
    }
    #[inline]
    fn is_null(self) -> bool {
        self.value().is_null()
    }
    #[inline]
    fn is_true(self) -> bool {
        self.value().is_true()
    }
    #[inline]
    fn is_str(self) -> bool {
        self.value().is_str()
    }
    #[inline]
    fn str_eq(self, s: &str) -> bool {
        self.value().str_eq(s)
    }
    #[inline]
    fn as_int(self) -> Option<Int> {
        View::as_int(self.value())
    }
    #[inline]
    fn byte_size_arg(&self) -> ByteSizeArg<'_> {
        lazy_byte_size_arg(self.value())
    }
    #[inline]
    fn repr(self) -> String {
        View::repr(self.value())
    }
}

impl<'a, 'c> ObjectView for CapturedObject<'a, 'c> {
    type V = Captured<'a, 'c>;

    /// The recorded members: the rules read only members the plan names
    /// (see [`MOONCAKE_PLAN`]), so there is nothing to scan for. Inline, so
    /// the keys are constants and each costs a compare or two.
    #[inline(always)]
    fn fields<const N: usize>(self, keys: [&str; N]) -> [Option<Self::V>; N] {
        let Captured { caps, node } = self.0;
        let mut found = [None; N];
        for (position, (out, key)) in found.iter_mut().zip(keys).enumerate() {
            let member = caps.plan().member(node, position, key).unwrap_or_else(|| {
                panic!("MOONCAKE_PLAN names every member the rules read, not {key:?}")
            });
            if caps.get(member).is_some() {
                *out = Some(Captured { caps, node: member });
            }
        }
        found
    }
}

#[cfg(test)]
#[test]
fn the_plan_names_every_member_the_rules_read() {
    // Every object the rules open is present, so each of their reads runs:
    // a member missing from the plan would panic.
    let text = include_str!("../../benches/inputs/full_valid.json");
    assert_eq!(super::validate_mooncake_json(text), Ok(Ok(())));
}
