//! Python `dict` semantics over an insertion-ordered list of entries.

use std::collections::HashMap;

use super::{Int, Value};

/// A JSON object as Python's `dict`: insertion order, and a repeated key keeps
/// its first position with its last value. Keys are strings for parsed JSON;
/// `dict()` over a list of pairs (the reference's builder does that) can also
/// give numbers, booleans and `None` as keys, compared as Python compares them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    entries: Vec<(Value, Value)>,
}

/// Objects up to this size find duplicate keys by a linear scan; larger ones
/// use a hash index, so a hostile object with many keys stays linear.
const LINEAR_DEDUP_LIMIT: usize = 16;

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    /// Builds a dict from pairs in order, as `dict(pairs)` does.
    pub fn from_pairs(pairs: Vec<(Value, Value)>) -> Object {
        if pairs.len() <= LINEAR_DEDUP_LIMIT {
            let mut obj = Object { entries: Vec::with_capacity(pairs.len()) };
            for (k, v) in pairs {
                obj.insert_value_key(k, v);
            }
            return obj;
        }
        let mut index: HashMap<KeyId, usize> = HashMap::with_capacity(pairs.len());
        let mut entries: Vec<(Value, Value)> = Vec::with_capacity(pairs.len());
        for (serial, (k, v)) in pairs.into_iter().enumerate() {
            let id = KeyId::of(&k, serial);
            match index.get(&id) {
                Some(&at) => entries[at].1 = v,
                None => {
                    index.insert(id, entries.len());
                    entries.push((k, v));
                }
            }
        }
        Object { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The string keys and their values (other keys skipped).
    pub fn str_entries(&self) -> impl Iterator<Item = (&super::PyStr, &Value)> {
        self.entries.iter().filter_map(|(k, v)| match k {
            Value::Str(s) => Some((s, v)),
            _ => None,
        })
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// `d[key] = value`: replaces in place or appends.
    pub fn insert(&mut self, key: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.position(key) {
            Some(i) => self.entries[i].1 = value,
            None => self.entries.push((Value::str(key), value)),
        }
    }

    /// `d.setdefault(key, value)`.
    pub fn set_default(&mut self, key: &str, value: impl Into<Value>) {
        if !self.contains_key(key) {
            self.entries.push((Value::str(key), value.into()));
        }
    }

    /// `d.pop(key, None)`, keeping the order of the rest.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).map(|i| self.entries.remove(i).1)
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|(k, _)| matches!(k, Value::Str(s) if s.eq_str(key)))
    }

    fn insert_value_key(&mut self, key: Value, value: Value) {
        match self.entries.iter().position(|(k, _)| py_key_eq(k, &key)) {
            Some(i) => self.entries[i].1 = value,
            None => self.entries.push((key, value)),
        }
    }
}

/// Python `==` between two hashable JSON values (`1 == 1.0 == True`).
fn py_key_eq(a: &Value, b: &Value) -> bool {
    // Distinct serials keep unhashables unequal to everything.
    KeyId::of(a, 0) == KeyId::of(b, 1)
}

/// What Python's hash-and-compare sees of a key: numbers by value across int,
/// float and bool. NaN is never equal to itself, but `json.loads` returns one
/// shared NaN object and dict lookups compare identity first, so all parsed
/// NaN keys are the same key.
#[derive(PartialEq, Eq, Hash)]
enum KeyId {
    None,
    Str(Box<[u8]>),
    Int(Int),
    Float(u64),
    NaN,
    /// Lists and dicts are unhashable; the builder refuses them before here.
    Unhashable(usize),
}

impl KeyId {
    fn of(v: &Value, serial: usize) -> KeyId {
        match v {
            Value::Null => KeyId::None,
            Value::Str(s) => KeyId::Str(s.as_bytes().into()),
            Value::Bool(b) => KeyId::Int(Int::Small(*b as i64)),
            Value::Int(i) => KeyId::Int(i.clone()),
            Value::Float(f) if f.is_nan() => KeyId::NaN,
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => {
                KeyId::Int(Int::from_decimal(&format!("{f:.0}")).unwrap_or(Int::Small(0)))
            }
            Value::Float(f) => KeyId::Float(f.to_bits()),
            Value::List(_) | Value::Object(_) => KeyId::Unhashable(serial),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_position_last_value() {
        let o = Object::from_pairs(vec![
            (Value::str("a"), Value::int(1)),
            (Value::str("b"), Value::int(2)),
            (Value::str("a"), Value::int(3)),
        ]);
        assert_eq!(o.iter().map(|(k, v)| (k.repr(), v.repr())).collect::<Vec<_>>(), [
            ("'a'".into(), "3".into()),
            ("'b'".into(), "2".into())
        ]);
    }

    #[test]
    fn numeric_keys_compare_as_python() {
        let o = Object::from_pairs(vec![
            (Value::int(1), Value::str("x")),
            (Value::Bool(true), Value::str("y")),
            (Value::Float(1.0), Value::str("z")),
            (Value::Float(f64::NAN), Value::Null),
            (Value::Float(f64::NAN), Value::Bool(false)),
        ]);
        assert_eq!(o.len(), 2);
        assert_eq!(Value::Object(o).repr(), "{1: 'z', nan: False}");
    }

    #[test]
    fn large_objects_dedup_by_index() {
        let mut pairs: Vec<(Value, Value)> =
            (0..100).map(|i| (Value::str(&format!("k{}", i % 40)), Value::int(i))).collect();
        pairs.push((Value::str("k0"), Value::Null));
        let o = Object::from_pairs(pairs);
        assert_eq!(o.len(), 40);
        assert_eq!(o.get("k0"), Some(&Value::Null));
        assert_eq!(o.get("k39"), Some(&Value::int(79)));
    }
}
