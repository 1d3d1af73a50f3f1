#!/usr/bin/env bash
# Sets up what is missing, builds the console and the backend, and runs the
# console at http://127.0.0.1:8080 on the embedded store (./.data), with a
# sample list of deployed regions. Extra arguments go to gco-console (see
# `target/release/gco-console --help`), e.g. --dynamodb-endpoint.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build-web.sh
cargo build --release -q -p gco-console
echo "GCO console: http://127.0.0.1:8080" >&2
exec target/release/gco-console \
  --addr "${GCO_CONSOLE_ADDR:-127.0.0.1:8080}" \
  --data-dir "${GCO_CONSOLE_DATA_DIR:-.data}" \
  --regions "${GCO_REGIONS:-us-east-1,us-west-2,eu-west-1}" \
  --dist dist \
  "$@"
