//! Every rejection branch of the reference's rules, with its exact message,
//! through the fail-fast check and the collecting check.

use gco_spec::json::parse;
use gco_spec::{check_mooncake, validate_mooncake};

/// (block, path, message): messages as the Python reference prints them.
const CASES: &[(&str, &str, &str)] = &[
    ("[]", "mooncake", "mooncake block must be a mapping"),
    ("null", "mooncake", "mooncake block must be a mapping"),
    (
        "{}",
        "mooncake.mode",
        "mooncake.mode must be one of {both, disaggregated, store}, got None",
    ),
    (
        r#"{"mode": "Store"}"#,
        "mooncake.mode",
        "mooncake.mode must be one of {both, disaggregated, store}, got 'Store'",
    ),
    (
        r#"{"mode": []}"#,
        "mooncake.mode",
        "mooncake.mode must be one of {both, disaggregated, store}, got []",
    ),
    (
        r#"{"mode": {"a": [1, 2.5, null]}}"#,
        "mooncake.mode",
        "mooncake.mode must be one of {both, disaggregated, store}, got {'a': [1, 2.5, None]}",
    ),
    (
        r#"{"mode": "it's"}"#,
        "mooncake.mode",
        r#"mooncake.mode must be one of {both, disaggregated, store}, got "it's""#,
    ),
    (
        r#"{"mode": "store", "mode": 1e21}"#,
        "mooncake.mode",
        "mooncake.mode must be one of {both, disaggregated, store}, got 1e+21",
    ),
    (
        r#"{"mode": "store", "store": []}"#,
        "mooncake.store",
        "mooncake.store must be a mapping",
    ),
    (
        r#"{"mode": "store", "transfer": "tcp"}"#,
        "mooncake.transfer",
        "mooncake.transfer must be a mapping",
    ),
    (
        r#"{"mode": "store", "transfer": {"protocol": "efa"}}"#,
        "mooncake.transfer.protocol",
        "mooncake.transfer.protocol must be one of {rdma, tcp}, got 'efa'",
    ),
    (
        r#"{"mode": "store", "transfer": {"protocol": null}}"#,
        "mooncake.transfer.protocol",
        "mooncake.transfer.protocol must be one of {rdma, tcp}, got None",
    ),
    (
        r#"{"mode": "store", "transfer": {"protocol": ["tcp"]}}"#,
        "mooncake.transfer.protocol",
        "mooncake.transfer.protocol must be one of {rdma, tcp}, got ['tcp']",
    ),
    (
        r#"{"mode": "store", "transfer": {"device_name": 0}}"#,
        "mooncake.transfer.device_name",
        "mooncake.transfer.device_name must be a string, got 0",
    ),
    (
        r#"{"mode": "store", "transfer": {"device_name": null}}"#,
        "mooncake.transfer.device_name",
        "mooncake.transfer.device_name must be a string, got None",
    ),
    (
        r#"{"mode": "store", "store": {"global_segment_size": true}}"#,
        "mooncake.store.global_segment_size",
        "mooncake.store.global_segment_size: byte-size value must be an integer, got bool: True",
    ),
    (
        r#"{"mode": "store", "store": {"local_buffer_size": 1.0}}"#,
        "mooncake.store.local_buffer_size",
        "mooncake.store.local_buffer_size: byte-size value must be an int or a base-10 digit string, got float",
    ),
    (
        r#"{"mode": "store", "store": {"local_buffer_size": null}}"#,
        "mooncake.store.local_buffer_size",
        "mooncake.store.local_buffer_size: byte-size value must be an int or a base-10 digit string, got NoneType",
    ),
    (
        r#"{"mode": "store", "store": {"global_segment_size": "+5"}}"#,
        "mooncake.store.global_segment_size",
        "mooncake.store.global_segment_size: byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '+5'",
    ),
    (
        r#"{"mode": "store", "store": {"global_segment_size": "\u00a0\ud800"}}"#,
        "mooncake.store.global_segment_size",
        "mooncake.store.global_segment_size: byte-size value must be a base-10 integer string (ASCII digits only, no sign, point, or exponent), got '\\xa0\\ud800'",
    ),
    (
        r#"{"mode": "store", "store": {"global_segment_size": 9223372036854775808}}"#,
        "mooncake.store.global_segment_size",
        "mooncake.store.global_segment_size: byte-size value out of range [0, 9223372036854775807]: 9223372036854775808",
    ),
    (
        r#"{"mode": "store", "store": {"global_segment_size": "00099999999999999999999"}}"#,
        "mooncake.store.global_segment_size",
        "mooncake.store.global_segment_size: byte-size value out of range [0, 9223372036854775807]: 99999999999999999999",
    ),
    (
        r#"{"mode": "both"}"#,
        "mooncake.topology",
        "mooncake.topology is required for mode 'both' with integer 'prefill' and 'decode' counts",
    ),
    (
        r#"{"mode": "disaggregated", "topology": [1, 1]}"#,
        "mooncake.topology",
        "mooncake.topology is required for mode 'disaggregated' with integer 'prefill' and 'decode' counts",
    ),
    (
        r#"{"mode": "both", "topology": {"decode": 1}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill must be an integer in [1, 1000], got None",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 2.0}}"#,
        "mooncake.topology.decode",
        "mooncake.topology.decode must be an integer in [1, 1000], got 2.0",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": false, "decode": 1}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill must be an integer in [1, 1000], got False",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1E2, "decode": 1}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill must be an integer in [1, 1000], got 100.0",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": -0, "decode": 1}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill out of range [1, 1000]: 0",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1001}}"#,
        "mooncake.topology.decode",
        "mooncake.topology.decode out of range [1, 1000]: 1001",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": -1000000000000000000000000000000, "decode": 1}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill out of range [1, 1000]: -1000000000000000000000000000000",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1, "prefill": 1e400}}"#,
        "mooncake.topology.prefill",
        "mooncake.topology.prefill must be an integer in [1, 1000], got inf",
    ),
    (
        r#"{"mode": "store", "store": {"cold_tier_enabled": true}}"#,
        "mooncake.store.cold_tier_enabled",
        "mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true",
    ),
    (
        r#"{"mode": "store", "store": {"cold_tier_enabled": true, "enabled": 1}}"#,
        "mooncake.store.cold_tier_enabled",
        "mooncake.store.cold_tier_enabled requires mooncake.store.enabled to be true",
    ),
    (
        r#"{"mode": "store", "autoscaling": []}"#,
        "mooncake.autoscaling",
        "mooncake.autoscaling must be a mapping",
    ),
    (
        r#"{"mode": "store", "autoscaling": {"enabled": true}}"#,
        "mooncake.autoscaling.enabled",
        "mooncake.autoscaling.enabled requires a 'disaggregated' or 'both' mode, got 'store'",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"prefill": 3}}"#,
        "mooncake.autoscaling.prefill",
        "mooncake.autoscaling.prefill must be a mapping",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"decode": {"min_replicas": "1"}}}"#,
        "mooncake.autoscaling.decode.min_replicas",
        "mooncake.autoscaling.decode.min_replicas must be an integer, got '1'",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"decode": {"min_replicas": 0}}}"#,
        "mooncake.autoscaling.decode.min_replicas",
        "mooncake.autoscaling.decode.min_replicas must be >= 1, got 0",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"prefill": {"max_replicas": 2.5}}}"#,
        "mooncake.autoscaling.prefill.max_replicas",
        "mooncake.autoscaling.prefill.max_replicas must be an integer, got 2.5",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"prefill": {"max_replicas": 0}}}"#,
        "mooncake.autoscaling.prefill.max_replicas",
        "mooncake.autoscaling.prefill.max_replicas (0) must be >= min_replicas (1)",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"decode": {"min_replicas": 5, "max_replicas": 4}}}"#,
        "mooncake.autoscaling.decode.max_replicas",
        "mooncake.autoscaling.decode.max_replicas (4) must be >= min_replicas (5)",
    ),
    (
        r#"{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"decode": {"min_replicas": 99999999999999999999, "max_replicas": 9999999999999999999}}}"#,
        "mooncake.autoscaling.decode.max_replicas",
        "mooncake.autoscaling.decode.max_replicas (9999999999999999999) must be >= min_replicas (99999999999999999999)",
    ),
];

