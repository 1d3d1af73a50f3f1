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
        Value::Float(f) => AttributeValue::S(gco_spec::pyrepr::float_repr(*f)),
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
        Value::Float(f) => gco_spec::pyrepr::float_repr(*f).len(),
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

/// Reads an attribute back. A whole N is an integer (as GCO's reader turns
/// whole `Decimal`s into ints); a fractional N, which GCO never writes but
/// another writer might, is a float.
pub fn from_attr(a: &AttributeValue) -> Value {
    match a {
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::N(n) => match Int::from_decimal(n) {
            Some(i) => Value::Int(i),
            None => match n.parse::<f64>() {
                Ok(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::int(f as i64),
                Ok(f) => Value::Float(f),
                Err(_) => Value::from(n.clone()),
            },
        },
        AttributeValue::S(s) => Value::from(s.clone()),
        AttributeValue::L(items) => Value::List(items.iter().map(from_attr).collect()),
        AttributeValue::M(m) => Value::Object(from_item(m)),
        AttributeValue::Ss(items) => {
            Value::List(items.iter().map(|s| Value::from(s.clone())).collect())
        }
        AttributeValue::Ns(items) => Value::List(
            items
                .iter()
                .map(|n| from_attr(&AttributeValue::N(n.clone())))
                .collect(),
        ),
        // Binary attributes are not part of GCO's layout.
        _ => Value::Null,
    }
}

/// Map attributes come back unordered; keys are sorted so reads are stable.
pub fn from_item(m: &HashMap<String, AttributeValue>) -> Object {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let mut o = Object::new();
    for k in keys {
        o.insert(k, from_attr(&m[k]));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use gco_spec::json::parse;

    #[test]
    fn round_trips_gco_encoding() {
        let v = parse(r#"{"a": 1, "b": "x", "c": [true, null], "d": {"e": "4294967296"}, "big": 100000000000000000000000000000000000000000}"#).unwrap();
        let back = from_attr(&to_attr(&v));
        assert_eq!(
            back.to_json(),
            r#"{"a": 1, "b": "x", "big": "100000000000000000000000000000000000000000", "c": [true, null], "d": {"e": "4294967296"}}"#
        );
        assert_eq!(from_attr(&AttributeValue::N("3.0".into())), Value::int(3));
        assert_eq!(
            from_attr(&AttributeValue::N("1.5".into())),
            Value::Float(1.5)
        );
    }
}
