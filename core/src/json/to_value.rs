//! [`to_value`]: a typed body (a `Serialize` struct) as a [`Value`], so that
//! the core's writer prints it as it prints everything else.

use serde::ser::{self, Serialize};

use super::{Int, Object, Value};

/// Why a value has no JSON form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToValueError(String);

impl std::fmt::Display for ToValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToValueError {}

impl ser::Error for ToValueError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ToValueError(msg.to_string())
    }
}

/// `value` as JSON. Integers are exact through 128 bits, which covers every
/// number a record can hold (38 digits: `table::NUMBER_MAX_DIGITS`); map
/// keys must be strings; enums are written as serde_json writes them.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ToValueError> {
    value.serialize(ValueSerializer)
}

struct ValueSerializer;

fn int(i: i128) -> Value {
    match i64::try_from(i) {
        Ok(small) => Value::int(small),
        Err(_) => Value::Int(Int::from_decimal(&i.to_string()).expect("decimal digits")),
    }
}

fn one_entry(key: &str, value: Value) -> Value {
    let mut o = Object::new();
    o.insert(key, value);
    Value::Object(o)
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = ToValueError;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Variant<Seq>;
    type SerializeMap = Map;
    type SerializeStruct = Map;
    type SerializeStructVariant = Variant<Map>;

    fn serialize_bool(self, v: bool) -> Result<Value, ToValueError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, ToValueError> {
        Ok(int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, ToValueError> {
        Ok(int(v.into()))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, ToValueError> {
        Ok(Value::Int(
            Int::from_decimal(&v.to_string()).expect("decimal digits"),
        ))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, ToValueError> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, ToValueError> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, ToValueError> {
        Ok(Value::str(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<Value, ToValueError> {
        Ok(Value::str(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, ToValueError> {
        Ok(Value::List(v.iter().map(|b| int((*b).into())).collect()))
    }
    fn serialize_none(self) -> Result<Value, ToValueError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, ToValueError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, ToValueError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, ToValueError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, ToValueError> {
        Ok(Value::str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Value, ToValueError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, ToValueError> {
        Ok(one_entry(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, ToValueError> {
        Ok(Seq(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, ToValueError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq, ToValueError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq>, ToValueError> {
        Ok(Variant(variant, self.serialize_seq(Some(len))?))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map, ToValueError> {
        Ok(Map(Object::new(), None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Map, ToValueError> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Variant<Map>, ToValueError> {
        Ok(Variant(variant, self.serialize_map(None)?))
    }
}

struct Seq(Vec<Value>);

impl ser::SerializeSeq for Seq {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToValueError> {
        self.0.push(to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, ToValueError> {
        Ok(Value::List(self.0))
    }
}

impl ser::SerializeTuple for Seq {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, ToValueError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Seq {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, ToValueError> {
        ser::SerializeSeq::end(self)
    }
}

/// A map or struct, and the key waiting for its value.
struct Map(Object, Option<String>);

impl ser::SerializeMap for Map {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ToValueError> {
        match to_value(key)? {
            Value::Str(s) => self.1 = Some(s.to_string_lossy()),
            other => {
                return Err(ToValueError(format!(
                    "a JSON key must be a string, got {}",
                    other.to_json()
                )));
            }
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToValueError> {
        let key = self.1.take().expect("serde gives a key before its value");
        self.0.insert(&key, to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, ToValueError> {
        Ok(Value::Object(self.0))
    }
}

impl ser::SerializeStruct for Map {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToValueError> {
        self.0.insert(key, to_value(v)?);
        Ok(())
    }
    fn end(self) -> Result<Value, ToValueError> {
        Ok(Value::Object(self.0))
    }
}

/// An enum's variant with content: `{"variant": content}`.
struct Variant<T>(&'static str, T);

impl ser::SerializeTupleVariant for Variant<Seq> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToValueError> {
        ser::SerializeSeq::serialize_element(&mut self.1, v)
    }
    fn end(self) -> Result<Value, ToValueError> {
        Ok(one_entry(self.0, ser::SerializeSeq::end(self.1)?))
    }
}

impl ser::SerializeStructVariant for Variant<Map> {
    type Ok = Value;
    type Error = ToValueError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToValueError> {
        ser::SerializeStruct::serialize_field(&mut self.1, key, v)
    }
    fn end(self) -> Result<Value, ToValueError> {
        Ok(one_entry(self.0, ser::SerializeStruct::end(self.1)?))
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;
    use crate::json::parse;

    #[derive(Serialize)]
    struct Body<'a> {
        name: &'a str,
        count: u64,
        wide: i128,
        ratio: f64,
        missing: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        left_out: Option<u8>,
        list: Vec<&'a str>,
        spec: Value,
        kind: Kind,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Plain,
    }

    #[test]
    fn a_struct_is_the_value_its_json_parses_to() {
        let spec =
            parse(r#"{"port": 8000, "big": 12345678901234567890123456789012345678}"#).unwrap();
        let body = Body {
            name: "a",
            count: u64::MAX,
            wide: -(1 << 100),
            ratio: 0.5,
            missing: None,
            left_out: None,
            list: vec!["x", "y"],
            spec: spec.clone(),
            kind: Kind::Plain,
        };
        let expected = format!(
            r#"{{"name": "a", "count": {}, "wide": {}, "ratio": 0.5, "missing": null, "list": ["x", "y"], "spec": {}, "kind": "plain"}}"#,
            u64::MAX,
            -(1i128 << 100),
            spec.to_json()
        );
        assert_eq!(to_value(&body).unwrap(), parse(&expected).unwrap());
    }

    #[test]
    fn a_key_that_is_no_string_is_refused() {
        let map: std::collections::BTreeMap<u8, u8> = [(1, 2)].into();
        assert!(to_value(&map).unwrap_err().0.contains("must be a string"));
    }
}
