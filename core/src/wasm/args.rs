//! The package's arguments. [`JsDeserializer`] reads a JS value as serde
//! reads data: into the core's JSON model (`validate`'s reading of a
//! block), or into an options type, the same type its TypeScript
//! declaration comes from, so each option name is written once.
//!
//! Not serde-wasm-bindgen's deserializer (the answers go out through its
//! serializer): it reads past keys a struct has no field for, follows a
//! cyclic value until the stack runs out, takes a `Map` for an object, and
//! its errors print floats with Rust's float formatting; reading the
//! document options with it made the package 13 KB larger gzipped.
//!
//! A struct is read as serde reads one from a sequence (as postcard and
//! bincode do): its values in field order, so the derived code matches no
//! keys; the keys are checked against the field names serde gives.

use std::fmt;

use js_sys::{Array, ArrayIntoIter, Object, Reflect, Symbol};
use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use wasm_bindgen::{JsCast, JsValue};

use crate::json::MAX_DEPTH;

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JS argument for serde to read.
///
/// As JSON: a JS number that is a safe integer is an int, any other a float
/// (JS cannot tell `2.0` from `2`); a BigInt within 64 bits is an int;
/// `null` and `undefined` are `None`; arrays are lists, and other objects
/// dicts of their own enumerable string keys, except iterables (`Map`,
/// `Set`, typed arrays), which are refused, as are values nested deeper than
/// the text parser accepts (which also stops cycles): the core's checks are
/// written for what `json::parse` can produce.
///
/// As a struct, an options object: an option set to `undefined` is one not
/// given, `null` is a value (the reference's `None`), a key the struct has
/// no field for is refused, and an error in a value names its option.
pub struct JsDeserializer {
    value: JsValue,
    depth: usize,
}

impl JsDeserializer {
    pub fn new(value: JsValue) -> Self {
        JsDeserializer { value, depth: 0 }
    }
}

impl<'de> Deserializer<'de> for JsDeserializer {
    type Error = Misuse;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Misuse> {
        let JsDeserializer { value, depth } = self;
        // `null` or `undefined`.
        if value.loose_eq(&JsValue::NULL) {
            return visitor.visit_unit();
        }
        if let Some(b) = value.as_bool() {
            return visitor.visit_bool(b);
        }
        if let Some(f) = value.as_f64() {
            return if f.fract() == 0.0 && f.abs() <= MAX_SAFE {
                visitor.visit_i64(f as i64)
            } else {
                visitor.visit_f64(f)
            };
        }
        if let Some(s) = value.as_string() {
            return visitor.visit_string(s);
        }
        if value.is_bigint() {
            return match i64::try_from(value) {
                Ok(i) => visitor.visit_i64(i),
                Err(value) => match u64::try_from(value) {
                    Ok(u) => visitor.visit_u64(u),
                    Err(_) => Err(Misuse::new(
                        "a BigInt beyond 64 bits (use validateJson for integers of any size)",
                    )),
                },
            };
        }
        if !value.is_object() {
            return Err(Misuse::new(if value.is_function() {
                "invalid type: function, expected a JSON value"
            } else {
                "invalid type: symbol, expected a JSON value"
            }));
        }
        if depth >= MAX_DEPTH {
            return Err(Misuse::new("value is nested too deeply (or is cyclic)"));
        }
        let depth = depth + 1;
        if Array::is_array(&value) {
            let items = value.unchecked_into::<Array>().into_iter();
            return visitor.visit_seq(Items { items, depth });
        }
        if Reflect::has(&value, &Symbol::iterator()).unwrap_or(false) {
            return Err(Misuse::new(
                "invalid type: an iterable object (a Map, a Set ...), expected an array or a plain object",
            ));
        }
        let entries = Object::entries(value.unchecked_ref::<Object>()).into_iter();
        visitor.visit_map(Entries {
            entries,
            depth,
            value: JsValue::UNDEFINED,
        })
    }

