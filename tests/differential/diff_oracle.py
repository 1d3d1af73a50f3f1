#!/usr/bin/env python3
"""Differential test: the Rust port's ``--jsonl`` protocol against the oracle.

The oracle is ``mooncake_reference.py`` (ops ``validate``, ``author_byte_size``
and ``build``, one JSON answer line per request line). This script writes a
batch of request lines as raw JSON text -- so it can hold what ``json.dumps``
never writes: duplicate keys, ``-0``, ``1E2``, ``1e400``, ``NaN``, escaped
keys, lone surrogates, odd whitespace between tokens -- feeds the whole batch
once to each program, and compares the answers line by line as exact strings.

The oracle is not part of the repository, so a recorded corpus is:
``corpus.jsonl.gz`` beside this script holds 20,000 generated lines (seed 1)
plus the edge cases, each with the oracle's answer as it printed it. Every
run compares the port with those answers. When the oracle is there too
(``--oracle``, ``$GCO_ORACLE``, or ``../shared/reference/`` beside the
clone), the run also checks that the recording still is what the oracle
answers, and compares the port with the oracle live on a fresh seed.

Usage::

    python3 tests/differential/diff_oracle.py [--count N] [--seed S]
        [--port-cmd CMD] [--oracle PATH] [--mismatch-file PATH]
    python3 tests/differential/diff_oracle.py --record   # rewrites the corpus

The one tolerated difference: where the oracle raises ``TypeError:
unhashable type ...`` for ``validate`` or ``build`` (a list or dict where the
mode or transfer protocol belongs), the port answers the ``ValueError`` it
gives for any other wrong mode or protocol. Such lines count as "quirks".

Exit status: 0 when every line matches (quirks included), 1 on any mismatch
or a stale recording, 2 when the harness itself cannot run (e.g. the oracle
crashed on a line, which means the generator produced a line it must not
produce, or the corpus is missing).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Union

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PORT_CMD = "target/release/gco-spec --jsonl"
DEFAULT_ORACLE = "../shared/reference/mooncake_reference.py"
SHOWN_MISMATCHES = 20
QUIRK_PREFIXES = (
    "mooncake.mode must be one of {both, disaggregated, store}, got ",
    "mooncake.transfer.protocol must be one of {rdma, tcp}, got ",
)


# --------------------------------------------------------------------------
# A tiny JSON tree that is rendered to text with randomised spelling.
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """A JSON literal written exactly as given (``-0``, ``1E2``, ``NaN``...)."""

    text: str


@dataclass
class Obj:
    """A JSON object as ordered ``(key, node)`` pairs; keys may repeat."""

    pairs: list[tuple[str, "Node"]] = field(default_factory=list)

    def get(self, key: str) -> "Node | None":
        """The value Python's ``json`` keeps for ``key`` (the last one)."""
        for k, v in reversed(self.pairs):
            if k == key:
                return v
        return None

    def set(self, key: str, value: "Node") -> None:
        """Replace the effective value of ``key``, or append the key."""
        for i in range(len(self.pairs) - 1, -1, -1):
            if self.pairs[i][0] == key:
                self.pairs[i] = (key, value)
                return
        self.pairs.append((key, value))

    def delete(self, key: str) -> None:
        """Drop every occurrence of ``key``."""
        self.pairs = [(k, v) for k, v in self.pairs if k != key]


Node = Union[Raw, Obj, list, str, int, bool, None]

SHORT_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b",
    "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
}
# Whitespace JSON allows between tokens; "\n" is excluded (it ends a line).
TOKEN_WHITESPACE = ["", "", "", "", " ", " ", "  ", "\t", "\r", " \t\r "]


class Writer:
    """Renders a :data:`Node` as one line of JSON text, spelling it randomly.

    Characters in strings are written raw or as short or ``\\uXXXX``
    escapes (upper or lower hex, surrogate pairs for astral characters);
    whitespace of every kind JSON allows appears between tokens.
    """

    def __init__(self, rng: Random, plain: bool = False) -> None:
        self.rng = rng
        self.plain = plain

    def ws(self) -> str:
        """Whitespace between two tokens (often none)."""
        return "" if self.plain else self.rng.choice(TOKEN_WHITESPACE)

    def u_escape(self, cp: int) -> str:
        """``\\uXXXX`` for a BMP code point, a surrogate pair otherwise."""
        if cp > 0xFFFF:
            cp -= 0x10000
            return self.u_escape(0xD800 + (cp >> 10)) + self.u_escape(0xDC00 + (cp & 0x3FF))
        text = f"\\u{cp:04x}"
        return text.upper().replace("\\U", "\\u") if self.rng.random() < 0.3 else text

    def string(self, s: str) -> str:
        """A JSON string literal for ``s``."""
        out = ['"']
        for ch in s:
            cp = ord(ch)
            must_escape = ch in '"\\' or cp < 0x20 or 0xD800 <= cp <= 0xDFFF
            roll = 1.0 if self.plain else self.rng.random()
            if not must_escape and roll > 0.12:
                out.append(ch)
            elif ch in SHORT_ESCAPES and roll > 0.04:
                out.append(SHORT_ESCAPES[ch])
            else:
                out.append(self.u_escape(cp))
        out.append('"')
        return "".join(out)

    def node(self, n: Node) -> str:
        """The JSON text of any node."""
        if isinstance(n, Raw):
            return n.text
        if n is None:
            return "null"
        if isinstance(n, bool):
            return "true" if n else "false"
        if isinstance(n, int):
            return str(n)
        if isinstance(n, str):
            return self.string(n)
        if isinstance(n, list):
            items = [self.ws() + self.node(v) + self.ws() for v in n]
            return "[" + (",".join(items) if items else self.ws()) + "]"
        if isinstance(n, Obj):
            items = [
                self.ws() + self.string(k) + self.ws() + ":" + self.ws() + self.node(v) + self.ws()
                for k, v in n.pairs
            ]
            return "{" + (",".join(items) if items else self.ws()) + "}"
        raise TypeError(f"not a node: {n!r}")

    def line(self, request: Obj) -> str:
        """A whole request line, with optional whitespace around it."""
        return self.ws() + self.node(request) + self.ws()


