//! serde for [`Value`], for crossing into JS (serde-wasm-bindgen) and typed
//! structs. Text stays the exact path: serde's data model has no integers
//! beyond 128 bits, so those travel as floats here.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Int, Object, Value};

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            // Beyond 2^53 a JS number would round: i128 is what
            // serde-wasm-bindgen makes a BigInt (other formats print it as is).
            Value::Int(Int::Small(i)) if i.unsigned_abs() <= MAX_SAFE_INTEGER => {
                s.serialize_i64(*i)
            }
            Value::Int(Int::Small(i)) => s.serialize_i128(i128::from(*i)),
            Value::Int(Int::Big(t)) => match t.parse::<i128>() {
                Ok(i) => s.serialize_i128(i),
                Err(_) => s.serialize_f64(super::float::parse_float(t)),
            },
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(p) => s.serialize_str(&p.to_string_lossy()),
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(o) => o.serialize(s),
        }
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            match k {
                Value::Str(key) => map.serialize_entry(&key.to_string_lossy(), v)?,
                other => map.serialize_entry(&other.to_json(), v)?,
            }
        }
        map.end()
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::int(i))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Int(
            Int::from_decimal(&u.to_string()).expect("digits"),
        ))
    }
    fn visit_i128<E>(self, i: i128) -> Result<Value, E> {
        Ok(Value::Int(
            Int::from_decimal(&i.to_string()).expect("digits"),
        ))
    }
    fn visit_u128<E>(self, u: u128) -> Result<Value, E> {
        Ok(Value::Int(
            Int::from_decimal(&u.to_string()).expect("digits"),
        ))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::str(s))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::from(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut pairs = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            pairs.push((Value::from(k), v));
        }
        Ok(Value::Object(Object::from_pairs(pairs)))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Object {
    // `deserialize_map`, not `_any`: serde's `flatten` can only hand over maps.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Object, D::Error> {
        match d.deserialize_map(ValueVisitor)? {
            Value::Object(o) => Ok(o),
            other => Err(de::Error::custom(format!(
                "expected an object, got {}",
                other.type_name()
            ))),
        }
    }
}

/// Reading typed structs from a [`Value`].
impl<'de> Deserializer<'de> for &'de Value {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(Int::Small(i)) => visitor.visit_i64(*i),
            Value::Int(Int::Big(t)) => match t.parse::<i128>() {
                Ok(i) => visitor.visit_i128(i),
                Err(_) => Err(de::Error::custom(format!("integer {t} is too large"))),
            },
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_string(s.to_string_lossy()),
            Value::List(items) => visitor.visit_seq(de::value::SeqDeserializer::new(items.iter())),
            Value::Object(o) => visitor
                .visit_map(de::value::MapDeserializer::new(o.iter().map(|(k, v)| {
                    (k.as_str().map_or_else(|| k.to_json(), str::to_owned), v)
                }))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            Value::Str(s) => {
                visitor.visit_enum(de::value::StringDeserializer::new(s.to_string_lossy()))
            }
            other => Err(de::Error::custom(format!(
                "expected a string, got {}",
                other.repr()
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

impl<'de> de::IntoDeserializer<'de, de::value::Error> for &'de Value {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_2_pow_53_keep_every_digit() {
        // i128 for serde-wasm-bindgen's BigInts; formats such as JSON print it as is.
        for i in [(1i64 << 53) - 1, 1 << 53, i64::MAX, i64::MIN, -(1 << 53)] {
            assert_eq!(
                serde_json::to_string(&Value::int(i)).unwrap(),
                i.to_string()
            );
        }
    }

    #[test]
    fn integers_beyond_i128_travel_as_the_nearest_float() {
        // Through json::float::parse_float, the wasm builds' JS parseFloat.
        let beyond = format!("-{}", "9".repeat(40));
        let v = crate::json::parse(&beyond).unwrap();
        assert_eq!(serde_json::to_value(&v).unwrap().as_f64(), Some(-1e40));
        let within = i128::MAX.to_string();
        let v = crate::json::parse(&within).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), within);
    }
}
