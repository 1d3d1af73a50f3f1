#!/usr/bin/env bash
# Load figures for the backend (not part of the test run): req/s and p99 of
# GET /api/endpoints/{name} and POST /api/validate at 64 connections on the
# embedded store, against the trivial /healthz route of the same server in
# the same run. Uses wrk (Debian package; installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

cargo build --release -q -p gco-console
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUST_LOG=warn target/release/gco-console --addr "127.0.0.1:$port" --data-dir "$data" --regions us-east-1,eu-west-1 --dist /nonexistent &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$data" "$lua"' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

body='{"endpoint_name": "bench", "mooncake_mode": "both", "prefill_replicas": 2, "decode_replicas": 4, "mooncake_store": {"global_segment_size": "4294967296", "local_buffer_size": "2147483648"}, "mooncake_transfer": {"protocol": "tcp", "device_name": ""}, "mooncake_autoscaling": {"enabled": true, "prefill": {"min_replicas": 1, "max_replicas": 4}, "decode": {"min_replicas": 2, "max_replicas": 8}}, "env": {"HF_HOME": "/models"}}'
curl -fs -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$port/api/endpoints" >/dev/null

lua=$(mktemp --suffix=.lua)
python3 - "$body" > "$lua" <<'PY'
import json, sys
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print('wrk.body = ' + json.dumps(sys.argv[1]))
PY

# Prints "req/s p50 p99" for one route.
measure() {
  local out
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$@")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  echo "$rps $p50 $p99"
}

base="http://127.0.0.1:$port"
read -r t_rps t_p50 t_p99 < <(measure "$base/healthz")
read -r g_rps g_p50 g_p99 < <(measure "$base/api/endpoints/bench")
read -r v_rps v_p50 v_p99 < <(measure -s "$lua" "$base/api/validate")

printf '\n%d connections, %s each, embedded store, %s\n' "$CONNECTIONS" "$DURATION" "$(nproc) cores"
printf '%-28s %12s %10s %10s %8s\n' route req/s p50 p99 ratio
row() { printf '%-28s %12s %10s %10s %8s\n' "$1" "$2" "$3" "$4" "$(python3 -c "print(f'{$2/$t_rps:.2f}')")"; }
row "GET /healthz (trivial)" "$t_rps" "$t_p50" "$t_p99"
row "GET /api/endpoints/{name}" "$g_rps" "$g_p50" "$g_p99"
row "POST /api/validate" "$v_rps" "$v_p50" "$v_p99"
echo "target: ratio >= 0.70 of the trivial route"
