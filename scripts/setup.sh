#!/usr/bin/env bash
# Installs what the build and the tests need, skipping what is already there.
# Idempotent: a warm machine spends about a second here.
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
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 minutes)"
  # --locked fails here: its lockfile pins a crate the registry lacks.
  cargo install -q wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm tools (binaryen's wasm-opt, dynalite, playwright-core)"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
fi

if ! python3 -c 'import boto3' 2>/dev/null; then
  log "installing boto3 for the interop test (GCO's side of the table)"
  python3 -m pip install --quiet --disable-pip-version-check 'boto3>=1.34,<2'
fi

if ! python3 -c 'import moto.server, werkzeug' 2>/dev/null || ! command -v moto_server >/dev/null; then
  log "installing moto's DynamoDB server for the history tests (dynalite has no TransactWriteItems)"
  python3 -m pip install --quiet --disable-pip-version-check 'moto[server]>=5,<6'
fi

if [ "$(python3 -c 'import kubernetes_validate.version as v; print(v.__version__)' 2>/dev/null)" != "1.37.0" ]; then
  log "installing kubernetes-validate 1.37.0 (the Kubernetes schemas, offline) for the manifests' schema check"
  python3 -m pip install --quiet --disable-pip-version-check 'kubernetes-validate==1.37.0'
fi

if [ ! -x /usr/bin/chromium ]; then
  log "installing Debian's Chromium for the browser tests (about 20 s)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
