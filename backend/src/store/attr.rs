//! Records as DynamoDB items, in the encoding GCO's Python store uses:
//! integers are N, strings S, booleans BOOL, null NULL, maps M, lists L.
//! Floats and integers too long for a number never reach here (see
//! `storable`): they are stored as strings.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use gco_spec::json::{Int, Object, Value};

use super::fits_dynamo_number;

pub fn to_attr(v: &Value) -> AttributeValue {
    match v {
        Value::Null => AttributeValue::Null(true),
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Int(i) if fits_dynamo_number(i) => AttributeValue::N(i.to_string()),
        Value::Int(i) => AttributeValue::S(i.to_string()),
        Value::Float(f) => AttributeValue::S(gco_spec::json::float_repr(*f)),
        Value::Str(s) => AttributeValue::S(s.to_string_lossy()),
        Value::List(items) => AttributeValue::L(items.iter().map(to_attr).collect()),
        Value::Object(o) => AttributeValue::M(to_item(o)),
    }
}

/// The size DynamoDB counts for a value against its item limit, encoded
/// as [`to_attr`] encodes it: text by its UTF-8 bytes, a number by about
/// one byte per two significant digits plus one, a list or map 3 bytes
/// plus 1 per element (and its key), null and booleans 1.
pub fn attr_size(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 1,
        Value::Int(i) => {
            let text = i.to_string();
            if !fits_dynamo_number(i) {
                return text.len();
            }
            let digits = text.trim_start_matches('-');
            if digits == "0" {
                return 1;
            }
            // Base-100 digits, as dynalite (the AWS documentation's
            // "approximately" made exact) counts them: one more when the
            // significant digits and the exponent are both even.
            let significant = digits.trim_end_matches('0').len();
            let exponent = digits.len() - 1;
            let pairs = 1 + significant.div_ceil(2);
            let odd = significant % 2 == 1 || exponent % 2 == 1;
            pairs + usize::from(!odd) + usize::from(text.starts_with('-'))
        }
        Value::Float(f) => gco_spec::json::float_repr(*f).len(),
        Value::Str(s) => s.to_str_lossy().len(),
        Value::List(items) => 3 + items.iter().map(|v| 1 + attr_size(v)).sum::<usize>(),
        Value::Object(o) => {
            3 + o
                .str_entries()
                .map(|(k, v)| 1 + k.to_str_lossy().len() + attr_size(v))
                .sum::<usize>()
        }
    }
}

pub fn to_item(o: &Object) -> HashMap<String, AttributeValue> {
    o.str_entries()
        .map(|(k, v)| (k.to_string_lossy(), to_attr(v)))
        .collect()
}

/// A binary attribute (B or BS): no JSON value holds one, GCO never writes
/// one, and reading it as anything else would lose it at the next write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// Where it is, from the item's top (`spec.blob`, `spec.parts[2]`).
    pub path: String,
}

impl Binary {
    fn under(self, step: &str) -> Binary {
        let path = match self.path.as_str() {
            "" => step.to_owned(),
            rest if rest.starts_with('[') => format!("{step}{rest}"),
            rest => format!("{step}.{rest}"),
        };
        Binary { path }
    }
}

/// Reads an attribute back. A whole N is an integer (as GCO's reader turns
/// whole `Decimal`s into ints); a fractional N, which GCO never writes but
/// another writer might, is a float; sets are read as lists.
pub fn from_attr(a: &AttributeValue) -> Result<Value, Binary> {
    Ok(match a {
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::N(n) => number(n),
        AttributeValue::S(s) => Value::from(s.clone()),
        AttributeValue::L(items) => Value::List(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| from_attr(item).map_err(|b| b.under(&format!("[{i}]"))))
                .collect::<Result<_, _>>()?,
        ),
        AttributeValue::M(m) => Value::Object(from_item(m)?),
        AttributeValue::Ss(items) => {
            Value::List(items.iter().map(|s| Value::from(s.clone())).collect())
        }
        AttributeValue::Ns(items) => Value::List(items.iter().map(|n| number(n)).collect()),
        _ => {
            return Err(Binary {
                path: String::new(),
            });
        }
    })
}

fn number(n: &str) -> Value {
    match Int::from_decimal(n) {
        Some(i) => Value::Int(i),
        None => match n.parse::<f64>() {
            Ok(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::int(f as i64),
            Ok(f) => Value::Float(f),
            Err(_) => Value::from(n.to_owned()),
        },
    }
}

/// Map attributes come back unordered; keys are sorted so reads are stable.
pub fn from_item(m: &HashMap<String, AttributeValue>) -> Result<Object, Binary> {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let mut o = Object::new();
    for k in keys {
        o.insert(k, from_attr(&m[k]).map_err(|b| b.under(k))?);
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gco_spec::json::parse;

    #[test]
    fn round_trips_gco_encoding() {
        let v = parse(r#"{"a": 1, "b": "x", "c": [true, null], "d": {"e": "4294967296"}, "big": 100000000000000000000000000000000000000000}"#).unwrap();
        let back = from_attr(&to_attr(&v)).unwrap();
        assert_eq!(
            back.to_json(),
            r#"{"a": 1, "b": "x", "big": "100000000000000000000000000000000000000000", "c": [true, null], "d": {"e": "4294967296"}}"#
        );
        assert_eq!(
            from_attr(&AttributeValue::N("3.0".into())),
            Ok(Value::int(3))
        );
        assert_eq!(
            from_attr(&AttributeValue::N("1.5".into())),
            Ok(Value::Float(1.5))
        );
    }

    #[test]
    fn binary_values_are_found_with_their_path() {
        let blob = || AttributeValue::B(aws_sdk_dynamodb::primitives::Blob::new(vec![0, 1]));
        let item = HashMap::from([(
            "spec".to_owned(),
            AttributeValue::M(HashMap::from([
                ("image".to_owned(), AttributeValue::S("x".into())),
                (
                    "parts".to_owned(),
                    AttributeValue::L(vec![AttributeValue::Null(true), blob()]),
                ),
            ])),
        )]);
        assert_eq!(
            from_item(&item),
            Err(Binary {
                path: "spec.parts[1]".into()
            })
        );
        let top = HashMap::from([("blob".to_owned(), blob())]);
        assert_eq!(from_item(&top).unwrap_err().path, "blob");
    }
}
