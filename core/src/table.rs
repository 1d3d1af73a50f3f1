//! What GCO's endpoints table (DynamoDB) can hold. A deploy request whose
//! record the table could not keep as sent is refused here, in the core, so
//! the console's editor and the backend refuse exactly the same requests.

use crate::diagnostics::Diagnostic;
use crate::json::{Int, Value};

/// Longest endpoint name, in bytes: DynamoDB's limit for a partition key,
/// so GCO's own table cannot hold a longer one either.
pub const MAX_NAME_BYTES: usize = 2048;

/// The most digits a DynamoDB number holds. GCO writes integers as numbers,
/// so a longer one could not be written as GCO writes it.
pub const NUMBER_MAX_DIGITS: usize = 38;

/// Whether DynamoDB can hold the integer `i` as a number.
pub fn fits_number(i: &Int) -> bool {
    match i {
        Int::Small(_) => true, // at most 19 digits
        Int::Big(text) => text.trim_start_matches('-').len() <= NUMBER_MAX_DIGITS,
    }
}

/// The first value of `value` that no store can keep as it is, as an error
/// at its path: a string with a lone surrogate (DynamoDB keeps UTF-8 text,
/// which cannot hold one, and replacing it would store something else than
/// was sent), or an integer too long for a DynamoDB number (kept as its
/// digits it would be a string where the rules want an integer).
pub fn unstorable_value(value: &Value) -> Option<Diagnostic> {
    // One walk when all is storable, as nearly every request is; the
    // ordered searches below (a lone surrogate anywhere comes first) only
    // when something is not.
    if storable(value) {
        return None;
    }
    let at = |path: &str| {
        if path.is_empty() {
            "the body".to_owned()
        } else {
            path.to_owned()
        }
    };
    if let Some((path, text)) = value.lone_surrogate() {
        let message = format!(
            "{} holds a lone surrogate ({}), which cannot be stored: text is kept as UTF-8",
            at(&path),
            crate::pyrepr::repr_str(text)
        );
        return Some(Diagnostic::error(path, message));
    }
    let (path, number) = value.first_where(|v| matches!(v, Value::Int(i) if !fits_number(i)))?;
    let Value::Int(number) = number else {
        return None;
    };
    let digits = number.to_string().trim_start_matches('-').len();
    let message = format!(
        "{} is {number}, {digits} digits; a DynamoDB number holds at most {NUMBER_MAX_DIGITS}, so it cannot be stored",
        at(&path)
    );
    Some(Diagnostic::error(path, message))
}

/// Whether every string (keys included) and integer of `value` can be
/// stored as it is.
fn storable(value: &Value) -> bool {
    match value {
        Value::Str(s) => s.as_str().is_some(),
        Value::Int(i) => fits_number(i),
        Value::List(items) => items.iter().all(storable),
        Value::Object(o) => o.iter().all(|(k, v)| storable(k) && storable(v)),
        Value::Null | Value::Bool(_) | Value::Float(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn finds_what_the_table_cannot_hold() {
        let wide = format!("1{}", "0".repeat(40));
        let v = parse(&format!(r#"{{"a": [1, {{"b": {wide}}}]}}"#)).unwrap();
        let d = unstorable_value(&v).unwrap();
        assert_eq!(d.path, "a[1].b");
        assert_eq!(
            d.message,
            format!(
                "a[1].b is {wide}, 41 digits; a DynamoDB number holds at most 38, so it cannot be stored"
            )
        );
        let v = parse(r#"{"x": "\ud800"}"#).unwrap();
        let d = unstorable_value(&v).unwrap();
        assert_eq!(
            (d.path.as_str(), d.message.as_str()),
            (
                "x",
                r"x holds a lone surrogate ('\ud800'), which cannot be stored: text is kept as UTF-8"
            )
        );
        let edge = format!("-{}", "9".repeat(38));
        assert!(unstorable_value(&parse(&format!("[{edge}]")).unwrap()).is_none());
    }
}
