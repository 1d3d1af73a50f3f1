#!/usr/bin/env bash
# Sets up what is missing, then runs every test: the Rust tests of the whole
# workspace (the backend's against a real dynalite server too), the
# differential test against the Python oracle, the JS/TS validator package
# under node, and the console in headless Chromium. Exits non-zero when
# anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "Rust tests (workspace)"
cargo test --workspace --features gco-spec/schema

step "Differential test against the Python oracle"
cargo build --release -q -p gco-spec --bin gco-spec
python3 tests/differential/diff_oracle.py

step "JS/TS validator package (wasm) under node"
bash scripts/build-wasm.sh
node --test tests/wasm/

step "Console in headless Chromium"
bash scripts/test-e2e.sh