const VALID: &[&str] = &[
    r#"{"mode": "store"}"#,
    r#"{"mode": "store", "store": null, "transfer": null, "autoscaling": null}"#,
    r#"{"mode": "disaggregated", "topology": {"prefill": 1, "decode": 1000}}"#,
    r#"{"mode": "both", "topology": {"prefill": 2, "decode": 4}, "store": {"enabled": true, "cold_tier_enabled": true,
        "global_segment_size": " 4294967296\u001c", "local_buffer_size": 0}, "transfer": {"protocol": "tcp", "device_name": ""},
        "autoscaling": {"enabled": true, "prefill": {"min_replicas": 1, "max_replicas": 1}, "decode": null}}"#,
    r#"{"mode": "store", "topology": "ignored", "autoscaling": {"enabled": false, "prefill": {"min_replicas": null}}}"#,
    r#"{"m\u006fde": "st\u006fre", "store": {"global_segment_size": "9223372036854775807"}}"#,
    r#"{"mode": "store", "store": {"global_segment_size": 9223372036854775807, "cold_tier_enabled": 1}}"#,
];

#[test]
fn every_rejection_has_the_reference_message() {
    for (text, path, message) in CASES {
        let block = parse(text).expect("valid JSON");
        let error = validate_mooncake(&block).unwrap_err();
        assert_eq!(
            (error.path.as_str(), error.message.as_str()),
            (*path, *message),
            "{text}"
        );
        let report = check_mooncake(&block);
        assert_eq!(
            report.first_error(),
            Some(&error),
            "collecting check: {text}"
        );
    }
}

