#!/usr/bin/env bash
# One benchmark command (not part of the test run): measures, collects JSON
# lines in target/benchmarks/<part>.jsonl, then writes BENCHMARKS.md and
# prints the same tables (scripts/benchmarks.py renders both).
#
#   scripts/benchmarks.sh              every part, then the report
#   scripts/benchmarks.sh http wasm    those parts, then the report (other
#                                      parts keep their last results, dated)
#   scripts/benchmarks.sh report       the report only
#
# Parts:
#   native   criterion (core/benches: validate.rs, spec.rs) and the Python
#            reference (scripts/bench_reference.py) on the same texts
#   identity criterion (backend/benches/identity.rs): verifying a request's
#            identity per --auth mode, with the ALB's key cached
#   wasm     core/pkg/node against ajv in one node process
#            (scripts/bench_wasm.cjs), and the Python reference again
#   sizes    the gzipped validator wasm and console wasm + JS, as
#            scripts/build-wasm.sh and scripts/build-web.sh report them
#   browser  the console in headless Chromium (scripts/bench_browser.cjs)
#   wire     what Chromium downloads to open the editor, cold and on a
#            reload, and the cold load's time on an emulated 10 Mbit/s,
#            40 ms link (scripts/bench_wire.cjs); with WIRE_BEFORE_DIST and
#            WIRE_BEFORE_BIN (an older dist/ and gco-console) also theirs
#   http     the release backend under wrk (scripts/bench_wrk.lua) on the
#            embedded store and on dynalite, seeded by scripts/bench_seed.py
#   view     read cost against viewers (scripts/bench_view.cjs): 1, 10 and
#            50 viewers polling the list and a page every 3 s for
#            VIEW_SECONDS (default 60; QUICK 6) at 1,000 and 10,000
#            endpoints on dynalite, with the view and with today's reads
#            (BEFORE_BINARY, a release gco-console built from the code
#            before the view; else --refresh-interval 0s, which reads the
#            table for every list and page as that code did)
#   history  writes with the history against the same writes without it
#            (backend/examples/bench_history.rs): HISTORY_WRITES changes
#            (default 500; QUICK 50) one after another, on the embedded
#            store and on moto's DynamoDB server (TransactWriteItems against
#            UpdateItem), one run each
#   audit    the audit view at AUDIT_ENTRIES history entries (default
#            100,000; QUICK 5,000) on dynalite (scripts/bench_audit.cjs):
#            the API's first page with each filter, and in Chromium the
#            first page after a click on "History", after a filter's
#            change, and on a cold load, AUDIT_REPEAT times each (default
#            10; QUICK 3)
#   fuzz     only when named: scripts/fuzz.sh, every cargo-fuzz target for
#            FUZZ_SECONDS (default 600) each
#
# Env:
#   QUICK=1       everything very briefly, for smoke tests (the report says so)
#   DURATION      wrk time per run (default 4s; QUICK 1s)
#   ROUNDS        read routes take turns this many times per setting, and
#                 the report takes each one's median (default 3; QUICK 1):
#                 this machine's speed drifts by a third from minute to minute
#   CONNECTIONS   wrk connection counts (default "1 16 64")
#   SIZES         endpoint counts seeded in turn (default "100 1000 10000";
#                 QUICK "20 100 300"): the first is a list-growth point only,
#                 the others get every read route at every connection count
#   STORES        "embedded dynalite" (default) or either one
#   BUILD=0       use what is built (core/pkg, dist/, the release backend)
#                 instead of building it first
#   GCO_ORACLE    path of mooncake_reference.py (default
#                 ../shared/reference/ beside the clone); when it is absent
#                 the reference's figures are left out and the report says so
#
# The whole run takes about 30 minutes on 2 cores; the http part is most of
# it (about 2 x 97 wrk runs of DURATION).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  DURATION=${DURATION:-1s}
  ROUNDS=${ROUNDS:-1}
  SIZES=${SIZES:-20 100 300}
  # criterion's own knobs: a tenth of a second per benchmark.
  CRITERION_ARGS=(--warm-up-time 0.05 --measurement-time 0.1 --sample-size 10)
  REFERENCE_ARGS=(--repeat 1)
