//! The JSON-lines protocol of the reference oracle (`mooncake_reference.py`),
//! so the port can be compared with it answer for answer.
//!
//! `{"op": "validate", "block": ...}`, `{"op": "author_byte_size", "value": ...}`
//! and `{"op": "build", "mode": ..., ...}` each get one line back, printed as
//! Python's `json.dumps` prints the oracle's answer.

use crate::bytesize::{ByteSizeArg, author_byte_size};
use crate::json::{self, Object, Value};
use crate::limits::MOONCAKE_DEFAULT_INSTANCES;
use crate::mooncake::{BuildArgs, build_mooncake_block, validate_mooncake};
use crate::pyrepr::py_strip;

/// Whether the oracle skips this line (`if not line.strip()`).
pub fn is_blank(line: &str) -> bool {
    py_strip(line).is_empty()
}

/// The answer line (without newline) to one request line.
pub fn answer_line(line: &str) -> String {
    let answer = match json::parse(line) {
        Err(e) => error("JSONDecodeError", e.to_string()),
        Ok(Value::Object(request)) => answer(&request),
        Ok(_) => error("UsageError", "a request must be a JSON object".into()),
    };
    Value::Object(answer).to_json()
}

/// The answer to one request.
fn answer(request: &Object) -> Object {
    let get = |key: &str| request.get(key).cloned().unwrap_or(Value::Null);
    let op = get("op");
    match op.as_str() {
        Some("validate") => match validate_mooncake(&get("block")) {
            Ok(()) => ok(Value::Bool(true)),
            Err(d) => error("ValueError", d.message),
        },
        Some("author_byte_size") => match author_byte_size(ByteSizeArg::from(&get("value"))) {
            Ok(s) => ok(Value::from(s)),
            Err(e) => error("ValueError", e.to_string()),
        },
        Some("build") => {
            let optional = |key: &str| request.get(key).filter(|v| !v.is_null()).cloned();
            let args = BuildArgs {
                mode: get("mode"),
                prefill_replicas: request
                    .get("prefill_replicas")
                    .cloned()
                    .unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES)),
                decode_replicas: request
                    .get("decode_replicas")
                    .cloned()
                    .unwrap_or(Value::int(MOONCAKE_DEFAULT_INSTANCES)),
                store: optional("store"),
                transfer: optional("transfer"),
                proxy: optional("proxy"),
                autoscaling: optional("autoscaling"),
                default_proxy_image: optional("default_proxy_image"),
            };
            match build_mooncake_block(&args) {
                Ok(block) => ok(block),
                Err(e) => error(e.kind.as_str(), e.message),
            }
        }
        _ => error("UsageError", format!("unknown op {}", op.repr())),
    }
}

fn ok(value: Value) -> Object {
    let mut o = Object::new();
    o.insert("ok", value);
    o
}

fn error(kind: &str, message: String) -> Object {
    let mut o = Object::new();
    o.insert("error", message);
    o.insert("kind", kind);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_oracle() {
        let cases = [
            (
                r#"{"op": "validate", "block": {"mode": "store"}}"#,
                r#"{"ok": true}"#,
            ),
            (
                r#"{"op": "validate", "block": {"mode": "disaggregated", "topology": {"prefill": 1001, "decode": 1}}}"#,
                r#"{"error": "mooncake.topology.prefill out of range [1, 1000]: 1001", "kind": "ValueError"}"#,
            ),
            (
                r#"{"op": "author_byte_size", "value": " 12 "}"#,
                r#"{"ok": "12"}"#,
            ),
            (
                r#"{"op": "nope"}"#,
                r#"{"error": "unknown op 'nope'", "kind": "UsageError"}"#,
            ),
            (
                r#"{"op": "build", "mode": "store", "store": 5}"#,
                r#"{"error": "'int' object is not iterable", "kind": "TypeError"}"#,
            ),
            (
                r#"{"op": "validate", "block": {"mode": "\u00e9"}}"#,
                r#"{"error": "mooncake.mode must be one of {both, disaggregated, store}, got '\u00e9'", "kind": "ValueError"}"#,
            ),
        ];
        for (request, expected) in cases {
            assert_eq!(answer_line(request), expected, "{request}");
        }
    }
}
