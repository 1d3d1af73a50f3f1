#!/usr/bin/env bash
# Side-by-side benchmark: checking a mooncake block given as JSON text.
#
#   Rust:   criterion, core/benches/validate.rs (fast path, tree path, ...)
#   Python: scripts/bench_reference.py, json.loads + validate_mooncake_spec
#
# Both sides read the same files, core/benches/inputs/*.json. The table gives
# each path's mean time per call and Python / Rust fast path; the target is
# the fast path at least 10 times faster than the reference on the full block.
#
# Usage: scripts/bench.sh [extra criterion args, e.g. a filter]
# Env:   GCO_ORACLE  path of mooncake_reference.py (see bench_reference.py)
#        TARGET      the speed-up required (default 10)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target_dir=${CARGO_TARGET_DIR:-$repo/target}
criterion_dir=$target_dir/criterion
target=${TARGET:-10}

echo "== cargo bench -q -p gco-spec --bench validate" >&2
cargo bench -q -p gco-spec --bench validate -- "$@" >&2

echo "== python3 scripts/bench_reference.py" >&2
python_out=$(python3 scripts/bench_reference.py core/benches/inputs/*.json)

CRITERION_DIR=$criterion_dir TARGET=$target PYTHON_OUT=$python_out python3 - <<'EOF'
import json, os, sys
from pathlib import Path

crit = Path(os.environ["CRITERION_DIR"])
target = float(os.environ["TARGET"])
python = {r["input"]: r for r in map(json.loads, os.environ["PYTHON_OUT"].splitlines())}

def mean_ns(group, bench):
    path = crit / group / bench / "new" / "estimates.json"
    try:
        return json.loads(path.read_text())["mean"]["point_estimate"]
    except FileNotFoundError:
        return None

def fmt(ns):
    return "-" if ns is None else f"{ns:,.0f}"

rows = []
for name in ["full_valid", "full_invalid_late", "minimal_valid"] + sorted(set(python) - {"full_valid", "full_invalid_late", "minimal_valid"}):
    if name not in python:
        continue
    fast, tree, check = (mean_ns(name, b) for b in ("fast", "tree", "check"))
    lazy_parse, tree_parse = mean_ns(name, "lazy_parse"), mean_ns(name, "tree_parse")
    py = python[name]["ns"]
    ratio = py / fast if fast else None
    rows.append((name, fast, tree, check, lazy_parse, tree_parse, py, ratio))

head = ("input", "rust fast ns", "rust tree ns", "rust check ns", "lazy parse ns", "tree parse ns", "python ns", "python/fast")
cells = [head] + [
    (n, fmt(f), fmt(t), fmt(c), fmt(lp), fmt(tp), fmt(p), "-" if r is None else f"{r:.1f}x")
    for n, f, t, c, lp, tp, p, r in rows
]
widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
for i, row in enumerate(cells):
    print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))))
    if i == 0:
        print("  ".join("-" * w for w in widths))
print()
print("(criterion mean per call; python: best of 7 timeit repeats per call)")

full = next((r for r in rows if r[0] == "full_valid"), None)
if full is None or full[7] is None:
    print("FAIL: no figures for full_valid")
    sys.exit(1)
verdict = "PASS" if full[7] >= target else "FAIL"
print(f"{verdict}: full block, Rust fast path is {full[7]:.1f}x faster than the reference (target {target:g}x)")
sys.exit(0 if verdict == "PASS" else 1)
EOF