else
  DURATION=${DURATION:-4s}
  ROUNDS=${ROUNDS:-3}
  SIZES=${SIZES:-100 1000 10000}
  CRITERION_ARGS=()
  REFERENCE_ARGS=()
fi
CONNECTIONS=${CONNECTIONS:-1 16 64}
STORES=${STORES:-embedded dynalite}
BUILD=${BUILD:-1}
export QUICK
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=$TARGET_DIR/benchmarks
mkdir -p "$OUT"

log() { printf '[benchmarks] %s\n' "$*" >&2; }

# Starts a part's result file: a fresh file whose first line says when and
# how, with the load average (other work on the machine skews every figure).
begin() {
  local part=$1
  log "== $part"
  python3 -c 'import json, os, sys, datetime
print(json.dumps({"what": "meta", "part": sys.argv[1], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
                  "quick": sys.argv[2] == "1", "duration": sys.argv[3], "connections": sys.argv[4], "sizes": sys.argv[5],
                  "rounds": int(sys.argv[6])}))' \
    "$part" "$QUICK" "$DURATION" "$CONNECTIONS" "$SIZES" "$ROUNDS" > "$OUT/$part.jsonl"
}

# Builds, once per invocation, what the parts run on.
declare -A built=()
need() {
  local what=$1
  [ -n "${built[$what]:-}" ] && return
  built[$what]=1
  if [ "$BUILD" = 0 ]; then return; fi
  case $what in
    # Over budget is a finding for the sizes part, not a stop (the scripts
    # exit 1 for it too, so a real build error shows above this line).
    wasm) bash scripts/build-wasm.sh >&2 || log "scripts/build-wasm.sh failed: over budget, or see above" ;;
    web) bash scripts/build-web.sh >&2 || log "scripts/build-web.sh failed: over budget, or see above" ;;
    backend) cargo build --release -q -p gco-console ;;
  esac
}

