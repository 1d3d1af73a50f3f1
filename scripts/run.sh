#!/usr/bin/env bash
# Sets up what is missing, builds the console and the backend, and runs the
# console at http://127.0.0.1:8080 on the embedded store (./.data), with a
# sample list of deployed regions. Extra arguments go to gco-console (see
# `target/quick-release/gco-console --help`), e.g. --dynamodb-endpoint.
#
# Installs only what running the console needs (scripts/setup.sh); the
# tests' tools are scripts/test.sh's. The backend's build needs none of the
# setup and is most of a first run, so it starts first and runs beside the
# setup and the console's build (its own profile directory: the two cargo
# builds do not wait for each other), with the profile that builds fast
# (`quick-release`: no whole-program optimisation, which would take about 6%
# off its instructions per request and minutes off a first run).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[run] %s\n' "$*" >&2; }
step_started=$SECONDS
step() { log "$1 ($((SECONDS - step_started)) s)"; step_started=$SECONDS; }

cargo build --profile quick-release -q -p gco-console &
backend=$!
bash scripts/setup.sh
step "set up"
bash scripts/build-web.sh
step "console built"
wait "$backend"
step "backend built"
echo "GCO console: http://127.0.0.1:8080" >&2
exec target/quick-release/gco-console \
  --addr "${GCO_CONSOLE_ADDR:-127.0.0.1:8080}" \
  --data-dir "${GCO_CONSOLE_DATA_DIR:-.data}" \
  --regions "${GCO_REGIONS:-us-east-1,us-west-2,eu-west-1}" \
  --dist dist \
  "$@"
