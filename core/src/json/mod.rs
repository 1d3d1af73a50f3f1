//! JSON as Python's `json` module reads and writes it.
//!
//! The reference validator sees JSON through `json.loads`, so parity needs
//! Python's data model, not serde_json's: integers exact at any size, a
//! number with a point or exponent is a float even when whole, `NaN` and
//! `Infinity` are accepted, duplicate keys keep the first position and the
//! last value, and strings may hold lone surrogates (`"\ud800"`).
//!
//! [`Value`] is that model. [`parse`] builds it from text, [`write`] prints
//! it back as `json.dumps` does.

pub(crate) mod float;
pub use float::float_repr;
mod int;
mod lex;
mod object;
mod parse;
mod pystr;
#[cfg(feature = "serde")]
mod serde_impl;
pub mod spans;
#[cfg(feature = "serde")]
mod to_value;
pub mod write;

pub use int::Int;
pub use lex::{JsonError, MAX_DEPTH};
pub use object::Object;
pub use parse::{parse, parse_limited};
pub use pystr::PyStr;
pub(crate) use pystr::push_code_point as pystr_push;
#[cfg(feature = "serde")]
pub use to_value::{ToValueError, to_value};

/// A JSON value with Python's semantics (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(Int),
    Float(f64),
    Str(PyStr),
    List(Vec<Value>),
    Object(Object),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(PyStr::from(s))
    }

    pub fn int(i: i64) -> Value {
        Value::Int(Int::Small(i))
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The text of a string without lone surrogates.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => s.as_str(),
            _ => None,
        }
    }

    /// A plain integer: Python's `isinstance(v, int) and not isinstance(v, bool)`.
    pub fn as_int(&self) -> Option<&Int> {
        match self {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Python's `value is True`.
    pub fn is_true(&self) -> bool {
        matches!(self, Value::Bool(true))
    }

    /// Python's truth value (`bool(value)`).
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => !i.is_zero(),
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Object(o) => !o.is_empty(),
        }
    }

    /// Python's `type(value).__name__` for the value `json.loads` makes.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Object(_) => "dict",
        }
    }

    /// The first string, key or value, that holds a lone surrogate: its path
    /// (`a.b[0]`, `""` for the value itself) and the string. Such text has
    /// no UTF-8 form, so a store of UTF-8 text (DynamoDB) cannot hold it.
    pub fn lone_surrogate(&self) -> Option<(String, &PyStr)> {
        let (path, found) =
            self.first_where(|v| matches!(v, Value::Str(s) if s.as_str().is_none()))?;
        match found {
            Value::Str(s) => Some((path, s)),
            _ => None,
        }
    }

    /// The first value, key or member (depth first, in order), that `wanted`
    /// picks, with its path (`a.b[0]`, `""` for the value itself; a key's
    /// path is the key's own).
    pub fn first_where(&self, wanted: impl Fn(&Value) -> bool) -> Option<(String, &Value)> {
        /// A step of the path, kept only on the way back from a find: a
        /// value without one costs no allocation.
        enum Step<'v> {
            Key(&'v Value),
            Index(usize),
        }
        fn walk<'v>(
            v: &'v Value,
            wanted: &dyn Fn(&Value) -> bool,
            steps: &mut Vec<Step<'v>>,
        ) -> Option<&'v Value> {
            if wanted(v) {
                return Some(v);
            }
            match v {
                Value::List(items) => items.iter().enumerate().find_map(|(i, item)| {
                    let found = walk(item, wanted, steps)?;
                    steps.push(Step::Index(i));
                    Some(found)
                }),
                Value::Object(o) => o.iter().find_map(|(k, v)| {
                    let found = if wanted(k) {
                        k
                    } else {
                        walk(v, wanted, steps)?
                    };
                    steps.push(Step::Key(k));
                    Some(found)
                }),
                _ => None,
            }
        }
        let mut steps = Vec::new();
        let found = walk(self, &wanted, &mut steps)?;
        let mut path = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Index(i) => path.push_str(&format!("[{i}]")),
                Step::Key(key) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    match key {
                        Value::Str(k) => path.push_str(&k.to_str_lossy()),
                        other => path.push_str(&other.repr()),
                    }
                }
            }
        }
        Some((path, found))
    }

    /// Indented JSON for people (`json.dumps(value, indent=2)`, ASCII only).
    pub fn to_json_pretty(&self) -> String {
        write::pretty(self)
    }

    /// `json.dumps(value)` with its default settings.
    pub fn to_json(&self) -> String {
        write::dumps(self)
    }

    /// The value with the keys of every object in it sorted (string keys by
    /// their text, then any others by their JSON). A DynamoDB map keeps no
    /// order: this is how a read of the table gives a map back, and how two
    /// values that may have crossed the table compare.
    pub fn with_sorted_keys(&self) -> Value {
        match self {
            Value::List(items) => Value::List(items.iter().map(Value::with_sorted_keys).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(Value, Value)> = map
                    .iter()
                    .map(|(k, v)| (k.clone(), v.with_sorted_keys()))
                    .collect();
                entries.sort_by_cached_key(|(k, _)| match k {
                    Value::Str(text) => (false, text.to_string_lossy()),
                    other => (true, other.to_json()),
                });
                Value::Object(Object::from_pairs(entries))
            }
            other => other.clone(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(PyStr::from(s))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::int(i)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Value {
        Value::Object(o)
    }
}

impl From<Vec<Value>> for Value {
    fn from(l: Vec<Value>) -> Value {
        Value::List(l)
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn finds_the_first_lone_surrogate_with_its_path() {
        let found = |text: &str| {
            parse(text)
                .unwrap()
                .lone_surrogate()
                .map(|(path, s)| (path, s.code_points().collect::<Vec<_>>()))
        };
        assert_eq!(found(r#"{"a": [1, {"b": "ok"}], "c": "\u00e9"}"#), None);
        assert_eq!(found(r#""\ud800""#), Some((String::new(), vec![0xD800])));
        assert_eq!(
            found(r#"{"a": [1, {"b": "x\udc00"}], "c": "\ud800"}"#),
            Some(("a[1].b".to_owned(), vec![0x78, 0xDC00]))
        );
        assert_eq!(
            found(r#"{"env": {"\ud800": "x"}}"#),
            Some(("env.\u{FFFD}".to_owned(), vec![0xD800]))
        );
    }
}
