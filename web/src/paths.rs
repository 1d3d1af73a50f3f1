//! Reading and writing a field of the editor's state by its key path.

use gco_spec::json::{Object, Value};

pub fn get<'a>(root: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, key| v.as_object()?.get(key))
}

/// Sets (`Some`) or removes (`None`) the field at `path`, creating parent
/// objects as needed and dropping parents left empty.
pub fn set(root: &mut Value, path: &[&str], value: Option<Value>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if root.as_object().is_none() {
        *root = Value::Object(Object::new());
    }
    let obj = root.as_object_mut().expect("an object");
    if rest.is_empty() {
        match value {
            Some(v) => obj.insert(first, v),
            None => {
                obj.remove(first);
            }
        }
        return;
    }
    let mut child = obj
        .get(first)
        .filter(|c| c.as_object().is_some())
        .cloned()
        .unwrap_or(Value::Object(Object::new()));
    set(&mut child, rest, value);
    if child.as_object().is_some_and(Object::is_empty) {
        obj.remove(first);
    } else {
        obj.insert(first, child);
    }
}

/// The text an input shows for a value: strings as they are, anything else
/// as JSON (`2`, `2.0`, `true`).
pub fn display(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::Str(s)) => s.to_string_lossy(),
        Some(other) => other.to_json(),
    }
}

/// What a typed number becomes: a JSON number when the text is one, else the
/// text itself, so the rules report exactly what was typed.
pub fn typed_number(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    match gco_spec::json::parse(t) {
        Ok(v @ (Value::Int(_) | Value::Float(_))) => Some(v),
        _ => Some(Value::from(text.to_owned())),
    }
}

/// What a typed instance count becomes: a number when the text is one, else
/// the text itself (an empty box included), so the rules report at the box
/// what was typed instead of a default taking its place.
pub fn count_text(text: &str) -> Value {
    typed_number(text).unwrap_or_else(|| Value::from(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn get_follows_a_key_path() {
        let v = parse(r#"{"a": {"b": 1}, "c": [1]}"#).unwrap();
        assert_eq!(get(&v, &["a", "b"]), Some(&Value::from(1)));
        assert_eq!(get(&v, &[]), Some(&v));
        assert_eq!(get(&v, &["a", "x"]), None);
        assert_eq!(get(&v, &["c", "0"]), None, "lists are no objects");
    }

    #[test]
    fn set_makes_parents_and_remove_drops_the_empty_ones() {
        let mut v = parse(r#"{"endpoint_name": "x"}"#).unwrap();
        set(&mut v, &["mooncake_store", "offload"], Some("cpu".into()));
        assert_eq!(
            v.to_json(),
            r#"{"endpoint_name": "x", "mooncake_store": {"offload": "cpu"}}"#
        );
        set(&mut v, &["endpoint_name"], Some("y".into()));
        set(&mut v, &["mooncake_store", "offload"], None);
        assert_eq!(v.to_json(), r#"{"endpoint_name": "y"}"#);
        // A parent that is no object gives way to one.
        let mut v = parse(r#"{"a": 1}"#).unwrap();
        set(&mut v, &["a", "b"], Some(true.into()));
        assert_eq!(v.to_json(), r#"{"a": {"b": true}}"#);
        let mut v = Value::Null;
        set(&mut v, &["a"], Some(1.into()));
        assert_eq!(v.to_json(), r#"{"a": 1}"#);
    }

    #[test]
    fn an_input_shows_a_value_as_typed() {
        assert_eq!(display(None), "");
        assert_eq!(display(Some(&Value::Null)), "");
        assert_eq!(display(Some(&"a\"b".into())), "a\"b");
        assert_eq!(display(Some(&parse("2.0").unwrap())), "2.0");
        assert_eq!(display(Some(&true.into())), "true");
    }

    #[test]
    fn a_typed_number_is_a_number_only_when_the_text_is_one() {
        assert_eq!(typed_number(" "), None);
        assert_eq!(
            typed_number(" 2 ").map(|v| v.to_json()).as_deref(),
            Some("2")
        );
        assert_eq!(
            typed_number("1.50").map(|v| v.to_json()).as_deref(),
            Some("1.5")
        );
        // Kept as typed, so the rules name it.
        assert_eq!(typed_number("2x"), Some(Value::from("2x")));
        assert_eq!(typed_number("true"), Some(Value::from("true")));
        assert_eq!(count_text(""), Value::from(""));
        assert_eq!(count_text("3"), Value::from(3));
    }
}
