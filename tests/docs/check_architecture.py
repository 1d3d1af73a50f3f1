#!/usr/bin/env python3
"""ARCHITECTURE.md names only what exists.

Every code span of the map that names a file or folder (`listing.rs`,
`backend/tests/suite/`, `api_*.rs`) must match a tracked path, and every
Rust path (`deploy::request_of_record`, `Store::peek`) and type-like name
(`ViewedStore`) must be defined, or at least written, in the sources. A
rename that leaves the map behind fails here. Exits non-zero, listing each
name that matches nothing.

    python3 tests/docs/check_architecture.py [ARCHITECTURE.md]
"""

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILE_SUFFIXES = (
    ".rs", ".py", ".md", ".json", ".cjs", ".mjs", ".sh", ".txt", ".html",
    ".toml", ".ts", ".gz", ".jsonl",
)
SOURCE_SUFFIXES = (".rs", ".py", ".cjs", ".mjs", ".ts", ".js", ".sh", ".toml")
# Spans that are paths outside this repository (the reference, which users
# do not have) or that name generated output.
OUTSIDE = ("../", "core/pkg", "dist/", "tests/e2e/artifacts/")
# Files the code writes for GCO's monitor, not files of the repository.
RENDERED = {"mooncake.json"}


def tracked():
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    files = [line for line in out.splitlines() if line]
    folders = {str(Path(f).parent) + "/" for f in files}
    for f in files:
        for parent in Path(f).parents:
            folders.add(str(parent) + "/")
    return files, folders


def is_path(span):
    if " " in span or span.startswith(("/", "-", "<", "#", "%")):
        return False
    if "(" in span or "::" in span or "=" in span:
        return False
    return "/" in span or span.endswith(FILE_SUFFIXES)


def path_exists(span, files, folders):
    if span.startswith(OUTSIDE) or span in RENDERED:
        return True
    if span.startswith(".") and "/" not in span and span.count(".") > 1:
        return True  # a kind of file (`.d.ts`), not a file
    if span.endswith("/"):
        return any(f == span or f.endswith("/" + span) for f in folders)
    if any(ch in span for ch in "*?["):
        return any(
            fnmatch.fnmatch(f, span) or fnmatch.fnmatch(f, "*/" + span) for f in files
        )
    return any(f == span or f.endswith("/" + span) for f in files) or any(
        f == span + "/" or f.endswith("/" + span + "/") for f in folders
    )


def rust_names(span):
    """The names a Rust path span asks for (`a::B::c` -> a, B, c)."""
    if "::" not in span:
        return []
    head = re.split(r"[ (<\[!]", span, maxsplit=1)[0]
    return [part for part in head.split("::") if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part)]


def is_type_name(span):
    return re.fullmatch(r"[A-Z][a-z]+[A-Z][A-Za-z0-9]*", span) is not None


def main():
    doc = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "ARCHITECTURE.md"
    text = doc.read_text(encoding="utf-8")
    spans = sorted(set(re.findall(r"`([^`\n]+)`", text)))
    files, folders = tracked()
    sources = "\n".join(
        (ROOT / f).read_text(encoding="utf-8", errors="replace")
        for f in files
        if f.endswith(SOURCE_SUFFIXES) and (ROOT / f).is_file()
    )
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sources))
    missing = []
    checked = 0
    for span in spans:
        if is_path(span):
            checked += 1
            if not path_exists(span, files, folders):
                missing.append(f"path {span!r}")
        elif rust_names(span):
            checked += 1
            absent = [n for n in rust_names(span) if n not in words]
            if absent:
                missing.append(f"item {span!r} ({', '.join(absent)} not in the sources)")
        elif is_type_name(span):
            checked += 1
            if span not in words:
                missing.append(f"name {span!r}")
    for line in missing:
        print(f"{doc.name}: {line}", file=sys.stderr)
    print(f"{doc.name}: {checked} paths and names checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
