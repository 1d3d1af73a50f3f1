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
