//! The whole-document paths, past the mooncake block (`benches/validate.rs`):
//! a full deploy request as JSON text, checked with every diagnostic, then
//! planned and exported as `gco inference` commands; and how checking grows
//! with the size of a spec.
//!
//! Criterion groups (`target/criterion/<group>/<bench>/`), read by
//! `scripts/benchmarks.py`:
//!
//! - `request/check_document`: `json::parse` + `check_document` (what
//!   `gco-spec validate` does with a file: every error and warning);
//! - `request/plan_deploy`: `json::parse` + `plan_deploy` with deployed
//!   regions (what the console's editor and the backend's deploy run);
//! - `request/plan`: `plan_deployment` of the checked request (the objects
//!   per target region);
//! - `request/cli`: `deploy_commands` of the checked request;
//! - `growth/env/<n>` and `growth/labels/<n>`: `json::parse` +
//!   `check_document` of the full request with `n` env entries or labels.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gco_spec::Frameworks;
use gco_spec::document::check_document;
use gco_spec::json;
use gco_spec::{DeployContext, Deployment, deploy_commands, plan_deploy, plan_deployment};

const FULL_REQUEST: &str = include_str!("inputs/requests/full.json");

/// Entry counts of the growth series.
const SIZES: [usize; 3] = [10, 100, 1000];

fn regions() -> Vec<String> {
    vec!["us-east-1".into(), "eu-west-1".into()]
}

/// The full request checked: it must deploy without an error, or the
/// timings would measure an early exit.
fn deployment(text: &str, regions: &[String]) -> Deployment {
    let ctx = DeployContext {
        deployed_regions: Some(regions),
        ..DeployContext::default()
    };
    let check = plan_deploy(&json::parse(text).expect("valid JSON"), &ctx);
    assert!(
        check.report.is_ok(),
        "the bench request has errors: {:?}",
        check.report
    );
    check.deployment.expect("a deployment")
}

/// The full request with `key` (`env` or `labels`) holding `n` entries.
fn grown(key: &str, n: usize) -> String {
    let mut request: serde_json::Value = serde_json::from_str(FULL_REQUEST).unwrap();
    let entries = (0..n).map(|i| {
        (
            format!("BENCH_{key}_{i}").to_ascii_uppercase(),
            format!("value-{i}").into(),
        )
    });
    request[key] = serde_json::Value::Object(entries.collect());
    serde_json::to_string(&request).unwrap()
}

fn bench(c: &mut Criterion) {
    let regions = regions();
    let ctx = DeployContext {
        deployed_regions: Some(&regions),
        ..DeployContext::default()
    };
    let deployment = deployment(FULL_REQUEST, &regions);

    let mut group = c.benchmark_group("request");
    group.bench_function("check_document", |b| {
        b.iter(|| {
            check_document(
                &json::parse(black_box(FULL_REQUEST)).unwrap(),
                &Frameworks::CURRENT,
            )
        })
    });
    group.bench_function("plan_deploy", |b| {
        b.iter(|| plan_deploy(&json::parse(black_box(FULL_REQUEST)).unwrap(), &ctx))
    });
    group.bench_function("plan", |b| {
        b.iter(|| plan_deployment(black_box(&deployment)).unwrap())
    });
    group.bench_function("cli", |b| {
        b.iter(|| deploy_commands(black_box(&deployment)))
    });
    group.finish();

    let mut group = c.benchmark_group("growth");
    for key in ["env", "labels"] {
        for n in SIZES {
            let text = grown(key, n);
            let report = check_document(&json::parse(&text).unwrap(), &Frameworks::CURRENT);
            assert!(report.is_ok(), "{key} x {n} has errors: {report:?}");
            group.bench_with_input(BenchmarkId::new(key, n), &text, |b, text| {
                b.iter(|| {
                    check_document(&json::parse(black_box(text)).unwrap(), &Frameworks::CURRENT)
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // 10 benchmarks at ~2 s each, as in benches/validate.rs.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(50)
        .configure_from_args();
    targets = bench
}
criterion_main!(benches);
