//! Python `dict` semantics over an insertion-ordered list of entries.

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
/// use an index of their keys, so a hostile object with many keys stays linear.
/// A deploy request has up to 28 keys: scanning them (at most 378 short
/// comparisons) is cheaper than hashing each key into an index.
const LINEAR_DEDUP_LIMIT: usize = 32;

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    /// Builds a dict from pairs in order, as `dict(pairs)` does.
    pub fn from_pairs(pairs: Vec<(Value, Value)>) -> Object {
        if pairs.len() <= LINEAR_DEDUP_LIMIT {
            // Keys are almost always distinct: then the pairs are the
            // entries as they stand, with no second vector.
            if !has_repeated_key(&pairs) {
                return Object { entries: pairs };
            }
            let mut obj = Object {
                entries: Vec::with_capacity(pairs.len()),
            };
            for (k, v) in pairs {
                obj.insert_value_key(k, v);
            }
            return obj;
        }
        let mut index = KeyIndex::default();
        let mut entries: Vec<(Value, Value)> = Vec::with_capacity(pairs.len());
        for (serial, (k, v)) in pairs.into_iter().enumerate() {
            match index.find_or_insert(key_id(&k, serial), entries.len()) {
                Some(at) => entries[at].1 = v,
                None => entries.push((k, v)),
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

    /// The values of `keys` (present ones, `null` included).
    pub(crate) fn fields<const N: usize>(&self, keys: [&str; N]) -> [Option<&Value>; N] {
        keys.map(|key| self.get(key))
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

    /// Moves the value of `key` out, leaving `None` (null) under the key:
    /// unlike [`Object::remove`], nothing after it shifts. For an object
    /// that is being taken apart.
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.get_mut(key).map(|v| std::mem::replace(v, Value::Null))
    }

    /// The entries, in order, for taking the object apart.
    pub(crate) fn into_entries(self) -> Vec<(Value, Value)> {
        self.entries
    }

    /// Appends an entry whose key the caller knows is not present (an
    /// object being built in a fixed key order), without a search.
    pub(crate) fn push_new(&mut self, key: Value, value: Value) {
        debug_assert!(
            !self.entries.iter().any(|(k, _)| py_key_eq(k, &key)),
            "{key:?} is already present"
        );
        self.entries.push((key, value));
    }

    pub(crate) fn with_capacity(capacity: usize) -> Object {
        Object {
            entries: Vec::with_capacity(capacity),
        }
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

/// Whether two of the keys are equal. Each string key sets one bit of a
/// 64-bit filter chosen by its length and end bytes; only a key whose bit is
/// already set is compared with the keys before it, so distinct keys (the
/// usual case) cost one pass instead of a comparison per pair.
fn has_repeated_key(pairs: &[(Value, Value)]) -> bool {
    let mut seen = 0u64;
    pairs.iter().enumerate().any(|(i, (key, _))| {
        if let Value::Str(s) = key {
            let b = s.as_bytes();
            let spread = b.len()
                ^ usize::from(b.first().copied().unwrap_or(0)) << 1
                ^ usize::from(b.last().copied().unwrap_or(0)) << 3;
            let bit = 1u64 << (spread % 64);
            let fresh = seen & bit == 0;
            seen |= bit;
            if fresh {
                return false;
            }
        }
        pairs[..i].iter().any(|(k, _)| py_key_eq(k, key))
    })
}

/// Python `==` between two hashable JSON values (`1 == 1.0 == True`).
fn py_key_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Parsed JSON: every key a string.
        (Value::Str(a), Value::Str(b)) => a == b,
        // Distinct serials keep unhashables unequal to everything.
        _ => key_id(a, 0) == key_id(b, 1),
    }
}

/// What Python's hash-and-compare sees of a key, as bytes that are equal
/// exactly when the keys are: numbers by value across int, float and bool
/// (the decimal text of the integer they are, when they are one). NaN is
/// never equal to itself, but `json.loads` returns one shared NaN object and
/// dict lookups compare identity first, so all parsed NaN keys are the same
/// key. Bytes rather than an enum: comparing and ordering them is a
/// `memcmp`, which keeps the wasm build small.
fn key_id(v: &Value, serial: usize) -> Vec<u8> {
    let mut id = Vec::new();
    let int = match v {
        Value::Bool(b) => Int::Small(i64::from(*b)),
        Value::Int(i) => i.clone(),
        Value::Float(f) if f.fract() == 0.0 && f.is_finite() => integral_float(*f),
        other => {
            match other {
                Value::Str(s) => {
                    id.push(b'S');
                    id.extend_from_slice(s.as_bytes());
                }
                Value::Float(f) if f.is_nan() => id.push(b'n'),
                Value::Float(f) => {
                    id.push(b'F');
                    id.extend_from_slice(&f.to_bits().to_le_bytes());
                }
                // Lists and dicts are unhashable; the builder refuses them before here.
                Value::List(_) | Value::Object(_) => {
                    id.push(b'U');
                    id.extend_from_slice(&serial.to_le_bytes());
                }
                _ => id.push(b'N'),
            }
            return id;
        }
    };
    id.push(b'I');
    id.extend_from_slice(int.to_string().as_bytes());
    id
}

/// Where each key of a large object went (by [`key_id`]): std's `HashMap`
/// natively.
#[cfg(not(all(target_arch = "wasm32", feature = "js-builtins")))]
#[derive(Default)]
struct KeyIndex(std::collections::HashMap<Vec<u8>, usize>);

#[cfg(not(all(target_arch = "wasm32", feature = "js-builtins")))]
impl KeyIndex {
    /// The entry of the key `id` when it has one; else `None`, and the key
    /// is recorded as going to entry `at`.
    fn find_or_insert(&mut self, id: Vec<u8>, at: usize) -> Option<usize> {
        use std::collections::hash_map::Entry;
        match self.0.entry(id) {
            Entry::Occupied(e) => Some(*e.get()),
            Entry::Vacant(e) => {
                e.insert(at);
                None
            }
        }
    }
}

/// In the wasm builds (`js-builtins`), a JS `Map` keyed by the id's bytes as a Latin-1
/// string: the engine's hashing, none in the module (a HashMap is about 1 KB
/// of the gzipped package).
#[cfg(all(target_arch = "wasm32", feature = "js-builtins"))]
struct KeyIndex(js_sys::Map);

#[cfg(all(target_arch = "wasm32", feature = "js-builtins"))]
impl Default for KeyIndex {
    fn default() -> KeyIndex {
        KeyIndex(js_sys::Map::new())
    }
}

#[cfg(all(target_arch = "wasm32", feature = "js-builtins"))]
impl KeyIndex {
    fn find_or_insert(&mut self, id: Vec<u8>, at: usize) -> Option<usize> {
        use wasm_bindgen::JsValue;
        let key: String = id.into_iter().map(char::from).collect();
        let key = JsValue::from_str(&key);
        let found = self.0.get(&key).as_f64();
        if found.is_none() {
            self.0.set(&key, &JsValue::from_f64(at as f64));
        }
        found.map(|at| at as usize)
    }
}

/// The exact integer a finite whole float is (`int(f)`; Python compares a
/// float key with ints by that value), without float formatting.
fn integral_float(f: f64) -> Int {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_63..TWO_63).contains(&f) {
        return Int::Small(f as i64);
    }
    // |f| >= 2^63: mantissa * 2^exp with exp > 0. Decimal digits, least
    // significant first, doubled exp times.
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7FF) as u32 - 1075;
    let mut mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let mut digits = Vec::with_capacity(310);
    while mantissa > 0 {
        digits.push((mantissa % 10) as u8);
        mantissa /= 10;
    }
    for _ in 0..exp {
        let mut carry = 0;
        for d in digits.iter_mut() {
            let twice = *d * 2 + carry;
            *d = twice % 10;
            carry = twice / 10;
        }
        if carry > 0 {
            digits.push(carry);
        }
    }
    let mut text = String::with_capacity(digits.len() + 1);
    if f < 0.0 {
        text.push('-');
    }
    text.extend(digits.iter().rev().map(|d| (b'0' + d) as char));
    Int::from_decimal(&text).unwrap_or(Int::Small(0))
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
        assert_eq!(
            o.iter()
                .map(|(k, v)| (k.repr(), v.repr()))
                .collect::<Vec<_>>(),
            [("'a'".into(), "3".into()), ("'b'".into(), "2".into())]
        );
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
    fn whole_floats_are_their_exact_integers() {
        let int = |t: &str| Int::from_decimal(t).unwrap();
        assert_eq!(integral_float(0.0), Int::Small(0));
        assert_eq!(integral_float(-0.0), Int::Small(0));
        assert_eq!(integral_float(-3.0), Int::Small(-3));
        assert_eq!(integral_float(9007199254740992.0), Int::Small(1 << 53));
        assert_eq!(integral_float(-9223372036854775808.0), Int::Small(i64::MIN));
        assert_eq!(
            integral_float(9223372036854775808.0),
            int("9223372036854775808")
        );
        // 1e23 is not 10**23 as a float: Python's 1e23 == 99999999999999991611392.
        assert_eq!(integral_float(1e23), int("99999999999999991611392"));
        assert_eq!(integral_float(-1e23), int("-99999999999999991611392"));
        assert_eq!(
            integral_float(2f64.powi(100)),
            int("1267650600228229401496703205376")
        );
        assert_eq!(
            integral_float(f64::MAX).to_string(),
            concat!(
                "17976931348623157081452742373170435679807056752584499659891747680315726078002853876058955863276687817154",
                "04589535143824642343213268894641827684675467035375169860499105765512820762454900903893289440758685084551",
                "33942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"
            )
        );
    }

    #[test]
    fn float_keys_equal_ints_by_exact_value() {
        let o = Object::from_pairs(vec![
            (Value::Float(1e23), Value::str("float")),
            (
                Value::Int(Int::from_decimal("100000000000000000000000").unwrap()),
                Value::str("10**23"),
            ),
            (
                Value::Int(Int::from_decimal("99999999999999991611392").unwrap()),
                Value::str("int"),
            ),
        ]);
        assert_eq!(
            Value::Object(o).repr(),
            "{1e+23: 'int', 100000000000000000000000: '10**23'}"
        );
    }

    #[test]
    fn large_objects_keep_python_dict_order() {
        let key = |i: i64| match i % 4 {
            0 => Value::int(i % 10),
            1 => Value::Float((i % 10) as f64),
            2 => Value::Bool(i % 10 == 1),
            _ => Value::str(&format!("k{}", i % 10)),
        };
        let pairs: Vec<(Value, Value)> = (0..60).map(|i| (key(i), Value::int(i))).collect();
        // The same dict through the linear path, a limit's worth at a time.
        let mut linear = Object::new();
        for chunk in pairs.chunks(LINEAR_DEDUP_LIMIT) {
            for (k, v) in Object::from_pairs(chunk.to_vec()).iter() {
                linear.insert_value_key(k.clone(), v.clone());
            }
        }
        assert_eq!(Object::from_pairs(pairs), linear);
    }

    #[test]
    fn large_objects_dedup_by_index() {
        let mut pairs: Vec<(Value, Value)> = (0..100)
            .map(|i| (Value::str(&format!("k{}", i % 40)), Value::int(i)))
            .collect();
        pairs.push((Value::str("k0"), Value::Null));
        let o = Object::from_pairs(pairs);
        assert_eq!(o.len(), 40);
        assert_eq!(o.get("k0"), Some(&Value::Null));
        assert_eq!(o.get("k39"), Some(&Value::int(79)));
    }

    #[test]
    fn repeated_keys_are_found_whatever_their_filter_bits() {
        // 30 distinct keys: more than 64 bits can keep apart with their
        // lengths and end bytes, so many share a bit.
        let keys: Vec<Value> = (0..30)
            .map(|i| Value::str(&format!("{}{}", "k".repeat(i % 5), i)))
            .collect();
        let pairs = |keys: &[Value]| -> Vec<(Value, Value)> {
            keys.iter().map(|k| (k.clone(), Value::Null)).collect()
        };
        assert!(!has_repeated_key(&pairs(&keys)));
        for at in 0..keys.len() {
            let mut with_repeat = keys.clone();
            with_repeat.push(keys[at].clone());
            assert!(has_repeated_key(&pairs(&with_repeat)), "{at}");
            with_repeat.insert(at + 1, Value::int(7));
            with_repeat.push(Value::Bool(false));
            assert!(has_repeated_key(&pairs(&with_repeat)), "{at}");
        }
        assert!(has_repeated_key(&pairs(&[
            Value::int(1),
            Value::Bool(true)
        ])));
    }

    #[test]
    fn take_leaves_null_and_keeps_the_order() {
        let mut o = Object::from_pairs(vec![
            (Value::str("a"), Value::int(1)),
            (Value::str("b"), Value::int(2)),
        ]);
        assert_eq!(o.take("a"), Some(Value::int(1)));
        assert_eq!(o.take("c"), None);
        assert_eq!(Value::Object(o).repr(), "{'a': None, 'b': 2}");
    }
}