    /// An option given (see `Absent` for one that is not): `null` too.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Misuse> {
        visitor.visit_some(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Misuse> {
        visitor.visit_seq(Options::new(self, fields)?)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// An array's items.
struct Items {
    items: ArrayIntoIter,
    depth: usize,
}

impl<'de> SeqAccess<'de> for Items {
    type Error = Misuse;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Misuse> {
        let Some(value) = self.items.next() else {
            return Ok(None);
        };
        let depth = self.depth;
        seed.deserialize(JsDeserializer { value, depth }).map(Some)
    }
}

/// An object's own enumerable entries.
struct Entries {
    entries: ArrayIntoIter,
    depth: usize,
    value: JsValue,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Misuse;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Misuse> {
        let Some(entry) = self.entries.next() else {
            return Ok(None);
        };
        let entry = entry.unchecked_into::<Array>();
        self.value = entry.get(1);
        let key = entry.get(0).as_string().unwrap_or_default();
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Misuse> {
        seed.deserialize(JsDeserializer {
            value: std::mem::replace(&mut self.value, JsValue::UNDEFINED),
            depth: self.depth,
        })
    }
}

/// An options object's values, in the order of its type's fields.
struct Options {
    object: JsValue,
    fields: std::slice::Iter<'static, &'static str>,
    depth: usize,
}

impl Options {
    /// Refuses what is no options object, and keys the type has no field for.
    fn new(options: JsDeserializer, fields: &'static [&'static str]) -> Result<Self, Misuse> {
        let JsDeserializer { value, depth } = options;
        if !value.is_object() || Array::is_array(&value) {
            return Err(Misuse::new("expected an options object"));
        }
        for key in Object::keys(value.unchecked_ref::<Object>()) {
            let key = key.as_string().unwrap_or_default();
            if !fields.contains(&key.as_str()) {
                return Err(Misuse(format!(
                    "unknown option \"{key}\"; expected one of {}",
                    fields.join(", ")
                )));
            }
        }
        Ok(Options {
            object: value,
            fields: fields.iter(),
            depth,
        })
    }

    /// The next field's name, and its value unless it is not given.
    fn next_field(&mut self) -> Result<Option<(&'static str, Option<JsDeserializer>)>, Misuse> {
        let Some(&name) = self.fields.next() else {
            return Ok(None);
        };
        let value = Reflect::get(&self.object, &JsValue::from_str(name))
            .map_err(|_| Misuse::new("reading it threw").at(name))?;
        let depth = self.depth;
        Ok(Some((
            name,
            (!value.is_undefined()).then_some(JsDeserializer { value, depth }),
        )))
    }
}

impl<'de> SeqAccess<'de> for Options {
    type Error = Misuse;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Misuse> {
        match self.next_field()? {
            None => Ok(None),
            Some((name, None)) => seed.deserialize(Absent(name)).map(Some),
            Some((name, Some(value))) => seed.deserialize(value).map(Some).map_err(|e| e.at(name)),
        }
    }
}

/// An option not given: `None` where its type allows, else refused.
struct Absent(&'static str);

impl<'de> Deserializer<'de> for Absent {
    type Error = Misuse;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Misuse> {
        Err(Misuse(format!("option \"{}\" is required", self.0)))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Misuse> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Why an argument cannot be read: the package throws it as a `TypeError`.
#[derive(Debug)]
pub struct Misuse(pub(super) String);

impl Misuse {
    fn new(what: &str) -> Self {
        Misuse(what.to_owned())
    }

    /// This misuse of the option `name`.
    fn at(self, name: &str) -> Self {
        Misuse(format!("option \"{name}\": {}", self.0))
    }
}

impl de::Error for Misuse {
    fn custom<T: fmt::Display>(what: T) -> Self {
        Misuse(what.to_string())
    }
}

impl fmt::Display for Misuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Misuse {}
