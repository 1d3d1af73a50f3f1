//! What the rules need to read of a value, over a tree or over raw text.
//!
//! The rules are written once against [`View`]; [`Value`] serves the
//! collecting check and the builder, [`Lazy`] the fast fail-fast check of
//! JSON text, so both give the same verdict by construction.

use crate::bytesize::ByteSizeArg;
use crate::json::lazy::{Kind, Lazy, LazyObject};
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

    fn as_object(self) -> Option<LazyObject<'a>> {
        Lazy::as_object(&self)
    }
    fn is_null(self) -> bool {
        self.kind() == Kind::Null
    }
    fn is_true(self) -> bool {
        self.kind() == Kind::True
    }
    fn is_str(self) -> bool {
        matches!(self.kind(), Kind::Str { .. })
    }
    fn str_eq(self, s: &str) -> bool {
        Lazy::str_eq(&self, s)
    }
    fn as_int(self) -> Option<Int> {
        Lazy::as_int(&self)
    }
    fn byte_size_arg(&self) -> ByteSizeArg<'_> {
        match self.kind() {
            Kind::True => ByteSizeArg::Bool(true),
            Kind::False => ByteSizeArg::Bool(false),
            Kind::Int => ByteSizeArg::Int(Lazy::as_int(self).expect("an integer literal")),
            Kind::Str { escaped: false } => ByteSizeArg::Str(self.plain_str().expect("a plain string").into()),
            Kind::Str { escaped: true } => {
                let s = self.as_pystr().expect("a string");
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
