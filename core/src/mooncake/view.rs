//! What the rules need to read of a value.

use crate::bytesize::ByteSizeArg;
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
