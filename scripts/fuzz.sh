#!/usr/bin/env bash
# Fuzzes the core and the backend with cargo-fuzz (libFuzzer, on the nightly
# toolchain). Not part of the test run.
#
#   scripts/fuzz.sh                         every target, FUZZ_SECONDS each
#   scripts/fuzz.sh json_validate byte_size those targets
#
# Targets (fuzz/fuzz_targets/): json_validate (arbitrary bytes as a block's
# JSON text: check = validate, write/read round trip), byte_size (the editors' parser and author_byte_size), share_link
# (link decoding and the state it holds), http_body (every route that reads
# a body, through the whole application on the embedded store).
#
# Env: FUZZ_SECONDS (default 600), FUZZ_JOBS (targets side by side, default 1).
# Seeds are fuzz/seeds/<target>/ (committed; an input that found a bug is
# kept there as a regression). The corpus grows in fuzz/corpus/<target>/
# (not committed); a crash, timeout (10 s) or out-of-memory (2 GiB) input is
# saved in fuzz/artifacts/<target>/ and ends that target's run. Results go to
# target/benchmarks/fuzz.jsonl, which `scripts/benchmarks.sh report` renders
# in BENCHMARKS.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

SECONDS_EACH=${FUZZ_SECONDS:-600}
JOBS=${FUZZ_JOBS:-1}
ALL=(json_validate byte_size share_link http_body)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${ALL[@]}")

log() { printf '[fuzz] %s\n' "$*" >&2; }

if ! rustup toolchain list | grep -q '^nightly'; then
  log "installing the nightly toolchain"
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

log "building ${targets[*]}"
for t in "${targets[@]}"; do
  cargo +nightly fuzz build -O "$t"
done

OUT=${CARGO_TARGET_DIR:-$ROOT/target}/benchmarks
mkdir -p "$OUT" fuzz/logs
python3 -c 'import json, os, sys, datetime
print(json.dumps({"what": "meta", "part": "fuzz", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "load": " ".join(f"{x:.2f}" for x in os.getloadavg()), "seconds": int(sys.argv[1]), "jobs": int(sys.argv[2])}))' \
  "$SECONDS_EACH" "$JOBS" > "$OUT/fuzz.jsonl"

# Runs one target and appends its result line.
run_target() {
  local t=$1 log=fuzz/logs/$1.log status=0
  mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t" "fuzz/artifacts/$t"
  local started
  started=$(date +%s)
  log "$t: ${SECONDS_EACH}s"
  cargo +nightly fuzz run -O "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    > "$log" 2>&1 || status=$?
  python3 - "$t" "$log" "$status" "$started" "$SECONDS_EACH" >> "$OUT/fuzz.jsonl" <<'PY'
import json, pathlib, re, sys
target, log, status, started, seconds = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = log.read_text(errors="replace")
stat = lambda name: int(m.group(1)) if (m := re.search(rf"stat::{name}:\s*(\d+)", text)) else None
found = sorted(p.name for p in pathlib.Path("fuzz/artifacts", target).iterdir() if p.stat().st_mtime >= started)
print(json.dumps({"what": "fuzz", "target": target, "seconds": seconds, "status": status,
                  "executions": stat("number_of_executed_units"), "per_second": stat("average_exec_per_sec"),
                  "peak_rss_mb": stat("peak_rss_mb"), "corpus": len(list(pathlib.Path("fuzz/corpus", target).iterdir())),
                  "findings": found}))
PY
  if [ "$status" -ne 0 ]; then
    log "$t: FOUND SOMETHING (exit $status): see $log and fuzz/artifacts/$t/"
  else
    log "$t: clean"
  fi
}

running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
python3 scripts/benchmarks.py report --dir "$OUT" --output BENCHMARKS.md > /dev/null
grep '"what": "fuzz"' "$OUT/fuzz.jsonl"
