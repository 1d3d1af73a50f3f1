#!/usr/bin/env bash
# Installs what building and running the console needs, skipping what is
# already there: the wasm target, wasm-bindgen-cli (the version Cargo.lock
# pins), binaryen's wasm-opt and esbuild (package.json's dependencies). The
# tests' tools are scripts/setup-tests.sh's. Idempotent: a warm machine
# spends about a second here.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/"/,"",$3); print $3; exit}' Cargo.lock 2>/dev/null || true)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}

log() { printf '[setup] %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about a minute)"
  # --locked fails here: its lockfile pins a crate the registry lacks.
  # Unoptimised, without debug info and without TLS (only its test
  # runner's downloads use it): it builds in 73 s instead of 190 s on 2
  # cores, the most of a first run it can save, and binds the console's
  # wasm in 1.3 s instead of 0.3 s, to the same bytes.
  CARGO_PROFILE_DEV_DEBUG=0 cargo install -q --debug --no-default-features \
    wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -x node_modules/.bin/esbuild ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing binaryen's wasm-opt and esbuild (npm)"
  npm ci --omit=dev --no-audit --no-fund --loglevel=error
fi
