#!/usr/bin/env bash
# How long scripts/run.sh takes to serve the console on a machine that has
# never built it: a fresh clone of this repository, an empty cargo home (no
# crates downloaded, no build cache, no wasm-bindgen-cli), an empty npm
# cache and no node_modules. The toolchain (rustup's, with its wasm target
# when rustup already has it) and node are the machine's. Prints run.sh's
# own step lines and the time until /healthz answers. Not part of the test
# run: it downloads every crate and builds everything (minutes, both
# cores); nothing else should run meanwhile.
#
#   scripts/bench_first_run.sh [WORK_DIR]   (default: a new temporary folder)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${1:-$(mktemp -d)}
PORT=${PORT:-18080}

mkdir -p "$WORK/bin" "$WORK/cargo-home"
git clone -q "$ROOT" "$WORK/repo"
# rustup's proxies only: a cargo home of its own holds what run.sh installs.
for tool in cargo rustc rustup rustdoc; do ln -sf "$(command -v "$tool")" "$WORK/bin/$tool"; done
export CARGO_HOME="$WORK/cargo-home" npm_config_cache="$WORK/npm-cache"
export PATH="$WORK/cargo-home/bin:$WORK/bin:/usr/local/bin:/usr/bin:/bin"
unset CARGO_TARGET_DIR

cd "$WORK/repo"
started=$SECONDS
GCO_CONSOLE_ADDR="127.0.0.1:$PORT" GCO_CONSOLE_DATA_DIR="$WORK/data" bash scripts/run.sh >"$WORK/run.log" 2>&1 &
run=$!
trap 'kill "$run" 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
  if ! kill -0 "$run" 2>/dev/null; then
    echo "scripts/run.sh ended before serving:" >&2
    tail -20 "$WORK/run.log" >&2
    exit 1
  fi
  sleep 1
done
grep '^\[run\]' "$WORK/run.log"
echo "serving after $((SECONDS - started)) s (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
