#!/usr/bin/env python3
"""Times the Python reference on the Rust benchmark's inputs.

For each JSON file given (default: core/benches/inputs/*.json), times
``json.loads(text)`` + ``validate_mooncake_spec(obj)`` -- the reference's
counterpart of ``json::parse(text)`` + ``gco_spec::validate_mooncake(&value)``
-- and prints one JSON line per input:

  {"what": "reference", "input": "full_valid", "ns": 1234.5, "verdict": "ok" | "ValueError: ..."}

``ns`` is the best of several repeats of ``timeit`` (autorange), per call. The
reference module is loaded from the path in ``GCO_ORACLE``, or by default from
``../shared/reference/mooncake_reference.py`` relative to the repository root.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def load_reference():
    path = Path(os.environ.get("GCO_ORACLE") or REPO / ".." / "shared" / "reference" / "mooncake_reference.py")
    if not path.is_file():
        sys.exit(f"the Python reference is absent: not found at {path} (set GCO_ORACLE); "
                 "it is not part of the repository, so there is nothing to time")
    spec = importlib.util.spec_from_file_location("mooncake_reference", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load the reference from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.validate_mooncake_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7, help="timeit repeats; the best is kept (default 7)")
    args = parser.parse_args()
    inputs = args.inputs or sorted((REPO / "core" / "benches" / "inputs").glob("*.json"))

    validate_mooncake_spec = load_reference()
    loads = json.loads

    for path in inputs:
        text = path.read_text(encoding="utf-8")

        try:
            validate_mooncake_spec(loads(text))
            verdict = "ok"
        except ValueError as exc:
            verdict = f"ValueError: {exc}"

        # The statement is compiled into timeit's loop: no extra call per run.
        timer = timeit.Timer(
            "try:\n    validate(loads(text))\nexcept ValueError:\n    pass",
            globals={"validate": validate_mooncake_spec, "loads": loads, "text": text},
        )
        number, _ = timer.autorange()
        best = min(timer.repeat(repeat=args.repeat, number=number))
        print(json.dumps({"what": "reference", "input": path.stem, "ns": best / number * 1e9, "verdict": verdict}), flush=True)


if __name__ == "__main__":
    main()