# --------------------------------------------------------------------------
# Value pools.
# --------------------------------------------------------------------------

BOUNDARY_NUMBERS = [
    "0", "1", "2", "3", "999", "1000", "1001", "-1", "-0", "-2",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "1" + "0" * 30, "1" + "0" * 400, "-1" + "0" * 400,
    "2.0", "1.0", "0.0", "-0.0", "1000.0", "1E2", "1e2", "1E+2", "1e-5", "1e21",
    "1e22", "1e16", "1e400", "-1e400", "1e-400", "-1e-400", "NaN", "Infinity",
    "-Infinity", "0.1", "1.5", "-2.5", "5e-324", "1.7976931348623157e308",
    "9223372036854775807.0", "0.30000000000000004", "100e-2", "12E-1",
    "123456789012345678901234567890.5", "1e15", "1e-4", "123e-7", "0.1e1", "2.675",
    "9007199254740993.0", "2.2250738585072014e-308", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203126", "0." + "0" * 400 + "1e400",
    "1" + "0" * 400 + ".0e-400",
]
# Characters str.strip() removes (and near misses it keeps: \u200b, \ufeff).
ODD_WHITESPACE = [
    " ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f",
    "\x85", "\xa0", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029",
    "\u202f", "\u205f", "\u3000", "\u200b", "\ufeff", "\u180e", "\x00",
]
ODD_CHARS = [
    "'", '"', "\\", "/", "\x00", "\x07", "\x1b", "\x7f", "\x80", "\x9f", "\xad",
    "\xe9", "e\u0301", "\u0301", "\u0378", "\u05d0", "\u200e", "\u4e2d",
    "\ue000", "\uffff", "\U0001f600", "\U000e0001", "\U000f0000", "\U0010ffff",
    "\ud800", "\udfff", "\udc00\ud800", "\ud800\udc00", "\u2028", "\xa0",
    "\u3000", "\t", "\n", "\u180e", "\u200d", "\u2066", "\ufff9", "\U0001d173", "\U000e007f",
    # assigned after Unicode 14 (Python 3.11): not printable for the oracle
    "\U0001fae8", "\U00031350", "\u2ffc", "\U0001cc00",
]
WORDS = [
    "store", "both", "disaggregated", "rdma", "tcp", "", " ", "Store", "STORE",
    "store ", " tcp", "RDMA", "round_robin", "cpu", "mlx5_0", "image", "x",
    "None", "null", "true", "12",
]
BYTE_SIZE_CORES = [
    "0", "7", "00012", "1024", "4294967296", "9223372036854775807",
    "9223372036854775808", "9" * 25, "1" + "0" * 400, "0" * 40 + "9", "",
    "+5", "-5", "-0", "1.0", "1e3", "0x10", "1_000", "1 000", "\u0661\u0662",
    "\uff11\uff12", "\xb2", "12a", "\u0663", "1\x002",
]
MODES = ["disaggregated", "store", "both"]

FIELD_PATHS: list[tuple[str, ...]] = [
    ("mode",), ("topology",), ("topology", "prefill"), ("topology", "decode"),
    ("store",), ("store", "enabled"), ("store", "cold_tier_enabled"),
    ("store", "global_segment_size"), ("store", "local_buffer_size"),
    ("transfer",), ("transfer", "protocol"), ("transfer", "device_name"),
    ("autoscaling",), ("autoscaling", "enabled"),
    ("autoscaling", "prefill"), ("autoscaling", "decode"),
    ("autoscaling", "prefill", "min_replicas"), ("autoscaling", "prefill", "max_replicas"),
    ("autoscaling", "decode", "min_replicas"), ("autoscaling", "decode", "max_replicas"),
    ("proxy",),
]