# The Python reference on the criterion and node inputs, once per invocation.
# It is not part of the repository: when it is absent, the report says so
# and leaves its columns empty.
ORACLE=${GCO_ORACLE:-$ROOT/../shared/reference/mooncake_reference.py}
reference() {
  [ -n "${built[reference]:-}" ] && return
  built[reference]=1
  begin reference
  if [ ! -f "$ORACLE" ]; then
    log "the Python reference is ABSENT (not found at $ORACLE; set GCO_ORACLE): no reference figures"
    python3 -c 'import json, sys; print(json.dumps({"what": "reference_absent", "path": sys.argv[1]}))' "$ORACLE" >> "$OUT/reference.jsonl"
    return
  fi
  GCO_ORACLE=$ORACLE python3 scripts/bench_reference.py "${REFERENCE_ARGS[@]}" core/benches/inputs/*.json >> "$OUT/reference.jsonl"
}

part_native() {
  begin native
  local since
  since=$(date +%s)
  cargo bench -q -p gco-spec --bench validate --bench spec -- "${CRITERION_ARGS[@]}" >&2
  python3 scripts/benchmarks.py criterion --dir "$TARGET_DIR/criterion" --since "$since" >> "$OUT/native.jsonl"
  reference
}

part_identity() {
  begin identity
  local since
  since=$(date +%s)
  cargo bench -q -p gco-console --bench identity -- "${CRITERION_ARGS[@]}" >&2
  python3 scripts/benchmarks.py criterion --dir "$TARGET_DIR/criterion" --since "$since" >> "$OUT/identity.jsonl"
}

part_wasm() {
  need wasm
  begin wasm
  node scripts/bench_wasm.cjs >> "$OUT/wasm.jsonl"
  reference
}

part_sizes() {
  need wasm
  need web
  begin sizes
  # The build scripts own what is counted; their size line is parsed.
  { bash scripts/build-wasm.sh --size-only || true; bash scripts/build-web.sh --size-only || true; } 2>/dev/null \
    | python3 scripts/benchmarks.py sizes >> "$OUT/sizes.jsonl"
}

part_browser() {
  need web
  need backend
  begin browser
  node scripts/bench_browser.cjs >> "$OUT/browser.jsonl"
}

part_wire() {
  need web
  need backend
  begin wire
  WIRE_LABEL=after node scripts/bench_wire.cjs >> "$OUT/wire.jsonl"
  # The before figures: another release's dist/ and backend, when given.
  if [ -n "${WIRE_BEFORE_DIST:-}" ] && [ -n "${WIRE_BEFORE_BIN:-}" ]; then
    WIRE_LABEL=before GCO_DIST="$WIRE_BEFORE_DIST" GCO_CONSOLE_BIN="$WIRE_BEFORE_BIN" \
      node scripts/bench_wire.cjs >> "$OUT/wire.jsonl"
  fi
}

# --- http ---------------------------------------------------------------

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_http() {
  for _ in $(seq 300); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done
  log "no answer from $1"
  return 1
}

# Processes this script started, stopped on exit (and only those).
pids=()
tmp=$(mktemp -d)
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Starts gco-console on $1 (embedded | dynalite); sets $base.
start_server() {
  local store=$1 port args
  port=$(free_port)
  args=(--addr "127.0.0.1:$port" --regions us-east-1,eu-west-1 --dist /nonexistent)
  if [ "$store" = dynalite ]; then
    local dport
    dport=$(free_port)
    # In memory (no --path): the figure is the backend's, not a disk's.
    node_modules/.bin/dynalite --port "$dport" >"$tmp/dynalite.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$dport") 2>/dev/null && break; sleep 0.1; done
    args+=(--dynamodb-endpoint "http://127.0.0.1:$dport" --create-table --history-table off)
  else
    args+=(--data-dir "$tmp/store-$port")
  fi
  RUST_LOG=warn "$TARGET_DIR/release/gco-console" "${args[@]}" >"$tmp/server.log" 2>&1 &
  server_pid=$!
  pids+=($!)
  base="http://127.0.0.1:$port"
  wait_http "$base/healthz"
}

# Stops every process started so far (the server, and dynalite).
stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

# The server's CPU time (clock ticks, user + system) and its context switches
# (voluntary, involuntary) so far, summed over its threads.
server_usage() {
  python3 - "$server_pid" <<'PY'
import glob, sys
pid = sys.argv[1]
ticks = sum(int(f) for f in open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11:13])
switches = [0, 0]
for status in glob.glob(f"/proc/{pid}/task/*/status"):
    for line in open(status):
        for i, name in enumerate(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
            if line.startswith(name + ":"):
                switches[i] += int(line.split()[1])
print(ticks, *switches)
PY
}

# The file run_wrk appends to.
wrk_out=$OUT/http.jsonl

# One wrk run: route, connections, seeded count, store; appends a JSON line,
# with the CPU time the server and wrk spent per request and the server's
# context switches per request (where a co-located load generator's cost
# shows: see BENCHMARKS.md).
run_wrk() {
  local route=$1 c=$2 n=$3 store=$4 threads=$(( $2 < 2 ? $2 : 2 ))
  log "$store: $route, $n endpoints, $c connections, $DURATION"
  local before after wrk_before wrk_after
  before=$(server_usage)
  # `times` in this shell, not a subshell: its second line is the CPU time
  # of this shell's children so far, and wrk is the next one.
  times >"$tmp/times"; wrk_before=$(tail -1 "$tmp/times")
  BENCH_ROUTE=$route BENCH_N=$n BENCH_BODY=core/benches/inputs/requests/full.json BENCH_OUT="$wrk_out" \
    BENCH_TAG="{\"store\": \"$store\", \"endpoints\": $n, \"connections\": $c}" \
    wrk -t"$threads" -c"$c" -d"$DURATION" --timeout 30s -s scripts/bench_wrk.lua "$base" >/dev/null
  times >"$tmp/times"; wrk_after=$(tail -1 "$tmp/times")
  after=$(server_usage)
  python3 scripts/benchmarks.py usage --file "$wrk_out" --ticks "$(getconf CLK_TCK)" \
    --server "$before" "$after" --wrk "$wrk_before" "$wrk_after"
  # Requests still queued when wrk stops (a slow list on dynalite, say) would
  # weigh on the next run: one list, answered after them, lets them drain.
  # Until they have, the backend may answer 503 (its store calls give up
  # after 4 s): ask again, for up to five minutes in all.
  local deadline=$((SECONDS + 300))
  until curl -fs -o /dev/null --max-time $((deadline - SECONDS)) "$base/api/endpoints"; do
    if [ $((deadline - SECONDS)) -le 5 ]; then log "the server did not drain within five minutes"; break; fi
    sleep 5
  done
}

part_http() {
  command -v wrk >/dev/null || { log "wrk is missing: apt-get install -y wrk"; exit 1; }
  need backend
  begin http
  local sizes=($SIZES) store size seeded c route
  for store in $STORES; do
    start_server "$store"
    seeded=0
    for size in "${sizes[@]}"; do
      python3 scripts/bench_seed.py "$base" "$seeded" "$size" core/benches/inputs/requests/full.json
      seeded=$size
      if [ "$size" = "${sizes[0]}" ]; then
        run_wrk list 1 "$size" "$store"   # a growth point only
        continue
      fi
      for c in $CONNECTIONS; do
        for _ in $(seq "$ROUNDS"); do
          for route in trivial validate get page list; do run_wrk "$route" "$c" "$size" "$store"; done
        done
      done
    done
    # Writes last: deploy adds endpoints, which would change the list sizes.
    for c in $CONNECTIONS; do
      for route in deploy topology; do run_wrk "$route" "$c" "$seeded" "$store"; done
    done
    stop_servers
  done
}

part_view() {
  need backend
  begin view
  local seconds=${VIEW_SECONDS:-60} sizes=${VIEW_SIZES:-1000,10000}
  [ "$QUICK" = 1 ] && seconds=${VIEW_SECONDS:-6} && sizes=${VIEW_SIZES:-200,1000}
  node scripts/bench_view.cjs --binary target/release/gco-console --label view \
    --sizes "$sizes" --viewers 1,10,50 --seconds "$seconds" >> "$OUT/view.jsonl"
  if [ -n "${BEFORE_BINARY:-}" ]; then
    node scripts/bench_view.cjs --binary "$BEFORE_BINARY" --label before \
      --sizes "$sizes" --viewers 1,10,50 --seconds "$seconds" >> "$OUT/view.jsonl"
  else
    node scripts/bench_view.cjs --binary target/release/gco-console --label no-view \
      --console-arg=--refresh-interval=0s --sizes "$sizes" --viewers 1,10,50 --seconds "$seconds" >> "$OUT/view.jsonl"
  fi
}

part_history() {
  begin history
  local writes=${HISTORY_WRITES:-500}
  [ "$QUICK" = 1 ] && writes=${HISTORY_WRITES:-50}
  cargo run --release -q -p gco-console --example bench_history -- --writes "$writes" >> "$OUT/history.jsonl"
}

part_audit() {
  need backend
  need web
  begin audit
  local entries=${AUDIT_ENTRIES:-100000} repeat=${AUDIT_REPEAT:-10}
  [ "$QUICK" = 1 ] && entries=${AUDIT_ENTRIES:-5000} && repeat=${AUDIT_REPEAT:-3}
  GCO_CONSOLE_BIN=${GCO_CONSOLE_BIN:-$TARGET_DIR/release/gco-console} \
    node scripts/bench_audit.cjs --entries "$entries" --repeat "$repeat" >> "$OUT/audit.jsonl"
}

# --- main ---------------------------------------------------------------

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(native identity wasm sizes browser wire http view history audit)
for part in "${parts[@]}"; do
  case $part in
    native | identity | wasm | sizes | browser | wire | http | view | history | audit) "part_$part" ;;
    # Named only: 40 minutes of fuzzing (FUZZ_SECONDS per target).
    fuzz) bash scripts/fuzz.sh ;;
    report) ;;
    *) log "unknown part '$part' (native, identity, wasm, sizes, browser, wire, http, view, history, audit, fuzz, report)"; exit 2 ;;
  esac
done
python3 scripts/benchmarks.py report --dir "$OUT" --output BENCHMARKS.md
