//! Arbitrary bytes as a mooncake block's JSON text: the fast path (no tree)
//! and the tree path give the same verdict and message, every diagnostic
//! check agrees with the fail-fast one, and the tree writes back to text
//! that reads as the same tree.
#![no_main]

use gco_spec::json::{self, Value};
use gco_spec::{check_mooncake, document, validate_mooncake, validate_mooncake_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let fast = validate_mooncake_json(text);
    let tree = json::parse(text);
    assert_eq!(fast.is_ok(), tree.is_ok(), "syntax verdicts differ on {text:?}");
    let _ = document::check_document_text(text);
    let Ok(tree) = tree else { return };
    let verdict = validate_mooncake(&tree);
    assert_eq!(fast.unwrap(), verdict, "fast and tree verdicts differ on {text:?}");
    let first_error = check_mooncake(&tree).errors().next().cloned();
    assert_eq!(first_error, verdict.err(), "check's first error is not validate's on {text:?}");
    let _ = document::check_document(&tree);
    let written = tree.to_json();
    let reread: Value = json::parse(&written).expect("written JSON reads back");
    if !has_nan(&tree) {
        assert_eq!(reread, tree, "{text:?} written as {written:?}");
    }
});

/// NaN is not equal to itself, so a tree holding one cannot compare equal.
fn has_nan(v: &Value) -> bool {
    match v {
        Value::Float(f) => f.is_nan(),
        Value::List(items) => items.iter().any(has_nan),
        Value::Object(o) => o.iter().any(|(_, v)| has_nan(v)),
        _ => false,
    }
}
