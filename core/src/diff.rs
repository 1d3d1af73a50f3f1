//! Field-by-field differences between two values (old and new spec), for
//! showing a change before it is sent.

use crate::json::Value;

/// One changed field: its dotted path and its values before and after
/// (`None` where the field is absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// Every leaf that differs, in the order of `old` then the additions of
/// `new`. Objects are compared key by key; anything else (lists included)
/// as a whole.
pub fn diff(old: &Value, new: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk("", Some(old), Some(new), &mut out);
    out
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn walk(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<Difference>) {
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            for (k, v) in a.str_entries() {
                let k = k.to_string_lossy();
                walk(&join(path, &k), Some(v), b.get(&k), out);
            }
            for (k, v) in b.str_entries() {
                let k = k.to_string_lossy();
                if !a.contains_key(&k) {
                    walk(&join(path, &k), None, Some(v), out);
                }
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            path: path.to_owned(),
            old: a.cloned(),
            new: b.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn lists_changed_leaves() {
        let old = parse(r#"{"image": "a", "mooncake": {"topology": {"prefill": 1, "decode": 2}}, "env": {"X": "1"}}"#).unwrap();
        let new = parse(
            r#"{"image": "a", "mooncake": {"topology": {"prefill": 3, "decode": 2}}, "port": 80}"#,
        )
        .unwrap();
        let d: Vec<String> = diff(&old, &new)
            .iter()
            .map(|d| {
                format!(
                    "{}: {:?} -> {:?}",
                    d.path,
                    d.old.as_ref().map(Value::repr),
                    d.new.as_ref().map(Value::repr)
                )
            })
            .collect();
        assert_eq!(
            d,
            [
                "mooncake.topology.prefill: Some(\"1\") -> Some(\"3\")",
                "env: Some(\"{'X': '1'}\") -> None",
                "port: None -> Some(\"80\")",
            ]
        );
        assert!(diff(&old, &old).is_empty());
    }
}
