#!/usr/bin/env python3
"""Collects and renders the results of scripts/benchmarks.sh.

  benchmarks.py criterion --dir target/criterion --since EPOCH
      one JSON line per criterion benchmark written since EPOCH (its mean)
  benchmarks.py sizes  < output of build-wasm.sh/build-web.sh --size-only
      one JSON line per artifact
  benchmarks.py usage --file http.jsonl --ticks N --server BEFORE AFTER --wrk BEFORE AFTER
      adds CPU time per request (the server's, wrk's) and the server's
      context switches per request to the file's last line (the run just
      done): BEFORE/AFTER are "ticks voluntary involuntary" for the server
      and bash's `times` line of children for wrk
  benchmarks.py report --dir target/benchmarks --output BENCHMARKS.md
      writes BENCHMARKS.md (machine, date, method, tables with the figures
      and the PASS/behind marks of the targets that stand) from every
      <part>.jsonl there, and prints the tables

A part whose file is missing shows as not run; each part's date comes from
the first line of its file, so parts run on different days say so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

# --- targets ---------------------------------------------------------------------
# The native speed-up over the reference, the validator's gzip budget and
# validate's share of the trivial route's req/s were retired (issue 25): their
# figures are still shown, unmarked.

KEYSTROKE_MS = 16.0  # keystroke to message, full block, median (one frame at 60 Hz)
WIRE_COLD_BYTES = 240_000
WIRE_RELOAD_BYTES = 10_000

# Where the console's wasm goes (issue 41), by `twiggy top` on the build
# with names kept (wasm-opt -g with build-web.sh's passes), grouped by the
# crate that names each function. Measured by hand on 2026-12-07, not by
# the benchmark command (it would need twiggy).
WASM_PARTS = """Where the console's wasm goes: `twiggy top` on the build with names kept
(wasm-opt -g with `build-web.sh`'s passes), grouped by the crate naming each
function; by hand, 2026-12-07 (824,753 B of code and data):

| part | bytes (raw) | what was done |
| --- | --- | --- |
| `gco_web`: the console's views and logic (293 functions; `app` alone 30 KB) | 168,109 | kept: every view is a feature; shared widgets over signals (issue 44) is where monomorphised views shrink |
| `core`: formatting, slices, iterators | 104,209 | the fixed-precision float formatter cut (below); the rest is used |
| `gco_spec`: the rules, plan, records, JSON | 95,038 | kept: the editor checks as the server does, by design |
| `reactive_graph`: signals, memos, actions | 91,582 | kept (Leptos) |
| data: messages, vtables, tables | 81,216 | Unicode's case tables cut (below); GCO's messages are the product |
| `tachys`: Leptos's renderer | 64,273 | kept (views already type-erased: `--cfg erase_components`) |
| generic impls (`<T as ...>`) | 53,492 | kept |
| `leptos`: components, children | 42,228 | kept |
| `alloc`: `String`, `Vec`, `BTreeMap` | 19,695 | kept |
| `f64`'s `Display` | 9,429 | kept: serde's error text (`Unexpected::Float`) needs it as long as the console reads answers with serde |

Cut: `describe_byte_size`'s `format!("{:.2}")` (Rust's fixed-precision float
formatting; now integers, `bytesize::two_decimals`) and the list search's
`str::to_lowercase` (Unicode's case tables; now ASCII folding: endpoint names
are DNS labels): 15,252 B raw, 7,738 B gzipped together (839,964 to 824,712 B
raw; 343,893 to 336,155 B gzip -9).
"""

# Per-request usage added to each http line by `benchmarks.py usage`.
USAGE_KEYS = ("server_cpu_us", "wrk_cpu_us", "server_switches", "server_involuntary")

BLOCK_INPUTS = ["full_valid", "full_invalid_late", "minimal_valid"]


def mark(ok: bool | None) -> str:
    return "-" if ok is None else ("PASS" if ok else "behind")


# --- collect -------------------------------------------------------------------


def collect_criterion(directory: Path, since: float) -> None:
    """Criterion's mean per benchmark (`<group>/<bench>[/<param>]/new/estimates.json`)."""
    for est in sorted(directory.glob("**/new/estimates.json")):
        if est.stat().st_mtime < since:
            continue  # an older run's, of a benchmark not run this time
        bench_id = est.parent.parent.relative_to(directory).as_posix()
        mean = json.loads(est.read_text())["mean"]["point_estimate"]
        print(json.dumps({"what": "criterion", "id": bench_id, "ns": mean}))


