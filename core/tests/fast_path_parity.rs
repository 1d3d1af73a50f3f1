//! The fast text path against the tree path on every one-byte edit of the
//! benchmark blocks: the same syntax error (message and position) or the
//! same verdict. The edits reach every branch of the scanner: strings cut
//! short, escapes, control characters, numbers, literals, nesting, and keys
//! the capture plan names spelled differently or repeated.

use gco_spec::json::parse;
use gco_spec::{validate_mooncake, validate_mooncake_json};

const BLOCKS: [&str; 3] = [
    include_str!("../benches/inputs/full_valid.json"),
    include_str!("../benches/inputs/full_invalid_late.json"),
    include_str!("../benches/inputs/minimal_valid.json"),
];

/// Bytes that mean something to a JSON scanner, or to the rules.
const BYTES: &[u8] = b" \t\n\r\x00\x1f\"\\/{}[]:,-+.0159eEnNItfu\xc3";

fn same_answer(text: &str) {
    let fast = validate_mooncake_json(text);
    let tree = parse(text).map(|block| validate_mooncake(&block));
    assert_eq!(fast, tree, "{text:?}");
}

fn edits(block: &str) -> impl Iterator<Item = Vec<u8>> + '_ {
    let b = block.as_bytes();
    (0..=b.len()).flat_map(move |i| {
        let delete = (i < b.len()).then(|| [&b[..i], &b[i + 1..]].concat());
        let replace = BYTES
            .iter()
            .filter(move |_| i < b.len())
            .map(move |&c| [&b[..i], &[c], &b[i + 1..]].concat());
        let insert = BYTES
            .iter()
            .map(move |&c| [&b[..i], &[c], &b[i..]].concat());
        delete.into_iter().chain(replace).chain(insert)
    })
}

#[test]
fn every_one_byte_edit_gets_the_tree_paths_answer() {
    let mut checked = 0;
    for block in BLOCKS {
        for edit in edits(block) {
            // Edits that split a UTF-8 sequence are not text.
            if let Ok(text) = std::str::from_utf8(&edit) {
                same_answer(text);
                checked += 1;
            }
        }
    }
    assert!(checked > 50_000, "{checked}");
}

#[test]
fn repeated_and_escaped_planned_keys() {
    for text in [
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "topology": {"prefill": 0}}"#,
        r#"{"mode": "both", "topology": {"prefill": 0, "decode": 1}, "topology": {"decode": 1, "prefill": 2}}"#,
        r#"{"mode": "store", "autoscaling": {"prefill": {"min_replicas": 0}}, "autoscaling": {"enabled": false}}"#,
        r#"{"mode": "store", "st\u006fre": {"enabled": true}, "store": 1}"#,
        r#"{"mode": "store", "store": 1, "st\u006fre": {"cold_tier_enabled": true}}"#,
        r#"{"m\u006fde": "both", "t\u006fpology": {"prefill": 3, "dec\u006fde": 1001}}"#,
        r#"{"mode": "both", "topology": {"prefill": 3, "decode": 1}, "topology": null}"#,
        r#"{"mode": "store", "transfer": {"protocol": "tcp", "protocol": "udp"}}"#,
        r#"{"mode": "store", "transfer": {"protocol": "\u0074cp"}, "transfer": {"device_name": "\ud800"}}"#,
    ] {
        same_answer(text);
    }
}
