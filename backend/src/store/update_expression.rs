//! A change as DynamoDB's `UpdateItem` expression: each value it changed,
//! set at its own path inside the maps that hold it, and each key it
//! dropped removed, as GCO's CLI writes (`SET spec.replicas = :r`).
//!
//! Writing whole attributes would rewrite what the change left alone in the
//! console's own encoding: a fractional number another writer stored as N
//! (boto3's `Decimal`) would come back as the string the console writes for
//! a float, and GCO's readers would get `"62.5"` where they had `62.5`.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use gco_spec::json::{Object, Value};

use super::attr::to_attr;
use super::{Expected, Storable};

/// DynamoDB refuses an expression over 4 KB. A change whose paths would not
/// fit (none of the operations comes near) writes its attributes whole.
const MAX_EXPRESSION_BYTES: usize = 3 * 1024;

/// An update's expression with its name and value placeholders, and the
/// edits it makes (for [`apply_edits`]).
#[derive(Debug, Default, PartialEq)]
pub(super) struct UpdateExpression {
    pub text: String,
    pub names: HashMap<String, String>,
    pub values: HashMap<String, AttributeValue>,
    pub edits: Vec<Edit>,
}

/// One edit of an item: the value to set at a path of map keys from the
/// item's root, or `None` to remove the key there.
pub(super) type Edit = (Vec<String>, Option<Value>);

/// `item` as the expression's `edits` leave it, as DynamoDB applies them:
/// each value set at its path (the maps on the way exist: an edit goes
/// inside only a map the item holds), each dropped key removed.
pub(super) fn apply_edits(item: &mut Object, edits: &[Edit]) {
    'edits: for (path, value) in edits {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let mut map = &mut *item;
        for key in parents {
            map = match map.get_mut(key) {
                Some(Value::Object(inner)) => inner,
                _ => continue 'edits,
            };
        }
        match value {
            Some(value) => map.insert(last, value.clone()),
            None => {
                map.remove(last);
            }
        }
    }
}

/// What writing `next` over `expected.read` changes, as an expression.
pub(super) fn update_expression(expected: &Expected, next: &Storable) -> UpdateExpression {
    let changed = expected.changed_attributes(next);
    let mut edits = Vec::new();
    for attribute in &changed {
        let mut path = vec![attribute.name.to_owned()];
        match &attribute.old {
            Some(old) if *old != attribute.new => {
                diff(&mut path, Some(old), &attribute.new, &mut edits)
            }
            // `updated_at` is written even when it did not move.
            _ => edits.push((path, Some(attribute.new.clone()))),
        }
    }
    let nested = render(&edits);
    if nested.text.len() <= MAX_EXPRESSION_BYTES {
        return UpdateExpression { edits, ..nested };
    }
    let whole: Vec<Edit> = changed
        .into_iter()
        .map(|attribute| (vec![attribute.name.to_owned()], Some(attribute.new)))
        .collect();
    UpdateExpression {
        edits: whole.clone(),
        ..render(&whole)
    }
}

/// The edits that turn `old` into `new` at `path`: inside two maps, one per
/// key dropped or changed; otherwise `new` whole.
fn diff(path: &mut Vec<String>, old: Option<&Value>, new: &Value, edits: &mut Vec<Edit>) {
    if old == Some(new) {
        return;
    }
    match (old, new) {
        (Some(Value::Object(old)), Value::Object(new_map)) if editable_inside(old, new_map) => {
            for (key, _) in old.str_entries() {
                let key = key.to_string_lossy();
                if !new_map.contains_key(&key) {
                    let mut at = path.clone();
                    at.push(key);
                    edits.push((at, None));
                }
            }
            for (key, value) in new_map.str_entries() {
                let key = key.to_string_lossy();
                let before = old.get(&key);
                path.push(key);
                diff(path, before, value, edits);
                path.pop();
            }
        }
        _ => edits.push((path.clone(), Some(new.clone()))),
    }
}

/// Whether paths inside a map may be edited. Only one the item is known to
/// hold: a non-empty one (a record reads an absent or null map as empty,
/// and DynamoDB refuses a path through a map that is not there). And no
/// empty key on either side: an expression cannot name one (DynamoDB
/// refuses an empty attribute name).
fn editable_inside(old: &Object, new: &Object) -> bool {
    let empty_key = |map: &Object| map.str_entries().any(|(k, _)| k.is_empty());
    !old.is_empty() && !empty_key(old) && !empty_key(new)
}

