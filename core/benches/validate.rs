//! Checking a mooncake block given as JSON text: parse + validate, verdict out.
//!
//! The inputs are the files in `benches/inputs/`; `scripts/bench_reference.py`
//! times the Python reference (`json.loads` + `validate_mooncake_spec`) on the
//! very same files, and `scripts/benchmarks.sh native` runs both and compares them.
//!
//! One criterion group per input (`target/criterion/<input>/<bench>/`):
//!
//! - `tree`: `json::parse(text)` then `validate_mooncake(&value)`;
//! - `check`: `json::parse(text)` then `check_mooncake(&value)` (all
//!   diagnostics and warnings; for the record);
//! - `tree_parse`: the parse alone, so the rules' share is the difference.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use gco_spec::{check_mooncake, json, validate_mooncake};

/// (name, text, the reference's verdict: `None` if valid, else its message).
const INPUTS: [(&str, &str, Option<&str>); 3] = [
    ("full_valid", include_str!("inputs/full_valid.json"), None),
    (
        "minimal_valid",
        include_str!("inputs/minimal_valid.json"),
        None,
    ),
    (
        "full_invalid_late",
        include_str!("inputs/full_invalid_late.json"),
        Some("mooncake.autoscaling.decode.max_replicas (2) must be >= min_replicas (8)"),
    ),
];

/// The port must give the reference's verdict, or the timings mean nothing.
fn check_verdict(name: &str, text: &str, expected: Option<&str>) {
    let verdict = validate_mooncake(&json::parse(text).expect("input is valid JSON"));
    match (&verdict, expected) {
        (Ok(()), None) => {}
        (Err(d), Some(message)) if d.message == message => {}
        _ => panic!("{name}: the port gave {verdict:?}, the reference says {expected:?}"),
    }
}

fn bench(c: &mut Criterion) {
    for (name, text, expected) in INPUTS {
        check_verdict(name, text, expected);

        let mut group = c.benchmark_group(name);
        group.bench_function("tree", |b| {
            b.iter(|| {
                let value = json::parse(black_box(text)).unwrap();
                validate_mooncake(&value)
            })
        });
        group.bench_function("check", |b| {
            b.iter(|| {
                let value = json::parse(black_box(text)).unwrap();
                check_mooncake(&value)
            })
        });
        group.bench_function("tree_parse", |b| b.iter(|| json::parse(black_box(text))));
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // 9 benchmarks at ~2 s each keeps the whole run well under a minute.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(50)
        .configure_from_args();
    targets = bench
}
criterion_main!(benches);
