#!/usr/bin/env bash
# Sets up what is missing, then runs every test: rustfmt and clippy, the
# Rust tests of the whole workspace (the backend's against a real dynalite
# server, and moto's for the history's transactions, too), the
# golden manifests against the Kubernetes schemas, the differential test
# against the Python oracle's recorded answers (and the
# oracle itself when it is beside the clone or named by GCO_ORACLE), the
# JS/TS validator package under node, the console in headless Chromium, and
# GCO's side of the table (boto3) against the backend on dynalite, the
# container image (built, run against dynalite), and the CDK app (synthesized
# with no AWS account, with assertions and cdk-nag), and the Helm chart
# (linted, rendered and schema-checked with no cluster). Exits non-zero when
# anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-tests.sh

step() { printf '\n== %s\n' "$*"; }

step "Lints: rustfmt, and clippy with warnings as errors"
cargo fmt --all --check
cargo clippy -q --workspace --all-targets --features gco-spec/schema -- -D warnings
cargo clippy -q -p gco-web --target wasm32-unknown-unknown -- -D warnings

step "Docs: every path and item ARCHITECTURE.md names exists; no module circles"
python3 tests/docs/check_architecture.py
python3 tests/docs/check_module_cycles.py

step "Rust tests (workspace)"
cargo test --workspace --features gco-spec/schema

step "The golden manifests against the Kubernetes schemas (kubernetes-validate, offline)"
# 1.33.0 (the kubectl the AWS CDK layer ships, ../shared/TOOLCHAIN.md) and
# 1.37.0 (the cluster version GCO's cdk.json deploys by default, per its
# docs/ARCHITECTURE.md).
python3 tests/manifests/schema_check.py -k 1.33.0 -k 1.37.0

step "Differential test against the Python oracle (recorded answers; live when present)"
cargo build --release -q -p gco-spec --bin gco-spec
python3 tests/differential/diff_oracle.py

step "The validator's npm package (wasm) under node"
bash scripts/build-wasm.sh
# tests/wasm/server.test.cjs compares the package with these two.
cargo build -q -p gco-console --bin gco-console
cargo build -q -p gco-spec --bin gco-spec
node --test tests/wasm/

step "Console in headless Chromium"
bash scripts/test-e2e.sh

step "GCO's side of the table: boto3 against gco-console on dynalite"
cargo build --release -q -p gco-console
python3 tests/interop/gco_python_store.py target/release/gco-console

step "The container image: scripts/image.sh, then run against dynalite"
node --test tests/image/

step "The CDK app (deploy/cdk): synthesized with no AWS account; assertions, cdk-nag"
bash scripts/test-cdk.sh

step "The Helm chart (deploy/helm): lint, template, Kubernetes 1.33 schemas; no cluster"
bash scripts/test-helm.sh