fn render(edits: &[Edit]) -> UpdateExpression {
    let mut out = UpdateExpression::default();
    let mut placeholders: HashMap<&str, String> = HashMap::new();
    let (mut sets, mut removes) = (Vec::new(), Vec::new());
    for (path, value) in edits {
        let path_text = path
            .iter()
            .map(|key| {
                placeholders
                    .entry(key.as_str())
                    .or_insert_with_key(|key| {
                        let placeholder = format!("#n{}", out.names.len());
                        out.names.insert(placeholder.clone(), (*key).to_owned());
                        placeholder
                    })
                    .clone()
            })
            .collect::<Vec<_>>()
            .join(".");
        match value {
            Some(value) => {
                let placeholder = format!(":v{}", out.values.len());
                sets.push(format!("{path_text} = {placeholder}"));
                out.values.insert(placeholder, to_attr(value));
            }
            None => removes.push(path_text),
        }
    }
    out.text = format!("SET {}", sets.join(", "));
    if !removes.is_empty() {
        out.text
            .push_str(&format!(" REMOVE {}", removes.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gco_spec::Record;
    use gco_spec::json::parse;

    fn record(spec: &str) -> Record {
        let text = format!(
            r#"{{"endpoint_name": "e", "desired_state": "running", "target_regions": ["us-east-1"],
                "namespace": "n", "spec": {spec}, "created_at": "t0", "updated_at": "t0"}}"#
        );
        Record::from_value(&parse(&text).unwrap()).unwrap()
    }

    /// The expression with its placeholders put back, for reading.
    fn spelled(e: &UpdateExpression) -> String {
        let mut text = e.text.clone();
        let mut names: Vec<_> = e.names.iter().collect();
        names.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        for (placeholder, name) in names {
            text = text.replace(placeholder.as_str(), name);
        }
        text
    }

    fn changed(read: &Record, spec: &str) -> UpdateExpression {
        let mut next = record(spec);
        next.updated_at = "t1".into();
        update_expression(&Expected::of(read, false), &Storable::of(next))
    }

    #[test]
    fn only_the_changed_values_are_set_at_their_paths() {
        let read = record(
            r#"{"image": "a", "replicas": 1, "autoscaling": {"target": 62.5, "enabled": false}}"#,
        );
        let e = changed(
            &read,
            r#"{"image": "b", "replicas": 1, "autoscaling": {"target": 62.5, "enabled": true}}"#,
        );
        assert_eq!(
            spelled(&e),
            "SET spec.image = :v0, spec.autoscaling.enabled = :v1, updated_at = :v2"
        );
        assert_eq!(e.values[":v1"], AttributeValue::Bool(true));
    }

    #[test]
    fn dropped_keys_are_removed_and_new_ones_set() {
        let read =
            record(r#"{"image": "a", "mooncake": {"store": {"offload": "cpu"}, "mode": "both"}}"#);
        let e = changed(
            &read,
            r#"{"image": "a", "mooncake": {"mode": "both", "proxy": {"image": "p"}}}"#,
        );
        assert_eq!(
            spelled(&e),
            "SET spec.mooncake.proxy = :v0, updated_at = :v1 REMOVE spec.mooncake.store"
        );
    }

    #[test]
    fn the_edits_make_of_the_item_read_the_item_written() {
        let read = record(
            r#"{"image": "a", "mooncake": {"store": {"offload": "cpu"}, "mode": "both"}, "env": {"A": "1"}}"#,
        );
        let mut next = record(
            r#"{"image": "b", "mooncake": {"mode": "both", "proxy": {"image": "p"}}, "env": {"A": "1"}}"#,
        );
        next.updated_at = "t1".into();
        next.desired_state = gco_spec::DesiredState::Stopped;
        let next = Storable::of(next);
        let e = update_expression(&Expected::of(&read, false), &next);
        let mut item = super::super::storable(&read).as_object().cloned().unwrap();
        apply_edits(&mut item, &e.edits);
        let written = next.value().clone();
        assert!(
            super::super::history::same_content(&Value::Object(item.clone()), &written),
            "{} against {}",
            Value::Object(item).to_json(),
            written.to_json()
        );
    }

    #[test]
    fn a_map_the_item_may_not_hold_is_set_whole() {
        // A record reads a missing (or null) spec as empty.
        let read = record("null");
        let e = changed(&read, r#"{"image": "a"}"#);
        assert_eq!(spelled(&e), "SET spec = :v0, updated_at = :v1");
        // A value that was no map is replaced whole.
        let read = record(r#"{"env": "x"}"#);
        let e = changed(&read, r#"{"env": {"A": "1"}}"#);
        assert_eq!(spelled(&e), "SET spec.env = :v0, updated_at = :v1");
    }

    #[test]
    fn a_map_with_an_empty_key_is_set_whole() {
        let read = record(r#"{"env": {"": "x", "A": "1"}}"#);
        let e = changed(&read, r#"{"env": {"": "x", "A": "2"}}"#);
        assert_eq!(spelled(&e), "SET spec.env = :v0, updated_at = :v1");
    }

    #[test]
    fn a_change_too_wide_for_one_expression_writes_its_attributes_whole() {
        let keys = |value: &str| {
            let entries: Vec<String> = (0..400)
                .map(|i| format!(r#""key_{i}": "{value}""#))
                .collect();
            format!("{{{}}}", entries.join(", "))
        };
        let read = record(&format!(r#"{{"env": {}}}"#, keys("a")));
        let e = changed(&read, &format!(r#"{{"env": {}}}"#, keys("b")));
        assert_eq!(spelled(&e), "SET spec = :v0, updated_at = :v1");
    }

    #[test]
    fn placeholders_are_shared_by_equal_names() {
        let read = record(r#"{"a": {"x": 1}, "b": {"x": 1}}"#);
        let e = changed(&read, r#"{"a": {"x": 2}, "b": {"x": 2}}"#);
        assert_eq!(
            spelled(&e),
            "SET spec.a.x = :v0, spec.b.x = :v1, updated_at = :v2"
        );
        assert_eq!(e.names.len(), 5, "spec, a, x, b, updated_at");
    }
}