#[test]
fn valid_blocks_pass() {
    for text in VALID {
        let block = parse(text).expect("valid JSON");
        assert_eq!(validate_mooncake(&block), Ok(()), "{text}");
        assert!(check_mooncake(&block).is_ok(), "{text}");
    }
}

#[test]
fn the_collecting_check_reports_every_error_with_its_path() {
    let block = r#"{"mode": "both", "topology": {"prefill": 0, "decode": "2"},
        "store": {"global_segment_size": -1, "local_buffer_size": "x", "cold_tier_enabled": true},
        "transfer": {"protocol": "udp", "device_name": 1},
        "autoscaling": {"enabled": true, "prefill": {"min_replicas": 0}, "decode": {"min_replicas": 3, "max_replicas": 2}}}"#;
    let report = check_mooncake(&parse(block).unwrap());
    let paths: Vec<&str> = report.errors().map(|d| d.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "mooncake.transfer.protocol",
            "mooncake.transfer.device_name",
            "mooncake.store.global_segment_size",
            "mooncake.store.local_buffer_size",
            "mooncake.topology.prefill",
            "mooncake.topology.decode",
            "mooncake.store.cold_tier_enabled",
            "mooncake.autoscaling.prefill.min_replicas",
            "mooncake.autoscaling.decode.max_replicas",
        ]
    );
}

#[test]
fn warnings_name_what_the_reference_lets_through() {
    let block = r#"{"mode": "disaggregated", "topology": {"prefil": 1, "prefill": 1, "decode": 1},
        "store": {"offload": "gpu"}, "proxy": {"scheduling": "least_loaded"},
        "autoscaling": {"decode": {"max_replicas": 4}}, "extra": 1}"#;
    let report = check_mooncake(&parse(block).unwrap());
    assert!(report.is_ok());
    let warnings: Vec<String> = report
        .warnings()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect();
    assert_eq!(
        warnings,
        [
            "mooncake.extra: unknown key 'extra' in mooncake, which GCO ignores; known keys: mode, topology, store, transfer, proxy, autoscaling",
            "mooncake.topology.prefil: unknown key 'prefil' in mooncake.topology, which GCO ignores; did you mean 'prefill'?",
            "mooncake.store.offload: mooncake.store.offload 'gpu' is not one GCO's monitor understands (cpu, disk, none)",
            "mooncake.proxy.scheduling: mooncake.proxy.scheduling 'least_loaded' is not one GCO's monitor understands (round_robin)",
            "mooncake.autoscaling.decode: decode autoscaling bounds are ignored while mooncake.autoscaling.enabled is not true",
        ]
    );
}