class Generator:
    """Random request trees for every op, built from the pools above."""

    def __init__(self, rng: Random) -> None:
        self.rng = rng

    # ---- leaves -------------------------------------------------------

    def number(self) -> Raw:
        """A boundary or otherwise awkward JSON number."""
        return Raw(self.rng.choice(BOUNDARY_NUMBERS))

    def small_int(self) -> int:
        """An integer near the topology / replica bounds."""
        return self.rng.choice([-1, 0, 1, 1, 2, 3, 7, 999, 1000, 1000, 1001])

    def odd_string(self) -> str:
        """A string mixing words, quotes, backslashes and odd characters."""
        rng = self.rng
        parts = [rng.choice(WORDS + ODD_CHARS + ODD_WHITESPACE) for _ in range(rng.randint(1, 4))]
        return "".join(parts)

    def string(self) -> str:
        """A plain word most of the time, an odd string otherwise."""
        return self.rng.choice(WORDS) if self.rng.random() < 0.5 else self.odd_string()

    def byte_size_string(self) -> str:
        """A digit string (or near miss) padded with odd whitespace."""
        rng = self.rng

        def pad() -> str:
            return "".join(rng.choice(ODD_WHITESPACE) for _ in range(rng.choice([0, 0, 1, 2])))

        return pad() + rng.choice(BYTE_SIZE_CORES) + pad()

    def byte_size(self) -> Node:
        """A value for a byte-size field: mostly valid, often not."""
        roll = self.rng.random()
        if roll < 0.45:
            return self.byte_size_string()
        if roll < 0.65:
            return self.rng.choice([0, 1, 1024, 2**33, 2**63 - 1])
        if roll < 0.85:
            return self.number()
        return self.value()

    # ---- containers -----------------------------------------------------

    def value(self, depth: int = 0) -> Node:
        """Any JSON value, nested at most three levels deep."""
        rng = self.rng
        roll = rng.random() if depth < 3 else rng.random() * 0.7
        if roll < 0.3:
            return self.number()
        if roll < 0.4:
            return rng.choice([True, False, None])
        if roll < 0.7:
            return self.string() if rng.random() < 0.7 else self.byte_size_string()
        if roll < 0.85:
            return [self.value(depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
        return Obj([(self.key(), self.value(depth + 1)) for _ in range(rng.choice([0, 1, 2, 3]))])

    def key(self) -> str:
        """An object key: a field name, a word or an odd string."""
        roll = self.rng.random()
        if roll < 0.5:
            return self.rng.choice([p[-1] for p in FIELD_PATHS])
        return self.string()

    def non_object(self) -> Node:
        """A value that is not a JSON object."""
        while True:
            v = self.value()
            if not isinstance(v, Obj):
                return v

    # ---- valid blocks --------------------------------------------------

    def topology(self) -> Obj:
        """A valid ``topology`` sub-block."""
        return Obj([("prefill", self.rng.randint(1, 1000)), ("decode", self.rng.choice([1, 2, 1000]))])

    def store(self) -> Obj:
        """A valid ``store`` sub-block with random optional fields."""
        rng, o = self.rng, Obj()
        enabled = rng.choice([True, False, None])
        if enabled is not None:
            o.set("enabled", enabled)
        if rng.random() < 0.4:
            o.set("cold_tier_enabled", enabled is True and rng.random() < 0.5)
        for name in ("global_segment_size", "local_buffer_size"):
            if rng.random() < 0.5:
                o.set(name, rng.choice([0, 4096, 2**63 - 1, "1073741824", " 12\u3000", "00"]))
        if rng.random() < 0.2:
            o.set(rng.choice(["offload_tier", "master", "extra"]), self.value(1))
        return o

    def transfer(self) -> Obj:
        """A valid ``transfer`` sub-block."""
        o = Obj()
        if self.rng.random() < 0.7:
            o.set("protocol", self.rng.choice(["rdma", "tcp"]))
        if self.rng.random() < 0.5:
            o.set("device_name", self.rng.choice(["", "mlx5_0", "eth0,eth1", self.odd_string()]))
        return o

    def role(self) -> Obj:
        """A valid per-role autoscaling block."""
        o, low = Obj(), self.rng.choice([None, 1, 2, 5])
        if low is not None:
            o.set("min_replicas", low)
        if self.rng.random() < 0.6:
            o.set("max_replicas", (low or 1) + self.rng.choice([0, 1, 10]))
        if self.rng.random() < 0.2:
            o.set("target", self.value(2))
        return o

    def autoscaling(self, mode: str) -> Obj:
        """A valid ``autoscaling`` sub-block for ``mode``."""
        o = Obj()
        if self.rng.random() < 0.6:
            o.set("enabled", mode != "store" and self.rng.random() < 0.7)
        for role in ("prefill", "decode"):
            if self.rng.random() < 0.6:
                o.set(role, self.role() if self.rng.random() < 0.9 else None)
        return o

    def proxy(self) -> Obj:
        """A ``proxy`` sub-block (not validated by the rules)."""
        return Obj([("image", self.string()), ("scheduling", "round_robin")][: self.rng.randint(0, 2)])

    def valid_block(self) -> Obj:
        """A complete valid block for a random mode."""
        rng = self.rng
        mode = rng.choice(MODES)
        block = Obj([("mode", mode)])
        if mode != "store" or rng.random() < 0.3:
            block.set("topology", self.topology())
        for name, make in (("store", self.store), ("transfer", self.transfer), ("proxy", self.proxy)):
            if rng.random() < 0.5:
                block.set(name, make())
        if rng.random() < 0.5:
            block.set("autoscaling", self.autoscaling(mode))
        if rng.random() < 0.1:
            block.set(self.string(), self.value(1))
        rng.shuffle(block.pairs)
        return block

    # ---- mutations -----------------------------------------------------

    def field_value(self, path: tuple[str, ...]) -> Node:
        """A replacement value aimed at the field at ``path``."""
        rng, name = self.rng, path[-1]
        if rng.random() < 0.4:
            return rng.choice([self.value(), self.number(), True, False, None, [], Obj(),
                               [[1, [2]]], Obj([("a", Obj([("b", [None])]))]), self.string()])
        if name == "mode":
            return rng.choice(MODES + ["Store", "store ", "", None, ["store"], Obj([("store", 1)])])
        if name == "protocol":
            return rng.choice(["rdma", "tcp", "RDMA", "tcp ", "", None, ["tcp"], Obj(), self.odd_string()])
        if name in ("global_segment_size", "local_buffer_size"):
            return self.byte_size()
        if name in ("prefill", "decode") and len(path) == 2 and path[0] == "topology":
            return rng.choice([self.small_int(), self.number(), "5", True])
        if name in ("min_replicas", "max_replicas"):
            return rng.choice([self.small_int(), self.number(), "2", True, False, None])
        if name in ("enabled", "cold_tier_enabled"):
            return rng.choice([True, False, 1, 0, Raw("1.0"), "true", None])
        if name == "device_name":
            return rng.choice([self.odd_string(), None, 0, [], ""])
        return self.value()

    def mutate(self, block: Obj) -> None:
        """Set, delete or duplicate one field somewhere in ``block``."""
        rng = self.rng
        path = rng.choice(FIELD_PATHS)
        parent = block
        for name in path[:-1]:
            child = parent.get(name)
            if not isinstance(child, Obj):
                child = Obj()
                parent.set(name, child)
            parent = child
        roll = rng.random()
        if roll < 0.15:
            parent.delete(path[-1])
        elif roll < 0.25:
            parent.pairs.insert(rng.randint(0, len(parent.pairs)), (path[-1], self.field_value(path)))
        else:
            parent.set(path[-1], self.field_value(path))

    def mutated_block(self) -> Obj:
        """A valid block with one to three mutations."""
        block = self.valid_block()
        for _ in range(self.rng.choice([1, 1, 2, 3])):
            self.mutate(block)
        return block

    # ---- dict() arguments for build ---------------------------------------

    def dict_arg(self, make) -> Node:
        """An argument for Python's ``dict()``: a mapping, pairs, or junk.

        ``make`` builds a plausible mapping for the slot (store, transfer...).
        """
        rng, roll = self.rng, self.rng.random()
        if roll < 0.5:
            o = make()
            if rng.random() < 0.3:
                self.mutate_flat(o)
            return o
        if roll < 0.75:
            return self.pairs_of(make())
        if roll < 0.85:
            return None
        return rng.choice([
            "", "ab", "a", "abc", "\ud83d\ude00x", 0, 5, Raw("-0.0"), Raw("1.5"), Raw("NaN"),
            Raw("1e400"), True, False, [], [[]], [5], [None], [True], [Raw("1.5")],
            [[[1], 2]], [[Obj(), 2]], self.value(),
        ])

    def mutate_flat(self, o: Obj) -> None:
        """Set one key of a sub-block to an arbitrary value."""
        key = self.rng.choice([p[-1] for p in FIELD_PATHS if len(p) > 1] + ["image"])
        o.set(key, self.field_value((key,)))

    def pairs_of(self, o: Obj) -> list:
        """The mapping ``o`` as a sequence ``dict()`` accepts (or nearly)."""
        rng, out = self.rng, []
        for k, v in o.pairs:
            roll = rng.random()
            if roll < 0.7:
                out.append([k, v])
            elif roll < 0.8:
                out.append(Obj([(k, 1), (self.string(), 2)]))
            else:
                out.append([k, v, 3] if rng.random() < 0.5 else [k])
        if rng.random() < 0.3:  # keys Python hashes together: 1 == 1.0 == True
            out.append([rng.choice([0, 1, True, False, None, Raw("1.0"), Raw("-0.0"), Raw("NaN"),
                                    Raw("Infinity"), Raw("1e400"), "1", "true", "null"]), self.value(2)])
        if rng.random() < 0.15:
            out.append(rng.choice(["ab", "e\u0301", "\ud800x", "\ud83d\ude00", [[1], 2], 5]))
        rng.shuffle(out)
        return out

    # ---- whole requests ------------------------------------------------

    def request(self, op: Node, pairs: list[tuple[str, Node]]) -> Obj:
        """A request object, sometimes with extra keys or a shadowed ``op``."""
        rng = self.rng
        req = Obj([("op", op)] + pairs)
        if rng.random() < 0.1:
            req.pairs.append((rng.choice(["id", "block", "value", "extra"]), self.value(1)))
        rng.shuffle(req.pairs)
        if rng.random() < 0.05:  # an earlier "op" that the real one overrides
            req.pairs.insert(0, ("op", self.string()))
        return req

    def validate_request(self, kind: str) -> Obj:
        """A ``validate`` request: valid, mutated, or a non-object block."""
        if kind == "valid":
            block: Node = self.valid_block()
        elif kind == "mutated":
            block = self.mutated_block()
        elif self.rng.random() < 0.1:
            return self.request("validate", [])
        else:
            block = self.non_object()
        return self.request("validate", [("block", block)])

    def byte_size_request(self) -> Obj:
        """An ``author_byte_size`` request with any kind of value."""
        if self.rng.random() < 0.03:
            return self.request("author_byte_size", [])
        value = self.byte_size() if self.rng.random() < 0.8 else self.value()
        return self.request("author_byte_size", [("value", value)])

    def build_request(self) -> Obj:
        """A ``build`` request with random arguments of every shape."""
        rng = self.rng
        mode = rng.choice(MODES) if rng.random() < 0.85 else self.field_value(("mode",))
        pairs: list[tuple[str, Node]] = [] if rng.random() < 0.03 else [("mode", mode)]
        for name in ("prefill_replicas", "decode_replicas"):
            if rng.random() < 0.5:
                pairs.append((name, rng.choice([self.small_int(), self.small_int(), self.number(), self.value()])))
        real_mode = mode if isinstance(mode, str) else "store"
        makers = {
            "store": self.store, "transfer": self.transfer, "proxy": self.proxy,
            "autoscaling": lambda: self.autoscaling(real_mode),
        }
        for name, make in makers.items():
            if rng.random() < 0.55:
                pairs.append((name, self.dict_arg(make)))
        if rng.random() < 0.6:
            pairs.append(("default_proxy_image", rng.choice([
                "img:1", "", "0", 0, Raw("-0"), Raw("0.0"), Raw("-0.0"), Raw("1e-400"), Raw("NaN"),
                Raw("1e400"), False, True, None, [], [0], Obj(), Obj([("a", None)]), self.string(),
            ])))
        return self.request("build", pairs)

    def unknown_op_request(self) -> Obj:
        """A request whose op is missing or not one of the three."""
        rng = self.rng
        if rng.random() < 0.2:
            return Obj([(self.string(), self.value(1))] if rng.random() < 0.5 else [])
        op = rng.choice(["Validate", "validate ", "build\x00", "author-byte-size", "", None,
                         ["validate"], Obj([("op", "build")]), self.number(), self.string()])
        return self.request(op, [("block", Obj([("mode", "store")]))] if rng.random() < 0.5 else [])


# --------------------------------------------------------------------------
# Hand-written edge cases (raw request lines).
# --------------------------------------------------------------------------


def _v(block: str) -> str:
    """A validate request line around raw block text."""
    return '{"op": "validate", "block": ' + block + "}"


def _store_size(value: str) -> str:
    """A validate request with ``store.global_segment_size`` set to raw text."""
    return _v('{"mode": "store", "store": {"global_segment_size": ' + value + "}}")


def _b(args: str) -> str:
    """A build request line with raw extra arguments."""
    return '{"op": "build", ' + args + "}"


def _size(value: str) -> str:
    """An author_byte_size request line around raw value text."""
    return '{"op": "author_byte_size", "value": ' + value + "}"


def _deep(depth: int, inner: str = "1") -> str:
    """``inner`` nested ``depth`` levels deep in alternating lists and objects
    (the oracle's own recursion limit is near 1000 levels; stay below)."""
    opens = "".join("[" if i % 2 else '{"k": ' for i in range(depth))
    closes = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return opens + inner + closes


BIG = "1" + "0" * 400
ODD_LITERALS = [
    "-0", "0", "1E2", "1e400", "-1e400", "NaN", "Infinity", "-Infinity", "2.0", "-0.0",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1" + "0" * 30, BIG,
    "true", "false", "null", "[]", "{}", '[[{"a": [null]}]]', "1e21", "1e-5", "5e-324",
]
ODD_STRINGS = [
    r'"it\u0027s"', r'"say \"hi\""', r'"both \u0027 and \""', r'"back\\slash"', r'"\u0000"',
    r'"\ud800"', r'"\udc00\ud800"', r'"\ud83d\ude00"', r'"\uDB40\uDC01"', r'"\u00ad"',
    r'"\ue000"', r'"e\u0301"', r'"\u007f\u0080\u009f"', r'"\u0085\u00a0\u3000\u2028\u200b"',
    r'"\u0378"', r'"\ufeff"', r'"\t\n\r\b\f\/"', '"raw é ­ \u2028 \U0001f600"',
]
BYTE_SIZE_TEXTS = [
    r'" 12 "', r'"\u000b12\u001f"', r'"\u001c\u001d\u001e9\u001f"', r'"\u0085 7\u00a0"',
    r'"\u200b7"', r'"\ufeff7"', r'"\u3000\u2028 9 \u2029"', r'"\t\n\r\u000c5\u000b"', r'""',
    r'"   "', r'"+1"', r'"-0"', r'"1_0"', r'"\uff11"', r'"\u0661"', r'"\u00b2"', r'"0000"',
    r'"9223372036854775807"', r'"9223372036854775808"', r'"00000000000000000000009223372036854775807"',
    '"' + BIG + '"', r'"a\u0027b\"c\\"', r'"1\u00002"', r'"\u1680\u2000\u205f\u202f3"',
]

EDGE_CASES: list[str] = [
    # protocol: missing, unknown and shadowed ops
    "{}", '{"op": null}', '{"op": "VALIDATE"}', '{"op": ["validate"]}', '{"op": {"validate": 1}}',
    *['{"op": ' + lit + "}" for lit in ODD_LITERALS],
    *['{"op": ' + s + "}" for s in ODD_STRINGS],
    r'{"op": "validate\u0000"}', r'{"op": "v\u0061lidate", "block": {"mode": "store"}}',
    r'{"op": "nope", "op": "validate", "block": {"mode": "both", "topology": {"prefill": 1, "decode": 1000}}}',
    r'{"op": "validate", "op": "nope"}', r'{"block": {"mode": "store"}}',
    ' \t\r{ "op"\t:\r"validate" ,"block"  :{ "mode":"store" }\t}\r ',
    # validate: the block itself
    '{"op": "validate"}', *[_v(lit) for lit in ODD_LITERALS], *[_v(s) for s in ODD_STRINGS],
    _v('{"mode": "store", "mode": "bogus"}'), _v(r'{"mode": "bogus", "m\u006fde": "store"}'),
    _v(r'{"m\u006Fde": "store", "mode": "both"}'),
    *[_v('{"mode": ' + v + "}") for v in ODD_LITERALS + ODD_STRINGS + ['["store"]', '{"store": 1}']],
    _v('{"mode": "store", "transfer": {"protocol": ["tcp"]}}'),
    _v('{"mode": "store", "transfer": {"protocol": {"tcp": 1}}}'),
    _v('{"mode": "store", "transfer": {"protocol": null}}'),
    _v('{"mode": "store", "transfer": {"device_name": null}}'),
    *[_v('{"mode": "store", "transfer": {"protocol": ' + s + "}}") for s in ODD_STRINGS],
    *[_v('{"mode": "store", "transfer": {"device_name": ' + v + "}}") for v in ODD_LITERALS],
    *[_v('{"mode": "both", "topology": {"prefill": ' + v + ', "decode": 1}}') for v in ODD_LITERALS],
    *[_v('{"mode": "disaggregated", "topology": {"prefill": 1, "decode": ' + v + "}}")
      for v in ["0", "1000", "1001", "-0", "1E3", '"5"', "1000.0", "9223372036854775808"]],
    _v('{"mode": "both", "topology": []}'), _v('{"mode": "both"}'),
    _v('{"mode": "store", "store": {"enabled": 1, "cold_tier_enabled": true}}'),
    _v('{"mode": "store", "store": {"enabled": true, "cold_tier_enabled": 1}}'),
    _v('{"mode": "store", "store": {"cold_tier_enabled": true, "enabled": false, "enabled": true}}'),
    *[_store_size(v) for v in BYTE_SIZE_TEXTS + ODD_LITERALS],
    _v('{"mode": "store", "store": {"local_buffer_size": -1, "global_segment_size": "x"}}'),
    _v('{"mode": "store", "autoscaling": {"enabled": true}}'),
    _v('{"mode": "store", "autoscaling": {"enabled": 1}}'),
    *[_v('{"mode": "both", "topology": {"prefill": 1, "decode": 1}, "autoscaling": {"prefill": ' + r + "}}")
      for r in ['{"min_replicas": 0}', '{"min_replicas": 3, "max_replicas": 2}', '{"min_replicas": "2"}',
                '{"max_replicas": true}', '{"min_replicas": null, "max_replicas": 0}',
                '{"min_replicas": 2.0, "max_replicas": 1}', '{"min_replicas": -0}',
                '{"max_replicas": -9223372036854775809}', '{"min_replicas": ' + BIG + "}",
                "[]", "null", '"x"', "{}"]],
    _v('{"mode": "store", "autoscaling": []}'),
    # author_byte_size
    '{"op": "author_byte_size"}', *[_size(v) for v in BYTE_SIZE_TEXTS + ODD_LITERALS + ODD_STRINGS],
    # build: modes, replicas, defaults
    '{"op": "build"}', _b('"mode": "store"'), _b('"mode": "both", "default_proxy_image": "img"'),
    _b('"mode": "disaggregated", "prefill_replicas": 0'), _b('"mode": "disaggregated", "prefill_replicas": null'),
    _b('"mode": "disaggregated", "decode_replicas": 2.0'), _b('"mode": "both", "prefill_replicas": true'),
    _b('"mode": ["store"], "store": 5'), _b('"mode": {"a": 1}'), _b('"mode": "bogus", "store": 5'),
    _b('"mode": "bogus", "store": [[[1], 2]]'), _b('"mode": ["both"], "transfer": {"protocol": ["x"]}'),
    # build: dict() of odd values
    *[_b('"mode": "store", "store": ' + v) for v in [
        '""', '"ab"', '"a"', '["ab", "cd"]', '[[1, "a"], [true, "b"], [1.0, "c"]]',
        '[[0, "a"], [false, "b"], [-0.0, "c"], [-0, "d"]]', "[[NaN, 1], [NaN, 2]]",
        "[[Infinity, 1], [1e400, 2]]", "[[-1e400, 1], [-Infinity, 2]]", '[[null, 1], ["null", 2]]',
        '[[1, 1], ["1", 2]]', '[[true, 1], ["true", 2]]', "[[[1], 2]]", "[[{}, 2]]",
        '[{"a": 1, "b": 2}]', '[{"a": 1}]', '[{"a": 1, "a": 2}]', "[5]", "[null]", "[true]", "[1.5]",
        "5", "1.5", "true", "false", "NaN", "-0", "1e400", "1" + "0" * 30, '[["a", 1], "abc"]',
        r'["\ud83d\ude00x"]', r'["\ud800x"]', r'["\ud83d\ude00"]', r'["e\u0301"]',
        '[["global_segment_size", " 12 "]]', '[["global_segment_size", true]]',
        '[[1e21, 1], [1e-5, 2], [5e-324, 3], [' + BIG + ", 4]]",
        '{"enabled": false, "cold_tier_enabled": true}', '{"enabled": false}',
        '{"a": 1, "enabled": false, "a": 2}', '{"global_segment_size": "\\u3000 42\\u0085"}',
        '{"x": [1e21, 1e-5, -0.0, 1E2, NaN, Infinity, -Infinity, 5e-324, 1e16, 123456789012345678.0]}',
        r'{"s": "\u007f\u0000\u001f\ud800\ud83d\ude00\u2028 \" \\ / \b\f\n\r\t\u00e9"}',
    ]],
    _b('"mode": "store", "transfer": {"protocol": ["tcp"]}'),
    _b('"mode": "store", "transfer": [["protocol", "tcp"]]'), _b('"mode": "store", "transfer": "ab"'),
    _b('"mode": "store", "transfer": [["protocol", null]]'),
    _b('"mode": "disaggregated", "proxy": "", "default_proxy_image": "img"'),
    _b('"mode": "disaggregated", "proxy": [["image", "mine"]], "default_proxy_image": "img"'),
    *[_b('"mode": "both", "default_proxy_image": ' + v) for v in
      ["0", "-0", "0.0", "-0.0", "1e-400", "false", '""', "[]", "{}", "[0]", '"0"', '{"a": null}',
       "true", "1e400", "NaN", "null", BIG]],
    _b('"mode": "store", "default_proxy_image": "img"'), _b('"mode": "store", "proxy": {}'),
    _b('"mode": "store", "autoscaling": {"enabled": true}'),
    _b('"mode": "both", "autoscaling": [["enabled", true], ["prefill", {"min_replicas": 3, "max_replicas": 2}]]'),
    _b('"mode": "both", "autoscaling": "ab", "store": 5'),
    _b('"mode": "store", "store": null, "transfer": null, "proxy": null, "autoscaling": null'),
    # deep nesting, echoed back by repr (validate) or json.dumps (build)
    *[_v('{"mode": "store", "transfer": {"device_name": ' + _deep(n) + "}}") for n in (100, 500, 900)],
    *[_b('"mode": "store", "proxy": {"x": ' + _deep(n, "NaN") + "}") for n in (100, 500, 900)],
    _v('{"mode": ' + "[" * 900 + "]" * 900 + "}"),
]

# Lines the oracle skips (str.strip() leaves nothing). They go at the very end
# of the batch, so a port that answers one cannot shift the other answers.
BLANK_LINES = ["", " ", "\t", "\r", " \t\r ", "\x0b", "\x0c", "\x1c\x1d\x1e\x1f", "\x85", "\xa0",
               "\u3000", "\u2028\u2029", "\u1680\u2000\u205f"]


# --------------------------------------------------------------------------
# Batch generation, running, comparison.
# --------------------------------------------------------------------------

# (category, weight) for generated lines.
CATEGORIES = [
    ("validate-valid", 15), ("validate-mutated", 35), ("validate-non-object", 5),
    ("author_byte_size", 15), ("build", 25), ("unknown-op", 5),
]


def generate(count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` random request lines plus the edge cases, as (category, line)."""
    rng = Random(seed)
    gen = Generator(rng)
    names = [name for name, _ in CATEGORIES]
    weights = [w for _, w in CATEGORIES]
    makers = {
        "validate-valid": lambda: gen.validate_request("valid"),
        "validate-mutated": lambda: gen.validate_request("mutated"),
        "validate-non-object": lambda: gen.validate_request("non-object"),
        "author_byte_size": gen.byte_size_request,
        "build": gen.build_request,
        "unknown-op": gen.unknown_op_request,
    }
    writer = Writer(rng, plain=False)
    lines = [("edge-case", line) for line in EDGE_CASES]
    for name in rng.choices(names, weights, k=count):
        lines.append((name, writer.line(makers[name]())))
    return lines


def check_oracle_safe(lines: list[tuple[str, str]]) -> None:
    """Assert every line is one the oracle answers without crashing.

    The oracle dies on invalid JSON, on a request that is not an object and
    on a newline inside a line; the generator must never produce those.
    """
    for category, line in lines:
        if "\n" in line or not line.strip():
            raise AssertionError(f"{category}: line would be split or skipped: {line!r}")
        if not isinstance(json.loads(line), dict):
            raise AssertionError(f"{category}: request is not an object: {line!r}")


def run_batch(cmd: list[str], input_path: Path, env: dict[str, str] | None = None) -> tuple[bytes, int, str]:
    """Feed the batch file to ``cmd`` once; its output bytes, exit code, stderr."""
    with open(input_path, "rb") as stdin:
        proc = subprocess.run(cmd, stdin=stdin, capture_output=True, cwd=REPO_ROOT, env=env, timeout=300)
    return proc.stdout, proc.returncode, proc.stderr.decode("utf-8", errors="backslashreplace")


def output_lines(stdout: bytes) -> list[str]:
    """A program's answer lines (invalid UTF-8 shown as escapes, so it cannot match)."""
    out = stdout.decode("utf-8", errors="backslashreplace").split("\n")
    if out and out[-1] == "":
        out.pop()
    return out


def write_batch(path: Path, requests: list[str]) -> None:
    """The batch file both programs read: the requests, then the blank lines."""
    path.write_text("\n".join(requests + BLANK_LINES) + "\n", encoding="utf-8", errors="surrogatepass")


def run_oracle(oracle: Path, batch: Path, requests: list[str]) -> tuple[bytes, list[str]]:
    """The oracle's output for the batch, raw and as lines; HarnessError when it
    crashes or leaves a request unanswered."""
    env = dict(os.environ, PYTHONUTF8="1", PYTHONIOENCODING="utf-8")
    stdout, rc, err = run_batch([sys.executable, str(oracle)], batch, env)
    answers = output_lines(stdout)
    if rc != 0 or len(answers) != len(requests):
        bad = requests[len(answers)] if len(answers) < len(requests) else "?"
        raise HarnessError(f"oracle exit {rc}, {len(answers)}/{len(requests)} answers; "
                           f"first unanswered request: {display(bad)}\n{err[-2000:]}")
    return stdout, answers


class HarnessError(Exception):
    """The harness itself cannot run (exit status 2)."""


def is_quirk(request: str, expected: str, actual: str) -> bool:
    """Whether the pair is the tolerated unhashable-TypeError difference."""
    try:
        req, exp, act = json.loads(request), json.loads(expected), json.loads(actual)
    except ValueError:
        return False
    return (
        req.get("op") in ("validate", "build")
        and exp.get("kind") == "TypeError"
        and str(exp.get("error", "")).startswith("unhashable type")
        and isinstance(act, dict)
        and act.get("kind") == "ValueError"
        and str(act.get("error", "")).startswith(QUIRK_PREFIXES)
    )


def display(line: str) -> str:
    """A request line made readable: non-ASCII as ``\\u`` escapes (which mean
    the same inside JSON strings, the only place they occur), tab and CR
    between tokens as ``<TAB>``/``<CR>``."""
    out = []
    for ch in line:
        if ch == "\t":
            out.append("<TAB>")
        elif ch == "\r":
            out.append("<CR>")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(json.dumps(ch)[1:-1])
    return "".join(out)


def signature(request: str, expected: str, actual: str) -> str:
    """A coarse kind for a mismatch: op plus both answers with values blurred."""
    def blur(text: str) -> str:
        text = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\\\"", "<s>", text)
        text = re.sub(r"-?\d[\d.e+-]*", "<n>", text)
        return text[:110]

    try:
        op = json.loads(request).get("op")
    except ValueError:
        op = "?"
    return f"op={op!r:.30} | oracle {blur(expected)} | port {blur(actual)}"


@dataclass
class Outcome:
    """One comparison of the port's answers with the expected ones."""

    lines: int = 0
    passed: int = 0
    quirks: int = 0
    mismatches: list[tuple[int, str, str, str, str]] = field(default_factory=list)


def compare(lines: list[tuple[str, str]], expected: list[str], port_out: list[str]) -> Outcome:
    """Line-by-line comparison; answers beyond the requests answer blank lines."""
    outcome = Outcome(lines=len(lines))
    for i, (category, request) in enumerate(lines):
        actual = port_out[i] if i < len(port_out) else "<no answer>"
        if expected[i] == actual:
            outcome.passed += 1
        elif is_quirk(request, expected[i], actual):
            outcome.passed += 1
            outcome.quirks += 1
        else:
            outcome.mismatches.append((i, category, request, expected[i], actual))
    for extra in port_out[len(lines):]:  # answers to lines the oracle skips
        outcome.mismatches.append((len(lines), "blank-line", "<a blank line>", "<no answer>", extra))
    return outcome


def report(title: str, outcome: Outcome, elapsed: float, mismatch_file: Path | None) -> None:
    """Prints a comparison's counts and, on mismatches, what they look like."""
    mismatches = outcome.mismatches
    print(f"{title}: {outcome.lines} lines, {len(mismatches)} mismatches, {outcome.quirks} TypeError quirks "
          f"({elapsed:.1f}s)")
    if mismatches:
        per_category = collections.Counter(category for _, category, _, _, _ in mismatches)
        print("mismatches by category: " + ", ".join(f"{c}={n}" for c, n in per_category.most_common()))
        print(f"\nfirst {min(SHOWN_MISMATCHES, len(mismatches))} mismatches:")
        for i, category, request, expected, actual in mismatches[:SHOWN_MISMATCHES]:
            print(f"#{i} [{category}]\n  request: {display(request)}\n  oracle:  {expected}\n  port:    {actual}")
        kinds = collections.Counter(signature(r, e, a) for _, _, r, e, a in mismatches)
        print(f"\n{len(kinds)} distinct mismatch kinds (count: signature):")
        for sig, n in kinds.most_common(40):
            print(f"  {n:6d}: {sig}")
        if mismatch_file:
            with open(mismatch_file, "a", encoding="utf-8", errors="surrogatepass") as f:
                f.write("".join(r + "\n" for _, _, r, _, _ in mismatches if r != "<a blank line>"))
            print(f"mismatching requests written to {mismatch_file}")
    print(f"{outcome.passed} passed, {len(mismatches)} failed")


# --------------------------------------------------------------------------
# The recorded corpus: generated requests with the oracle's answers.
# --------------------------------------------------------------------------

# Committed, so the test runs on a clone without the reference beside it.
CORPUS = REPO_ROOT / "tests" / "differential" / "corpus.jsonl.gz"
CORPUS_FORMAT = 1
# The recording's generator settings: the seed the live run used before the
# corpus existed, and its count.
RECORD_SEED = 1
RECORD_COUNT = 20000


def record(oracle: Path, tmp: Path) -> int:
    """Writes the corpus: ``RECORD_COUNT`` lines of ``RECORD_SEED`` plus the edge
    cases, each with the oracle's answer line exactly as it printed it.

    The file is gzip-compressed JSON lines, all ASCII: a header object, then
    one ``{"category", "request", "answer"}`` object per request (``json``
    escapes lone surrogates and control characters, and reads them back
    unchanged). The gzip header carries no time, so a re-recording with the
    same oracle gives the same bytes.
    """
    lines = generate(RECORD_COUNT, RECORD_SEED)
    check_oracle_safe(lines)
    requests = [line for _, line in lines]
    batch = tmp / "requests.jsonl"
    write_batch(batch, requests)
    stdout, answers = run_oracle(oracle, batch, requests)
    if ("\n".join(answers) + "\n").encode("utf-8", errors="surrogatepass") != stdout:
        raise HarnessError("the oracle's output does not round-trip through UTF-8 lines")
    header = {
        "format": CORPUS_FORMAT, "seed": RECORD_SEED, "count": RECORD_COUNT, "lines": len(lines),
        "oracle": oracle.name, "oracle_sha256": hashlib.sha256(oracle.read_bytes()).hexdigest(),
        "regenerate": "python3 tests/differential/diff_oracle.py --record",
    }
    with open(CORPUS, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
        out.write((json.dumps(header) + "\n").encode("ascii"))
        for (category, request), answer in zip(lines, answers):
            entry = {"category": category, "request": request, "answer": answer}
            out.write((json.dumps(entry) + "\n").encode("ascii"))
    print(f"recorded {len(lines)} lines (seed {RECORD_SEED}) with {oracle}'s answers in "
          f"{CORPUS.relative_to(REPO_ROOT)} ({CORPUS.stat().st_size} bytes)")
    return 0


def load_corpus() -> tuple[dict, list[tuple[str, str]], list[str]]:
    """The recorded header, (category, request) lines and answer lines."""
    if not CORPUS.exists():
        raise HarnessError(f"{CORPUS.relative_to(REPO_ROOT)} is missing: record it with "
                           "python3 tests/differential/diff_oracle.py --record (needs the reference)")
    with gzip.open(CORPUS, "rt", encoding="ascii") as f:
        header = json.loads(f.readline())
        entries = [json.loads(line) for line in f]
    if header.get("format") != CORPUS_FORMAT or header.get("lines") != len(entries):
        raise HarnessError(f"{CORPUS.relative_to(REPO_ROOT)}: format {header.get('format')}, "
                           f"{len(entries)} of {header.get('lines')} lines: record it again")
    lines = [(e["category"], e["request"]) for e in entries]
    return header, lines, [e["answer"] for e in entries]


def run_port(port_cmd: str, batch: Path) -> list[str]:
    """The port's answer lines for the batch (a non-zero exit is noted, not fatal)."""
    stdout, rc, err = run_batch(shlex.split(port_cmd), batch)
    if rc != 0:
        print(f"note: port exited with status {rc}: {err[-2000:]}")
    return output_lines(stdout)


def main() -> int:
    """Parse arguments; compare the port with the recorded answers, and with
    the oracle itself when it is there; or record the corpus."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true",
                        help="write the recorded corpus from the oracle's answers, then stop (needs the oracle)")
    parser.add_argument("--count", type=int, default=20000, help="generated lines of the live run (default 20000)")
    parser.add_argument("--seed", type=int, help="random seed of the live run (default: a fresh one, printed)")
    parser.add_argument("--port-cmd", default=DEFAULT_PORT_CMD, help="port command, run from the repo root")
    parser.add_argument("--oracle", default=os.environ.get("GCO_ORACLE", DEFAULT_ORACLE),
                        help="oracle script (default $GCO_ORACLE or %(default)s), relative to the repo root")
    parser.add_argument("--mismatch-file", type=Path, help="write every mismatching request line here")
    args = parser.parse_args()

    os.chdir(REPO_ROOT)
    sys.set_int_max_str_digits(0)
    oracle = Path(args.oracle)
    if args.mismatch_file:
        args.mismatch_file.write_text("")

    with tempfile.TemporaryDirectory(prefix="gco-diff-") as tmp_name:
        tmp = Path(tmp_name)
        try:
            if args.record:
                if not oracle.is_file():
                    raise HarnessError(f"--record needs the reference: not found at {oracle} (set GCO_ORACLE)")
                return record(oracle, tmp)
            return run(args, oracle, tmp)
        except HarnessError as e:
            print(f"harness error: {e}", file=sys.stderr)
            return 2


def run(args: argparse.Namespace, oracle: Path, tmp: Path) -> int:
    """The recorded comparison, then (with the oracle) the recording's
    freshness check and a live comparison on a fresh seed."""
    failed = False

    started = time.monotonic()
    header, lines, recorded = load_corpus()
    requests = [line for _, line in lines]
    batch = tmp / "recorded.jsonl"
    write_batch(batch, requests)
    outcome = compare(lines, recorded, run_port(args.port_cmd, batch))
    report(f"recorded corpus (seed {header['seed']}, the reference's answers)", outcome,
           time.monotonic() - started, args.mismatch_file)
    failed |= bool(outcome.mismatches)

    if not oracle.is_file():
        print(f"\nreference not found at {oracle} (set GCO_ORACLE): compared with the recorded answers only; "
              "the live comparison with the reference is skipped")
        return 1 if failed else 0

    # The recording must still be what the oracle says, or it tests nothing.
    started = time.monotonic()
    _, answers = run_oracle(oracle, batch, requests)
    stale = [i for i, (a, b) in enumerate(zip(answers, recorded)) if a != b]
    print(f"\nrecorded answers against the reference itself: {len(stale)} of {len(requests)} differ "
          f"({time.monotonic() - started:.1f}s)")
    for i in stale[:SHOWN_MISMATCHES]:
        print(f"#{i}\n  request:  {display(requests[i])}\n  recorded: {recorded[i]}\n  oracle:   {answers[i]}")
    if stale:
        print("the recording is stale: python3 tests/differential/diff_oracle.py --record")
        failed = True

    seed = args.seed if args.seed is not None else Random().randrange(2**32)
    started = time.monotonic()
    lines = generate(args.count, seed)
    check_oracle_safe(lines)
    requests = [line for _, line in lines]
    batch = tmp / "live.jsonl"
    write_batch(batch, requests)
    _, expected = run_oracle(oracle, batch, requests)
    outcome = compare(lines, expected, run_port(args.port_cmd, batch))
    print()
    report(f"live against {oracle} (seed {seed}: rerun with --seed {seed})", outcome,
           time.monotonic() - started, args.mismatch_file)
    failed |= bool(outcome.mismatches)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
