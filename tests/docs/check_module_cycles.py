#!/usr/bin/env python3
"""No module circles: within each crate's src/ (core, api, backend, web), the
top-level modules (a file or a folder) depend on each other without a
cycle. A dependency is a `crate::name` path outside comments and tests.
Exits non-zero listing each circle and its edges.

    python3 tests/docs/check_module_cycles.py
"""
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CRATES = ["core", "api", "backend", "web"]


def graph(src):
    mods = set()
    for e in os.listdir(src):
        if e.endswith(".rs") and e not in ("lib.rs", "main.rs"):
            mods.add(e[:-3])
        elif os.path.isdir(os.path.join(src, e)):
            mods.add(e)
    g = defaultdict(set)
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            top = os.path.relpath(os.path.join(root, f), src).split(os.sep)[0]
            top = top[:-3] if top.endswith(".rs") else top
            if top in ("lib", "main", "bin"):
                continue
            text = open(os.path.join(root, f), encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
            for m in re.finditer(r"crate::(\w+)", text):
                if m.group(1) in mods and m.group(1) != top:
                    g[top].add(m.group(1))
            for m in re.finditer(r"use crate::\{([^}]*)\}", text):
                for n in re.findall(r"\b(\w+)", m.group(1)):
                    if n in mods and n != top:
                        g[top].add(n)
    return mods, g


def circles(mods, g):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(mods):
        if v not in index:
            visit(v)
    return out


def main():
    failed = False
    for crate in CRATES:
        src = ROOT / crate / "src"
        mods, g = graph(src)
        for comp in circles(mods, g):
            failed = True
            print(f"{crate}/src: a circle: {' <-> '.join(comp)}")
            for v in comp:
                for w in sorted(g[v] & set(comp)):
                    print(f"  {v} -> {w}")
    if not failed:
        print(f"no module circles in {', '.join(CRATES)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
