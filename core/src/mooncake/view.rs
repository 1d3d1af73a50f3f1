//! What the rules need to read of a value, over a tree or over raw text.
//!
//! The rules are written once against [`View`]; [`Value`] serves the
//! collecting check and the builder, [`Captured`] (text checked in one pass
//! that records the members the rules read) the fast fail-fast check of JSON
//! text, so both give the same verdict by construction.

use crate::bytesize::ByteSizeArg;
use crate::json::lazy::{self, CapturePlan, CaptureSlot, Captures, Kind, Lazy, LazyObject};
use crate::json::{Int, Object, PyStr, Value};

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
    fn is_empty(self) -> bool;
    /// The keys not in `known`, in the dict's order (a repeated key once).
    /// Keys that are not strings (a dict built from pairs) are left out.
    fn unknown_keys(self, known: &[&str]) -> Vec<PyStr>;
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
    fn is_empty(self) -> bool {
        Object::is_empty(self)
    }
    fn unknown_keys(self, known: &[&str]) -> Vec<PyStr> {
        self.str_entries()
            .filter(|(k, _)| !k.as_str().is_some_and(|k| known.contains(&k)))
            .map(|(k, _)| k.clone())
            .collect()
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
    fn is_empty(self) -> bool {
        LazyObject::is_empty(&self)
    }
    fn unknown_keys(self, known: &[&str]) -> Vec<PyStr> {
        LazyObject::unknown_keys(&self, known)
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

/// The members `rules::check` and `lint` read, by path, so one pass over the
/// text can record them, each object's in the order they ask for them.
/// Every member they read must be here (the fast path panics on one that is
/// not): the rule and lint tests run every branch on both paths, and the
/// test below reads every object's members.
const MOONCAKE_SLOTS: [CaptureSlot; 23] = lazy::slots_by_path([
    "mode",
    "store",
    "transfer",
    "topology",
    "autoscaling",
    "proxy",
    "store.global_segment_size",
    "store.local_buffer_size",
    "store.cold_tier_enabled",
    "store.enabled",
    "store.offload",
    "transfer.protocol",
    "transfer.device_name",
    "topology.prefill",
    "topology.decode",
    "autoscaling.enabled",
    "autoscaling.prefill",
    "autoscaling.decode",
    "proxy.scheduling",
    "autoscaling.prefill.min_replicas",
    "autoscaling.prefill.max_replicas",
    "autoscaling.decode.min_replicas",
    "autoscaling.decode.max_replicas",
]);

pub(crate) static MOONCAKE_PLAN: CapturePlan = CapturePlan::new(&MOONCAKE_SLOTS);

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
    fn is_empty(self) -> bool {
        self.lazy().is_empty()
    }
    fn unknown_keys(self, known: &[&str]) -> Vec<PyStr> {
        self.lazy().unknown_keys(known)
    }
}

impl<'a> CapturedObject<'a, '_> {
    /// The object in the text, for what the plan does not record: its keys.
    fn lazy(self) -> LazyObject<'a> {
        self.0.value().as_object().expect("a captured object")
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

#[cfg(test)]
#[test]
fn the_text_check_gives_the_tree_checks_diagnostics() {
    use super::{check_mooncake, check_mooncake_json};
    let cases = [
        include_str!("../../benches/inputs/full_valid.json"),
        include_str!("../../benches/inputs/full_invalid_late.json"),
        r#"{"mode": "store", "topology": {"prefill": 1, "decode": 1, "prefil": 2}}"#,
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 0}, "x": 1, "x": 2, "y": 3}"#,
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "m\u006fde": "store", "\ud800": 1}"#,
        r#"{"mode": "store", "store": {"offload": "tape", "global_segment_size": "4GiB", "sizee": 1}}"#,
        r#"{"mode": "store", "store": {"offload": ["cpu"]}, "proxy": {"scheduling": "random", "imag": "x"}}"#,
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "proxy": {"scheduling": "round_robin"}}"#,
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"prefill": {}, "decode": {"min_replicas": 2, "metric": 1}}}"#,
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"enabled": true, "prefill": {"min_replicas": 3, "max_replicas": 2}}}"#,
        r#"{"mode": "both", "proxy": 5, "store": [], "autoscaling": {"prefill": 1}}"#,
        r#"{"mode": "disaggregated", "transfer": {"protocol": "udp", "devices": 1}}"#,
        r#"[]"#,
        r#"{}"#,
    ];
    for text in cases {
        let tree = check_mooncake(&crate::json::parse(text).unwrap());
        assert_eq!(check_mooncake_json(text), Ok(tree), "{text}");
    }
}
