#!/usr/bin/env python3
"""Seeds endpoints for scripts/benchmarks.sh's http part, through the API.

  bench_seed.py BASE_URL FROM TO REQUEST.json

deploys bench-FROM ... bench-(TO-1) (names zero-padded to five digits, as
scripts/bench_wrk.lua picks them) with the request in REQUEST.json, so the
records are real ones, written by the same code a console user runs. Eight
keep-alive connections in parallel. A 503 (the store is busy, e.g. dynalite
still answering the scans of an earlier list run) is retried for up to a
minute; a 409 on a retry means the first try landed. Any other answer than
201 stops the seeding.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

WORKERS = 8
RETRIES = 60


def main() -> None:
    base, first, last, request_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    url = urlsplit(base)
    request = json.loads(open(request_file, encoding="utf-8").read())
    local = threading.local()

    def deploy(i: int) -> None:
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        body = json.dumps({**request, "endpoint_name": f"bench-{i:05d}"})
        for attempt in range(RETRIES + 1):
            local.conn.request("POST", "/api/endpoints", body, {"Content-Type": "application/json"})
            response = local.conn.getresponse()
            text = response.read()
            if response.status == 201 or (response.status == 409 and attempt > 0):
                return
            if response.status != 503 or attempt == RETRIES:
                raise RuntimeError(f"deploy bench-{i:05d}: {response.status} {text[:300]!r}")
            time.sleep(1)

    started = time.monotonic()
    with ThreadPoolExecutor(WORKERS) as pool:
        for _ in pool.map(deploy, range(first, last)):
            pass
    elapsed = time.monotonic() - started
    print(f"seeded bench-{first:05d}..bench-{last - 1:05d} in {elapsed:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
