//! Arbitrary bytes as a mooncake block's JSON text: the collecting check's
//! first error is the fail-fast check's, the document checks do not panic,
//! and the tree writes back to text that reads as the same tree.
#![no_main]

use gco_spec::json::{self, Value};
use gco_spec::{Frameworks, check_mooncake, document, validate_mooncake};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = document::check_document_text(text, &Frameworks::CURRENT);
    let Ok(tree) = json::parse(text) else { return };
    let verdict = validate_mooncake(&tree);
    let first_error = check_mooncake(&tree).errors().next().cloned();
    assert_eq!(first_error, verdict.err(), "check's first error is not validate's on {text:?}");
    let _ = document::check_document(&tree, &Frameworks::CURRENT);
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