SIZE_LINES = [
    # build-wasm.sh: "core/pkg/web (gco_spec_bg.wasm + gco_spec.js): 211000 bytes raw, 95000 bytes gzip -9 (budget 98304)"
    (re.compile(r"^(\S+ \([^)]*\)): (\d+) bytes raw, (\d+) bytes gzip -9 \(budget (\d+)\)"), "validator"),
    # build-web.sh: "console: wasm 559574 bytes raw; wasm + JS 244879 bytes gzip -9 (budget 256000)"
    (re.compile(r"^(console): wasm (\d+) bytes raw; wasm \+ JS (\d+) bytes gzip -9 \(budget (\d+)\)"), "console"),
]


def collect_sizes(text: str) -> None:
    for line in text.splitlines():
        for pattern, name in SIZE_LINES:
            m = pattern.match(line)
            if m:
                budget = {"budget": int(m[4])} if m[4] else {}
                print(json.dumps({"what": "size", "name": name, "file": m[1], "raw": int(m[2]), "gzip": int(m[3]), **budget}))


# --- report --------------------------------------------------------------------


def load(directory: Path) -> dict[str, list[dict]]:
    parts = {}
    for f in sorted(directory.glob("*.jsonl")):
        parts[f.stem] = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return parts


def run(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def machine() -> list[tuple[str, str]]:
    cpu, mem = "?", "?"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        kb = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        pass
    os_name = platform.system()
    try:
        os_name = next(line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release") if line.startswith("PRETTY_NAME="))
    except (OSError, StopIteration):
        pass
    return [
        ("CPU", f"{cpu} ({os.cpu_count()} logical CPUs, `nproc` {run('nproc')})"),
        ("Memory", mem),
        ("OS", f"{os_name}, kernel {platform.release()}"),
        ("rustc", run("rustc", "--version")),
        ("node", run("node", "--version")),
        ("Python", platform.python_version()),
        ("Chromium", run("/usr/bin/chromium", "--version")),
        ("wrk", run("wrk", "--version")),
    ]


def table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; column widths padded so it also reads as plain text."""
    cells = [head] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(head), "| " + " | ".join("-" * w for w in widths) + " |"] + [line(r) for r in cells[1:]])


def us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:,.2f} µs"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b; None when either is unknown or b is 0 (a 0 is a real 0)."""
    return a / b if a is not None and b else None


def fx(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}x"


class Report:
    def __init__(self, parts: dict[str, list[dict]]):
        self.parts = parts
        self.out: list[str] = []
        self.summary: list[list[str]] = []

    def meta(self, part: str) -> dict | None:
        return next((r for r in self.parts.get(part, []) if r.get("what") == "meta"), None)

    def rows(self, part: str, what: str) -> list[dict]:
        return [r for r in self.parts.get(part, []) if r.get("what") == what]

    def section(self, title: str, part: str, method: str) -> bool:
        self.out += [f"## {title}", ""]
        m = self.meta(part)
        if m is None:
            self.out += [f"Not run (`scripts/benchmarks.sh {part}`).", ""]
            return False
        when = m["date"] + (f" (load average {m['load']} at the start)" if m.get("load") else "")
        when += " — **QUICK=1 smoke run, not a measurement**" if m.get("quick") else ""
        self.out += [f"Run {when}.", "", method.strip(), ""]
        return True

    def reference_absent(self) -> list[str]:
        """A note when the run had no Python reference to time (it is not
        part of the repository)."""
        absent = self.rows("reference", "reference_absent")
        if not absent:
            return []
        return [f"**The Python reference was absent** (not found at `{absent[0]['path']}`; set `GCO_ORACLE`): "
                "its columns are empty.", ""]

    def target(self, what: str, figure: str, goal: str, ok: bool | None) -> str:
        self.summary.append([what, figure, goal, mark(ok)])
        return mark(ok)

    # -- sections ----------------------------------------------------------------

    def native(self) -> None:
        crit = {r["id"]: r["ns"] for r in self.rows("native", "criterion")}
        ref = {r["input"]: r for r in self.rows("reference", "reference")}
        if not self.section(
            "Native (Rust) against the Python reference",
            "native",
            """
Criterion (`core/benches/validate.rs`, `core/benches/spec.rs`; mean per call)
and the Python reference (`scripts/bench_reference.py`: `json.loads` +
`validate_mooncake_spec`, best of 7 `timeit` repeats per call) on the same
files, `core/benches/inputs/*.json`, in the same run. *validate*:
`json::parse` + `validate_mooncake` (the reference's verdict); *check*:
`json::parse` + `check_mooncake` (every diagnostic); *parse alone*:
`json::parse`, so the rules' share is the difference.
""",
        ):
            return
        rows = []
        for name in BLOCK_INPUTS:
            validate = crit.get(f"{name}/tree")
            py = ref.get(name, {}).get("ns")
            rows.append([name, us(validate), us(crit.get(f"{name}/check")), us(crit.get(f"{name}/tree_parse")), us(py), fx(ratio(py, validate))])
        self.out += self.reference_absent()
        self.out += [table(["input", "Rust validate", "Rust check", "parse alone", "Python reference", "reference / Rust"], rows), ""]
        self.out += [
            "A full deploy request (`core/benches/inputs/requests/full.json`): validate-all with diagnostics, plan, and CLI export.",
            "",
            table(
                ["path", "time per call"],
                [
                    ["`json::parse` + `check_document` (every diagnostic)", us(crit.get("request/check_document"))],
                    ["`json::parse` + `plan_deploy` (with deployed regions)", us(crit.get("request/plan_deploy"))],
                    ["`plan_deployment` (objects for 2 regions)", us(crit.get("request/plan"))],
                    ["`deploy_commands` (CLI export)", us(crit.get("request/cli"))],
                ],
            ),
            "",
        ]

    def wasm(self) -> None:
        res = {(r["input"], r["path"]): r for r in self.rows("wasm", "wasm")}
        ref = {r["input"]: r for r in self.rows("reference", "reference")}
        if not self.section(
            "wasm in node against ajv and the Python reference",
            "wasm",
            """
`scripts/bench_wasm.cjs`: the npm package `gco-spec` (its node build,
`core/pkg/node`, built by `scripts/build-wasm.sh`) and ajv 8 compiled with the spec's JSON Schema
(`core/schema/endpoint-spec.schema.json`, its `MooncakeSpec` definition) in
one node process, on the same texts as the native part; best of 7 calibrated
rounds per call. `validateJson(text)` is held against ajv on
`JSON.parse(text)`, `validate(object)` against ajv on the parsed object. The
schema cannot say what the rules say across fields (e.g. max >= min), so ajv
checks less: its verdict is shown. The Python reference figures are the
native part's run of `scripts/bench_reference.py` on the same files.
""",
        ):
            return
        self.out += self.reference_absent()
        rows = []
        for name in BLOCK_INPUTS:
            vj, vo = res.get((name, "validateJson"), {}), res.get((name, "validate"), {})
            at, ao = res.get((name, "ajv_text"), {}), res.get((name, "ajv_object"), {})
            py = ref.get(name, {}).get("ns")
            rows.append([
                name,
                us(vj.get("ns")),
                us(vo.get("ns")),
                us(at.get("ns")),
                us(ao.get("ns")),
                fx(ratio(at.get("ns"), vj.get("ns")), 2),
                fx(ratio(ao.get("ns"), vo.get("ns")), 2),
                fx(ratio(py, vj.get("ns")), 1),
                "ok" if at.get("verdict") == "ok" else "error",
                "ok" if vj.get("verdict") == "ok" else "error",
            ])
        self.out += [
            table(
                ["input", "validateJson", "validate(obj)", "ajv(parse)", "ajv(obj)", "ajv(parse) / validateJson", "ajv(obj) / validate", "reference / validateJson", "ajv says", "wasm says"],
                rows,
            ),
            "",
            "Ratios above 1 mean the wasm validator is faster.",
            "",
            "Where a `validateJson` call's time goes (V8's CPU profile of the",
            "package built with function names, 2026-12-06). `full_valid`:",
            "reading the text into the tree of Python's data model 46%, freeing",
            "the tree 11%, the rules 23% (most of it key lookups), the text's",
            "way in 9%, writing the answer 8%. `minimal_valid`: the boundary is",
            "half of it (the answer 30%, the text's way in 22%), reading 18%,",
            "the rules 12%. ajv's side reads with V8's native `JSON.parse`,",
            "which alone takes longer natively in Rust for the exact tree",
            "(the native part's *parse alone*).",
            "The package is built at opt-level \"z\" (profile `wasm-release`, as",
            "the console) since issue 41 (2026-12-07): at \"s\" it was faster",
            "(1.5x on `validateJson` against \"z\" with talc, 2026-12-06) and",
            "101,653 B gzipped, over its 98,304 B target; at \"z\" it is",
            "89,407 B.",
            "",
            table(
                ["call", "time per call"],
                [
                    ["`validateDocument` of the full deploy request (with deployed regions)", us(res.get(("request_full", "validateDocument"), {}).get("ns"))],
                    ["a trivial call: `formatByteSize(\"0\")` (into wasm and back with a string)", us(res.get(("trivial", "formatByteSize"), {}).get("ns"))],
                ],
            ),
            "",
        ]

    def sizes(self) -> None:
        res = {r["name"]: r for r in self.rows("sizes", "size")}
        if not self.section(
            "Sizes",
            "sizes",
            """
What a browser downloads, gzip -9, as `scripts/build-wasm.sh --size-only` and
`scripts/build-web.sh --size-only` count it after a fresh build: the
validator package's wasm + JS (`core/pkg/web`: what a browser or bundler
loads of the npm package `gco-spec`), and the console's wasm + JS
(`dist/`: `gco-web_bg.wasm`, `gco-web.js`, `boot.js`).
""",
        ):
            return
        rows = []
        for name, label, held in [("validator", "validator package wasm + JS", True), ("console", "console wasm + JS", True)]:
            r = res.get(name)
            if r is None:
                rows.append([label, "-", "-", "-", "not measured"])
                continue
            budget = r.get("budget") if held else None
            if budget is None:
                rows.append([label, f"{r['raw']:,} B", f"{r['gzip']:,} B", "-", mark(None)])
                continue
            ok = r["gzip"] <= budget
            self.target(f"{label} (gzip)", f"{r['gzip']:,} B", f"<= {budget:,} B", ok)
            rows.append([label, f"{r['raw']:,} B", f"{r['gzip']:,} B", f"{budget:,} B", mark(ok)])
        self.out += [table(["artifact", "raw", "gzip -9", "budget", "mark"], rows), ""]

    def browser(self) -> None:
        res = {r["name"]: r for r in self.rows("browser", "browser")}
        if not self.section(
            "Browser",
            "browser",
            """
`scripts/bench_browser.cjs`: the console (`dist/`) and the release backend in
Debian's headless Chromium via the e2e harness, with the e2e tests' timing
code (`tests/e2e/timing.cjs`); every figure is taken inside the page.
*First render*: the "Endpoint name" label in the DOM, in ms after navigation
start, cold (fresh context) and warm (the same context again), median of 5.
*Keystroke to message*: a full block, "Prefill instances" 100 -> 1001 by one
key, from keydown to the reference's message in the DOM, median of 21.
*Topology 1000 x 1000*: the picture's "Prefill count", then "Decode count",
set to 1000 on a full block, from the input event to the last DOM change
(picture, messages, preview) before 500 ms of quiet; the slower of the two.
*1,000 env entries*: the same keystroke with 1,000 `KEY=VALUE` lines in
Environment. *Live status* (the console on dynalite, a monitor's status
write made as GCO's monitors make it): from the write to the open endpoint
page showing it, median of 5; and the requests an idle endpoint page makes
per minute over 30 s (conditional: 304 while nothing changed).
""",
        ):
            return
        get = lambda k: res.get(k, {}).get("ms")  # noqa: E731
        key = get("keystroke_to_message")
        key_ok = None if key is None else key <= KEYSTROKE_MS
        self.target("keystroke to message, full block (median)", f"{key} ms", f"<= {KEYSTROKE_MS:g} ms", key_ok)
        env_key = get("keystroke_to_message_env1000")
        env_ok = None if env_key is None else env_key <= KEYSTROKE_MS
        self.target("keystroke to message, 1,000 env entries (median)", f"{env_key} ms", f"<= {KEYSTROKE_MS:g} ms", env_ok)
        live = res.get("monitor_write_to_page", {})
        idle = res.get("idle_endpoint_page", {})
        topo = res.get("topology_1000x1000", {})
        rows = [
            ["first render, cold", f"{get('first_render_cold')} ms", "", ""],
            ["first render, warm", f"{get('first_render_warm')} ms", "", ""],
            ["keystroke to message (full block)", f"{key} ms", f"<= {KEYSTROKE_MS:g} ms", mark(key_ok)],
            ["keystroke to message (1,000 env entries)", f"{env_key} ms", f"<= {KEYSTROKE_MS:g} ms", mark(env_ok)],
            [f"topology 1000 x 1000 (badge {topo.get('badge', '-')})", f"{topo.get('ms')} ms (prefill {topo.get('prefill')}, decode {topo.get('decode')})", "", ""],
            ["monitor write to the endpoint page", f"{live.get('ms')} ms (max {live.get('max_ms')})", "<= 5,000 ms", mark(None if live.get("max_ms") is None else live["max_ms"] <= 5000)],
            ["idle endpoint page", f"{idle.get('per_minute')} requests/min ({idle.get('not_modified')} of {idle.get('requests')} were 304)", "<= 30/min", mark(None if idle.get("per_minute") is None else idle["per_minute"] <= 30)],
        ]
        self.out += [table(["measure", "median", "target", "mark"], rows), ""]

    def wire(self) -> None:
        res = {(r["release"], r["name"]): r for r in self.rows("wire", "wire")}
        if not self.section(
            "Over the wire",
            "wire",
            """
`scripts/bench_wire.cjs`: what Chromium downloads to open the editor
(`/new`) from the release backend, counted through its DevTools protocol
(`Network.loadingFinished`: the bytes received per request, headers
included): *cold*, a fresh browser context, every request until the network
is idle (page, assets, API answers); *reload*, the same tab reloaded; and
the cold load's time to the editor's first field on an emulated 10 Mbit/s
link with 40 ms round trips (median of 3). *Before*: the console as it was
served before issue 41 (every file plain, names without a content hash).
""",
        ):
            return
        get = lambda release, name, key: res.get((release, name), {}).get(key)  # noqa: E731
        cold, reload = get("after", "cold_load_bytes", "bytes"), get("after", "reload_bytes", "bytes")
        cold_ok = None if cold is None else cold <= WIRE_COLD_BYTES
        reload_ok = None if reload is None else reload <= WIRE_RELOAD_BYTES
        self.target("cold load of /new (bytes received)", f"{cold:,} B" if cold else "-", f"<= {WIRE_COLD_BYTES:,} B", cold_ok)
        self.target("reload of /new (bytes received)", f"{reload:,} B" if reload else "-", f"<= {WIRE_RELOAD_BYTES:,} B", reload_ok)
        num = lambda x, unit: "-" if x is None else f"{x:,} {unit}"  # noqa: E731
        rows = [
            ["cold load", num(get("before", "cold_load_bytes", "bytes"), "B"), num(cold, "B"), f"<= {WIRE_COLD_BYTES:,} B", mark(cold_ok)],
            ["reload", num(get("before", "reload_bytes", "bytes"), "B"), num(reload, "B"), f"<= {WIRE_RELOAD_BYTES:,} B", mark(reload_ok)],
            ["cold load to the editor, 10 Mbit/s, 40 ms", num(get("before", "throttled_cold_to_editor", "ms"), "ms"),
             num(get("after", "throttled_cold_to_editor", "ms"), "ms"), "", ""],
        ]
        self.out += [table(["measure", "before", "this build", "target", "mark"], rows), ""]
        parts = get("after", "cold_load_bytes", "parts") or []
        if parts:
            self.out += ["The cold load's requests:", "",
                         table(["request", "bytes received"], [[f"`{p['url']}`", f"{p['bytes']:,}"] for p in parts]), ""]
        self.out += [WASM_PARTS]

    def http_rows(self, part: str = "http") -> list[dict]:
        """A wrk part's rows, one per route and setting: the median of its
        rounds (req/s, p50, p99; errors and requests summed)."""
        groups: dict[tuple, list[dict]] = {}
        for r in self.rows(part, "http"):
            t = r["tag"]
            groups.setdefault((t["store"], t["endpoints"], t["connections"], r["route"]), []).append(r)
        merged = []
        for runs in groups.values():
            row = dict(runs[0])
            for k in ("rps", "p50_ms", "p99_ms", *USAGE_KEYS):
                if all(k in r for r in runs):
                    row[k] = statistics.median(r[k] for r in runs)
            for k in ("requests", "status_errors", "socket_errors", "timeouts"):
                row[k] = sum(r[k] for r in runs)
            row["rounds"] = len(runs)
            merged.append(row)
        return merged

    def http(self) -> None:
        res = self.http_rows()
        m = self.meta("http") or {}
        if not self.section(
            "HTTP",
            "http",
            f"""
wrk (`scripts/bench_wrk.lua`, 2 threads, or 1 at 1 connection; each read row
is the median of {m.get('rounds', 1)} rounds of {m.get('duration', '?')}, the routes
taking turns within a round so a slow spell of the machine weighs on all of
them; writes run once for {m.get('duration', '?')}) against the release backend on loopback, on the embedded
store (redb file in a temporary directory) and on dynalite 4 (in memory),
each in a fresh server. Endpoints are seeded through the API
(`scripts/bench_seed.py`: the full deploy request, named bench-00000 ...).
*validate*: POST /api/validate with the full request; *get*: GET
/api/endpoints/{{name}} of a random seeded endpoint; *list*: GET
/api/endpoints (every endpoint); *page*: GET /api/endpoints?limit=100 (the
newest 100, as the console asks); *deploy*: POST /api/endpoints with a new
name each; *set-topology*: PUT /api/endpoints/{{name}}/topology of a random
seeded endpoint (counts alternate, so each is a write). *trivial*: GET
/healthz of the same server at the same connection count; *vs trivial* is a
route's req/s over it. Errors:
answers >= 400, socket errors and timeouts (30 s).

*server µs/req*, *wrk µs/req*: CPU time (user + system, from `/proc` and
bash's `times`) per answered request; *switches/req*: the server's context
switches per request, involuntary ones in brackets. wrk shares the two cores
with the server, so a route's req/s is about 2 s of CPU over the sum of the
two CPU figures; the switches are where a heavier route pays more than its
own work (each preemption by a woken wrk thread costs scheduler time and
cold caches).
""",
        ):
            return
        trivial = {(r["tag"]["store"], r["tag"]["endpoints"], r["tag"]["connections"]): r["rps"] for r in res if r["route"] == "trivial"}
        last_size = {}
        for r in res:
            if r["route"] == "trivial":
                last_size[r["tag"]["store"]] = max(last_size.get(r["tag"]["store"], 0), r["tag"]["endpoints"])
        for store in dict.fromkeys(r["tag"]["store"] for r in res):
            rows = []
            for r in res:
                t = r["tag"]
                if t["store"] != store or (r["route"] == "list" and (store, t["endpoints"], t["connections"]) not in trivial):
                    continue  # list-growth-only points are in the growth section
                base_rps = trivial.get((store, t["endpoints"], t["connections"])) or trivial.get((store, last_size.get(store), t["connections"]))
                rel = ratio(r["rps"], base_rps)
                errors = r["status_errors"] + r["socket_errors"] + r["timeouts"]
                name = {"topology": "set-topology"}.get(r["route"], r["route"])
                # No answer within the run: wrk's empty histogram says 0 ms, which would mislead.
                p50, p99 = (f"{r['p50_ms']:.2f}", f"{r['p99_ms']:.2f}") if r["requests"] else ("-", "-")
                cpu = [f"{r[k]:.1f}" if k in r else "-" for k in ("server_cpu_us", "wrk_cpu_us")]
                switches = f"{r['server_switches']:.2f} ({r['server_involuntary']:.2f})" if "server_switches" in r else "-"
                rows.append([name, f"{t['endpoints']:,}", t["connections"], f"{r['rps']:,.0f}", p50, p99, *cpu, switches, f"{errors:,} / {r['requests']:,}", "1.00" if r["route"] == "trivial" else ("-" if rel is None else f"{rel:.2f}")])
            self.out += [f"### {store}", "", table(["route", "endpoints", "conns", "req/s", "p50 ms", "p99 ms", "server µs/req", "wrk µs/req", "server switches/req (involuntary)", "errors / requests", "vs trivial"], rows), ""]

    def growth(self) -> None:
        self.out += ["## How costs grow", ""]
        crit = {r["id"]: r["ns"] for r in self.rows("native", "criterion")}
        series = sorted({int(k.rsplit("/", 1)[1]) for k in crit if k.startswith("growth/")})
        if series:
            self.out += [
                "Validation (`json::parse` + `check_document`) of the full deploy request with n env entries or n labels (criterion, native part):",
                "",
                table(["n", "env", "labels"], [[f"{n:,}", us(crit.get(f"growth/env/{n}")), us(crit.get(f"growth/labels/{n}"))] for n in series]),
                "",
            ]
        lists = [r for r in self.http_rows() if r["route"] == "list" and r["tag"]["connections"] == 1]
        if lists:
            stores = list(dict.fromkeys(r["tag"]["store"] for r in lists))
            sizes = sorted({r["tag"]["endpoints"] for r in lists})
            p50 = {(r["tag"]["store"], r["tag"]["endpoints"]): r["p50_ms"] for r in lists}
            self.out += [
                "GET /api/endpoints at 1 connection against table size (http part), p50:",
                "",
                table(["endpoints"] + stores, [[f"{n:,}"] + [f"{p50[(s, n)]:.2f} ms" if (s, n) in p50 else "-" for s in stores] for n in sizes]),
                "",
            ]
        if not series and not lists:
            self.out += ["Not run (the native and http parts give it).", ""]

    def fuzz(self) -> None:
        m = self.meta("fuzz")
        if not self.section(
            "Fuzzing",
            "fuzz",
            f"""
`scripts/fuzz.sh` (cargo-fuzz, libFuzzer on nightly, `-O` with AddressSanitizer),
{m['seconds'] if m else '?'} s per target, {m['jobs'] if m else '?'} at a time, from the committed seeds in
`fuzz/seeds/` and the corpus of earlier runs; 10 s per input and 2 GiB are the
time and memory limits (exceeding either is a finding).
""",
        ):
            return
        rows = []
        for r in self.rows("fuzz", "fuzz"):
            findings = ", ".join(r["findings"]) or ("none" if r["status"] == 0 else f"exit {r['status']}")
            rows.append([f"`{r['target']}`", f"{r['seconds']} s", f"{r['executions']:,}" if r["executions"] is not None else "-",
                         f"{r['per_second']:,}" if r["per_second"] is not None else "-", str(r["corpus"]),
                         f"{r['peak_rss_mb']} MB" if r["peak_rss_mb"] is not None else "-", findings])
        self.out += [table(["target", "time", "executions", "exec/s", "corpus", "peak RSS", "findings"], rows), ""]

    def identity(self) -> None:
        if not self.section(
            "Verifying who asks",
            "identity",
            """
criterion (`backend/benches/identity.rs`), one request's identity as each
`--auth` mode verifies it, with what the mode keeps ready: a bearer token
among 10 named ones (SHA-256, digests compared in constant time); the
`oidc` session cookie (decrypted with AES-256-GCM and read); the `alb`
header (both segments' JSON and one ES256 signature check, the key fetched
once and cached). `none` does no work.
""",
        ):
            return
        crit = {r["id"]: r["ns"] for r in self.rows("identity", "criterion")}
        rows = [["none", "0"]] + [[mode, us(crit.get(f"identity/{key}"))] for mode, key in
                                  [("token", "token"), ("oidc", "oidc_session"), ("alb", "alb")]]
        self.out += [table(["--auth", "time per request"], rows), ""]

    def view(self) -> None:
        if not self.section(
            "Read cost against viewers",
            "view",
            """
`scripts/bench_view.cjs`: simulated viewers, each asking for the list (GET
/api/endpoints?limit=100 with If-None-Match, as the console does) and one
seeded endpoint's page every 3 s, against the release backend on dynalite
with 1,000 or 10,000 seeded endpoints. A proxy between the backend and
dynalite counts the calls the table receives and the read units it says they
consumed. *view*: this code (one view of the table, read again every 3 s
while someone asks); *before*: the code before the view (every list scans
the table, every page reads its item), built from its commit; *no-view*:
this code with `--refresh-interval 0s`, which reads as that code did.
""",
        ):
            return
        rows_in = self.rows("view", "view")
        rows = []
        for r in rows_in:
            rows.append([r["label"], f"{r['endpoints']:,}", r["viewers"], f"{r['scans_per_minute']:.1f}",
                         f"{r['get_items_per_minute']:.1f}", f"{r['read_units_per_minute']:,.0f}", f"{r['lists']:,}",
                         f"{r['list_p50_ms']:.1f}" if r["list_p50_ms"] is not None else "-",
                         f"{r['list_p99_ms']:.1f}" if r["list_p99_ms"] is not None else "-",
                         f"{r['rss_mb']:.0f} MB" if r.get("rss_mb") is not None else "-"])
        self.out += [table(["code", "endpoints", "viewers", "Scan calls/min", "GetItem calls/min", "read units/min", "lists", "list p50 ms", "list p99 ms", "server RSS at the end"], rows), ""]
        view = {(r["endpoints"], r["viewers"]): r for r in rows_in if r["label"] == "view"}
        for size in sorted({e for e, _ in view}):
            one, fifty = view.get((size, 1)), view.get((size, 50))
            if one and fifty:
                ok = fifty["read_units_per_minute"] <= one["read_units_per_minute"] * 1.1
                self.target(f"read units/min at 50 viewers, {size:,} endpoints", f"{fifty['read_units_per_minute']:,.0f}",
                            f"<= 1 viewer's {one['read_units_per_minute']:,.0f} + 10%", ok)
        big = [r for r in rows_in if r["label"] == "view" and r["endpoints"] >= 10000 and r["list_p50_ms"] is not None]
        if big:
            worst = max(r["list_p50_ms"] for r in big)
            self.target("list p50 at 10,000 endpoints (worst viewer count)", f"{worst:.1f} ms", "<= 50 ms", worst <= 50)

    def history(self) -> None:
        if not self.section(
            "Writes with the history against without",
            "history",
            """
`backend/examples/bench_history.rs`: the same changes (a scale of one plain
endpoint to a new replica count, through `Service::change`: a consistent
read, the core's operation, the conditional write) one after another from
one client, with the history recorded and without (`--history-table off`).
With it, each write is one redb transaction holding the entry too
(embedded), or one TransactWriteItems of the record's update and the
entry's put (DynamoDB) instead of one UpdateItem. DynamoDB here is moto's
server (Python, one request at a time), so its figures show the extra
table and transaction relative to a plain write there, not DynamoDB's own
latency; there the plain write asks for the whole item back (`ALL_NEW`)
and the transaction for nothing, which can outweigh the entry. On DynamoDB
itself the price is in write units: a transactional write takes two per KB
of each item, the record's and the entry's (which holds the record twice),
where a plain update takes one per KB of the record.
""",
        ):
            return
        rows_in = self.rows("history", "history")
        by = {(r["store"], r["history"]): r for r in rows_in}
        rows = []
        for store in dict.fromkeys(r["store"] for r in rows_in):
            off, on = by.get((store, False)), by.get((store, True))
            for r in (off, on):
                if r is None:
                    continue
                extra = "-"
                if r is on and off is not None:
                    extra = f"{r['us_per_write'] - off['us_per_write']:+,.0f} µs ({r['us_per_write'] / off['us_per_write']:.2f}x)"
                rows.append([store, "on" if r["history"] else "off", f"{r['writes']:,}", f"{r['us_per_write']:,.0f}",
                             f"{r['writes_per_s']:,.0f}", extra])
        self.out += [table(["store", "history", "writes", "µs per write", "writes/s", "with history"], rows), ""]

    def audit(self) -> None:
        if not self.section(
            "The audit view at scale",
            "audit",
            """
`scripts/bench_audit.cjs`: a history table of that many entries on dynalite
(500 endpoints, 20 people, 11 operations over 100 days; each entry with its
record before and after, as the console writes it), read through the index
by time (`by_operation_time`: one Query per operation, newest first, merged;
one Query of the endpoint's own entries when an endpoint is named). *api*:
`GET /api/history` from node, the first page (50) with each filter;
*console*: in Chromium, from the click on "History" in the header (or a
filter's change) to the first page's rows on screen, and a cold load of
`/history` from navigation start (the console's wasm included). A page
reads at most 1,000 index items per operation, so a rare filter answers a
short page with a `next` (*more*) rather than read on.
""",
        ):
            return
        rows_in = self.rows("audit", "audit")
        rows = []
        for r in rows_in:
            rows.append([r["case"], f"{r['entries']:,}", str(r.get("items", "-")), "yes" if r.get("more") else ("-" if "more" not in r else "no"),
                         f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}", f"{r['max_ms']:.0f}", str(r["runs"])])
        self.out += [table(["case", "entries", "items", "more", "p50 ms", "p95 ms", "max ms", "runs"], rows), ""]
        for r in rows_in:
            if r["case"] == "console: History clicked to its first page":
                self.target(f"audit view's first page in the console, {r['entries']:,} entries", f"{r['p95_ms']:.0f} ms (p95)",
                            "<= 300 ms", r["p95_ms"] <= 300)

    def render(self) -> str:
        self.native()
        self.identity()
        self.wasm()
        self.sizes()
        self.browser()
        self.wire()
        self.http()
        self.view()
        self.history()
        self.audit()
        self.growth()
        self.fuzz()
        quick = any((self.meta(p) or {}).get("quick") for p in self.parts)
        head = ["# Benchmarks", ""]
        if quick:
            head += ["> **Smoke run**: at least one part ran with QUICK=1 (very short runs). These figures test the command, not the code.", ""]
        head += [
            "Written by `scripts/benchmarks.sh` (see README, \"Benchmarks\"); each section says when it ran. Not part of the test run.",
            "",
            "## Machine",
            "",
            table(["", ""], machine()),
            "",
            "## Targets",
            "",
            table(["target", "figure", "goal", "mark"], self.summary),
            "",
        ]
        return "\n".join(head + self.out).rstrip() + "\n"


def add_usage(path: Path, ticks_per_s: int, server: list[str], wrk: list[str]) -> None:
    """Per-request CPU and context switches of the run on `path`'s last line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[-1])
    n = row["requests"]
    (t0, v0, i0), (t1, v1, i1) = (map(int, s.split()) for s in server)

    def seconds(times_line: str) -> float:  # bash `times`: "0m1.234s 0m0.567s"
        return sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", times_line))

    if n:
        row["server_cpu_us"] = round((t1 - t0) / ticks_per_s / n * 1e6, 2)
        row["wrk_cpu_us"] = round((seconds(wrk[1]) - seconds(wrk[0])) / n * 1e6, 2)
        row["server_switches"] = round((v1 - v0 + i1 - i0) / n, 3)
        row["server_involuntary"] = round((i1 - i0) / n, 3)
    lines[-1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("criterion")
    c.add_argument("--dir", type=Path, required=True)
    c.add_argument("--since", type=float, default=0)
    sub.add_parser("sizes")
    u = sub.add_parser("usage")
    u.add_argument("--file", type=Path, required=True)
    u.add_argument("--ticks", type=int, required=True)
    u.add_argument("--server", nargs=2, required=True)
    u.add_argument("--wrk", nargs=2, required=True)
    r = sub.add_parser("report")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    if args.command == "criterion":
        collect_criterion(args.dir, args.since)
    elif args.command == "sizes":
        collect_sizes(sys.stdin.read())
    elif args.command == "usage":
        add_usage(args.file, args.ticks, args.server, args.wrk)
    else:
        markdown = Report(load(args.dir)).render()
        args.output.write_text(markdown, encoding="utf-8")
        print(markdown)
        print(f"(written to {args.output})", file=sys.stderr)


if __name__ == "__main__":
    main()
