#!/usr/bin/env python3
"""The table from GCO's side: boto3 reads what the console writes, and the
console serves and changes what GCO's Python CLI writes.

GCO's CLI and monitors are Python over boto3 (GCO_FACTS section 1): they
read items with the resource API, which returns numbers as `Decimal`, and
turn whole ones into ints; floats travel as strings. This test plays that
side against a real DynamoDB-compatible server (npm dynalite, started here
on a free port) and the real `gco-console` binary on it:

1. records the console deploys and changes, read back with boto3: every
   attribute with the type GCO reads it as, equal to what the API returned;
   a scan in pages of one item finds each;
2. records written by boto3 as GCO's CLI writes them (with a monitor's
   region_status, and an older record without the lifecycle attributes):
   the console lists, shows and changes them, touching only what the change
   is about;
3. a write from Python between the console's read and its conditional
   write: the console answers 412 and the Python write survives;
4. GCO's monitor writing region_status (STORE.update_region_status, GCO_FACTS
   section 3) between the console's read and its change with If-Match, and
   all along while a page keeps changing the record: every change lands,
   every status write stays, a read with If-None-Match is 304 until a write
   of either kind; a CLI write among them is still a 412.

Usage: python3 tests/interop/gco_python_store.py [path to gco-console]
(default target/release/gco-console). Needs boto3 and node_modules (both
installed by scripts/setup.sh). Exits non-zero on the first failure.
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import boto3
from boto3.dynamodb.conditions import Attr

ROOT = Path(__file__).resolve().parents[2]
TABLE = "gco-inference-endpoints"
REGION = "us-east-1"
# The console's --refresh-interval here: how soon a write made elsewhere shows.
REFRESH_SECONDS = 1
DEPLOYED = ["us-east-1", "eu-west-1"]
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
# The type GCO reads each attribute every record has as (labels only when
# there are some).
GCO_TYPES = {
    "endpoint_name": "S", "desired_state": "S", "target_regions": "L", "namespace": "S",
    "spec": "M", "ingress_path": "S", "created_at": "S", "updated_at": "S",
    "region_status": "M", "lifecycle_id": "S", "cleanup_regions": "L", "region_generations": "M",
}

# boto3 needs credentials to sign with; dynalite accepts any.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "interop")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "interop")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, what, proc):
    for _ in range(200):
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on port {port}")


def from_dynamo(v):
    """A value as GCO's Python store reads it: whole Decimals are ints."""
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {k: from_dynamo(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_dynamo(x) for x in v]
    return v


class Api:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, r.headers, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, e.headers, json.loads(e.read() or b"null")

    def ok(self, method, path, body=None, status=200, headers=None):
        got, hdrs, answer = self.call(method, path, body, headers)
        check(got == status, f"{method} {path}: {got} {answer}, expected {status}")
        return answer, hdrs


def check(cond, message):
    if not cond:
        print(f"FAIL: {message}")
        sys.exit(1)


def attribute_types(client, name):
    item = client.get_item(TableName=TABLE, Key={"endpoint_name": {"S": name}}, ConsistentRead=True)["Item"]
    return item, {k: next(iter(v)) for k, v in item.items()}


def console_writes_python_reads(api, table, client):
    full = json.loads((ROOT / "core/benches/inputs/requests/full.json").read_text())
    plain = {
        "endpoint_name": "plain-chat",
        "image": "vllm/vllm-openai:v0.27.1",
        "autoscaling": {"enabled": True, "min_replicas": 1, "max_replicas": 3, "target_cpu": 62.5},
        "env": {"MAX_TOKENS": "4096"},
    }
    api.ok("POST", "/api/endpoints", full, status=201)
    api.ok("POST", "/api/endpoints", plain, status=201)
    api.ok("PUT", "/api/endpoints/chat-pd/topology", {"prefill": 3, "decode": 5})
    api.ok("POST", "/api/endpoints/chat-pd/regions", {"region": "ap-northeast-1"})
    api.ok("POST", "/api/endpoints/plain-chat/stop")

    # A scan in pages of one item, as a list over many pages would go.
    names, start = [], None
    while True:
        kwargs = {"Limit": 1, "ConsistentRead": True}
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = table.scan(**kwargs)
        names += [i["endpoint_name"] for i in page["Items"]]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    check(sorted(names) == ["chat-pd", "plain-chat"], f"scan found {names}")

    for name in names:
        shown, _ = api.ok("GET", f"/api/endpoints/{name}")
        read = from_dynamo(table.get_item(Key={"endpoint_name": name}, ConsistentRead=True)["Item"])
        check(read == shown, f"{name}: boto3 reads {read}\nthe console shows {shown}")
        item, types = attribute_types(client, name)
        for attr, kind in GCO_TYPES.items():
            check(types.get(attr) == kind, f"{name}.{attr} is {types.get(attr)}, GCO reads {kind}")
        check(read["ingress_path"] == f"/inference/{name}", f"{name}: ingress_path {read['ingress_path']}")
        for stamp in ("created_at", "updated_at"):
            check(ISO.match(read[stamp]), f"{name}.{stamp} {read[stamp]!r} is not GCO's ISO format")
        check(HEX64.match(read["lifecycle_id"]), f"{name}.lifecycle_id {read['lifecycle_id']!r}")
        check(read["region_status"] == {}, f"{name}.region_status starts empty, got {read['region_status']}")
        for region in read["target_regions"]:
            check(region in read["cleanup_regions"], f"{name}: {region} missing from cleanup_regions")
            check(HEX64.match(read["region_generations"].get(region, "")), f"{name}: no generation for {region}")
        spec = item["spec"]["M"]
        check("N" in spec["port"] and "N" in spec["replicas"], f"{name}: port/replicas not numbers: {spec}")

    chat = from_dynamo(table.get_item(Key={"endpoint_name": "chat-pd"})["Item"])
    store = client.get_item(TableName=TABLE, Key={"endpoint_name": {"S": "chat-pd"}})["Item"]["spec"]["M"]["mooncake"]["M"]["store"]["M"]
    check(store["global_segment_size"] == {"S": "34359738368"}, f"byte sizes are digit strings (S): {store}")
    check(chat["spec"]["mooncake"]["topology"] == {"prefill": 3, "decode": 5}, f"topology {chat['spec']['mooncake']}")
    check(chat["desired_state"] == "deploying", "a spec change leaves the record deploying")
    check(chat["target_regions"] == ["us-east-1", "eu-west-1", "ap-northeast-1"], f"regions {chat['target_regions']}")
    check(chat["labels"] == {"team": "platform", "tier": "prod"}, f"labels {chat.get('labels')}")

    plain_item, plain_types = attribute_types(client, "plain-chat")
    check("labels" not in plain_types, "labels are written only when non-empty")
    cpu = plain_item["spec"]["M"]["autoscaling"]["M"]["target_cpu"]
    check(cpu == {"S": "62.5"}, f"a float is written as a string, got {cpu}")
    check(from_dynamo(table.get_item(Key={"endpoint_name": "plain-chat"})["Item"])["desired_state"] == "stopped", "stop")
    print(f"ok: records the console writes read back with boto3 as GCO reads them "
          f"(2 records, {len(GCO_TYPES)} attributes each, and labels where given)")


def gco_record(name, regions, mooncake=None, **extra):
    """An item as GCO's CLI writes it: ints as numbers, sizes as strings."""
    now = "2026-11-30T09:15:02.000001+00:00"
    item = {
        "endpoint_name": name,
        "desired_state": "running",
        "target_regions": regions,
        "namespace": "gco-inference",
        "spec": {
            "image": "vllm/vllm-openai:v0.27.1",
            "port": 8000,
            "replicas": 2,
            "gpu_count": 1,
            "health_check_path": "/health",
            "framework": "vllm",
        },
        "ingress_path": f"/inference/{name}",
        "created_at": now,
        "updated_at": now,
        "region_status": {
            "us-east-1": {
                "state": "running",
                "replicas_ready": 2,
                "replicas_desired": 2,
                "last_sync": now,
                "roles": {"prefill": {"ready": 1, "desired": 1}, "decode": {"ready": 2, "desired": 2}},
            }
        },
    }
    if mooncake:
        item["spec"]["mooncake"] = mooncake
    item.update(extra)
    return item


def python_writes_console_reads(api, table):
    lifecycle = "ab" * 32
    newer = gco_record(
        "cli-made",
        ["us-east-1"],
        lifecycle_id=lifecycle,
        cleanup_regions=["us-east-1"],
        region_generations={"us-east-1": "cd" * 32},
    )
    table.put_item(Item=newer, ConditionExpression=Attr("endpoint_name").not_exists())
    older = gco_record(
        "cli-older",
        ["eu-west-1"],
        mooncake={
            "mode": "disaggregated",
            "topology": {"prefill": 1, "decode": 2},
            "store": {"enabled": True, "global_segment_size": "4294967296"},
        },
    )
    table.put_item(Item=older, ConditionExpression=Attr("endpoint_name").not_exists())

    listed, _ = api.ok("GET", "/api/endpoints?region=us-east-1")
    names = [r["endpoint_name"] for r in listed["endpoints"]]
    check("cli-made" in names and "cli-older" not in names, f"region filter lists {names}")
    shown, _ = api.ok("GET", "/api/endpoints/cli-made")
    check(shown == newer, f"the console shows a CLI record as written:\n{shown}\n{newer}")

    api.ok("PUT", "/api/endpoints/cli-made/replicas", {"replicas": 3})
    after = from_dynamo(table.get_item(Key={"endpoint_name": "cli-made"}, ConsistentRead=True)["Item"])
    check(after["spec"]["replicas"] == 3, f"scale wrote replicas {after['spec']['replicas']}")
    check(after["desired_state"] == "running", "scale does not change desired_state")
    check(after["region_status"] == newer["region_status"], "the monitor's region_status is left as written")
    check(after["lifecycle_id"] == lifecycle, "lifecycle_id never changes")
    check(after["updated_at"] != newer["updated_at"] and ISO.match(after["updated_at"]), "updated_at moves on")
    check({k: v for k, v in after.items() if k not in ("spec", "updated_at")}
          == {k: v for k, v in newer.items() if k not in ("spec", "updated_at")},
          "scale touches only spec and updated_at")

    # A record from an older GCO (no lifecycle attributes) stays usable.
    api.ok("GET", "/api/endpoints/cli-older")
    api.ok("PUT", "/api/endpoints/cli-older/topology", {"prefill": 2, "decode": 2})
    older_after = from_dynamo(table.get_item(Key={"endpoint_name": "cli-older"}, ConsistentRead=True)["Item"])
    check(older_after["spec"]["mooncake"]["topology"] == {"prefill": 2, "decode": 2}, "topology on an older record")
    check(older_after["desired_state"] == "deploying", "a spec change redeploys")
    print("ok: records written as GCO's CLI writes them are listed, shown and changed by the console")


def python_write_between_read_and_write(api, table):
    _, headers = api.ok("GET", "/api/endpoints/cli-made")
    etag = headers["ETag"]
    # GCO's CLI updates the record, conditioned as it does on updated_at.
    read = table.get_item(Key={"endpoint_name": "cli-made"}, ConsistentRead=True)["Item"]
    table.update_item(
        Key={"endpoint_name": "cli-made"},
        UpdateExpression="SET spec.replicas = :r, updated_at = :u",
        ConditionExpression=Attr("updated_at").eq(read["updated_at"]),
        ExpressionAttributeValues={":r": 5, ":u": "2026-12-01T00:00:00.000000+00:00"},
    )
    status, _, answer = api.call("PUT", "/api/endpoints/cli-made/replicas", {"replicas": 1}, {"If-Match": etag})
    check(status == 412, f"a stale If-Match after a CLI write is 412, got {status} {answer}")
    kept = from_dynamo(table.get_item(Key={"endpoint_name": "cli-made"}, ConsistentRead=True)["Item"])
    check(kept["spec"]["replicas"] == 5, f"the CLI's write survives, replicas {kept['spec']['replicas']}")
    print("ok: a CLI write between the console's read and write gets 412 and is kept")


def monitor_status_write(table, name, region, replicas):
    """GCO's monitor after a pass: a strong read, then STORE.update_region_status
    with an ordinary write's update expression and conditions. The entry's
    keys in GCO's order; returns it as written, or None when the conditions
    failed (GCO's "stale regional status", skipped)."""
    read = table.get_item(Key={"endpoint_name": name}, ConsistentRead=True)["Item"]
    now = datetime.now(timezone.utc).isoformat()
    status = {
        "state": "running",
        "replicas_ready": replicas,
        "replicas_desired": replicas,
        "last_sync": now,
        "lifecycle_id": read["lifecycle_id"],
        "region_generation": read["region_generations"][region],
    }
    try:
        table.update_item(
            Key={"endpoint_name": name},
            UpdateExpression="SET region_status.#r = :s, updated_at = :u",
            ConditionExpression=(
                "attribute_exists(endpoint_name) AND lifecycle_id = :expected_lifecycle_id"
                " AND region_generations.#r = :expected_region_generation AND desired_state <> :deleted"
            ),
            ExpressionAttributeNames={"#r": region},
            ExpressionAttributeValues={
                ":s": status,
                ":u": now,
                ":expected_lifecycle_id": read["lifecycle_id"],
                ":expected_region_generation": read["region_generations"][region],
                ":deleted": "deleted",
            },
        )
    except table.meta.client.exceptions.ConditionalCheckFailedException:
        return None
    return status


def monitor_writes_among_console_changes(api, table, endpoint):
    name, path = "cli-made", "/api/endpoints/cli-made"

    def stored():
        return from_dynamo(table.get_item(Key={"endpoint_name": name}, ConsistentRead=True)["Item"])

    # The page first shows the record as the table holds it: the console's
    # view has writes made elsewhere within one refresh interval.
    shown = time.monotonic()
    while api.ok("GET", path)[0]["updated_at"] != stored()["updated_at"]:
        check(time.monotonic() - shown < REFRESH_SECONDS + 2, "the table's version is not shown")
        time.sleep(0.05)

    # A status write between each read and the change made from it.
    for n in range(5):
        _, headers = api.ok("GET", path)
        read_tag = headers["ETag"]
        status = monitor_status_write(table, name, "us-east-1", 10 + n)
        check(status is not None, "the monitor's write is not stale")
        # Pages read the console's view of the table, which shows a write
        # made elsewhere within one refresh interval; until then, 304.
        written = time.monotonic()
        while True:
            status_now, headers_now, _ = api.call("GET", path, headers={"If-None-Match": read_tag})
            if status_now != 304:
                break
            check(time.monotonic() - written < REFRESH_SECONDS + 2,
                  f"a status write not shown after {time.monotonic() - written:.1f} s")
            time.sleep(0.05)
        check(status_now == 200 and headers_now["ETag"] != read_tag,
              f"a status write gives a new tag: {status_now} {headers_now['ETag']} {read_tag}")
        answer, headers = api.ok("PUT", path + "/replicas", {"replicas": 20 + n}, headers={"If-Match": read_tag})
        check(answer["region_status"]["us-east-1"] == status, f"the change answers the status: {answer['region_status']}")
        after = stored()
        check(after["spec"]["replicas"] == 20 + n, f"the change landed: {after['spec']}")
        check(after["region_status"]["us-east-1"] == status, f"the status write stays: {after['region_status']}")
        unchanged, headers_304, body = api.call("GET", path, headers={"If-None-Match": headers["ETag"]})
        check(unchanged == 304 and body is None and headers_304["ETag"] == headers["ETag"],
              f"nothing changed since the change: {unchanged} {body}")

    # GCO's CLI scales between a read and a change: 412, whatever the
    # monitor wrote after it, and both writes stay.
    _, headers = api.ok("GET", path)
    read = table.get_item(Key={"endpoint_name": name}, ConsistentRead=True)["Item"]
    table.update_item(
        Key={"endpoint_name": name},
        UpdateExpression="SET spec.replicas = :r, updated_at = :u",
        ConditionExpression=Attr("updated_at").eq(read["updated_at"]),
        ExpressionAttributeValues={":r": 7, ":u": datetime.now(timezone.utc).isoformat()},
    )
    status = monitor_status_write(table, name, "us-east-1", 99)
    got, _, answer = api.call("PUT", path + "/replicas", {"replicas": 1}, {"If-Match": headers["ETag"]})
    check(got == 412, f"a CLI write among status writes is still 412, got {got} {answer}")
    kept = stored()
    check(kept["spec"]["replicas"] == 7 and kept["region_status"]["us-east-1"] == status,
          f"the CLI's and the monitor's writes stay: {kept['spec']['replicas']} {kept['region_status']}")

    # A monitor writing all along (every few ms, where GCO's write every 15 s
    # per region) while a page keeps changing the record with If-Match.
    stop, written = threading.Event(), []

    def monitor():
        own = boto3.session.Session().resource("dynamodb", endpoint_url=endpoint, region_name=REGION).Table(TABLE)
        n = 100
        while not stop.is_set():
            status = monitor_status_write(own, name, "us-east-1", n)
            if status is not None:
                written.append(status)
            n += 1
            time.sleep(0.002)

    # The page shows the CLI's write once the console's view has it (within
    # one refresh interval); a change made from an older page is a 412.
    shown = time.monotonic()
    while api.ok("GET", path)[0]["spec"]["replicas"] != 7:
        check(time.monotonic() - shown < REFRESH_SECONDS + 2, "the CLI's write is not shown")
        time.sleep(0.05)
    thread = threading.Thread(target=monitor)
    thread.start()
    try:
        changes = 20
        for n in range(changes):
            _, headers = api.ok("GET", path)
            time.sleep(0.01)
            api.ok("PUT", path + "/replicas", {"replicas": 30 + n}, headers={"If-Match": headers["ETag"]})
    finally:
        stop.set()
        thread.join()
    final = stored()
    check(final["spec"]["replicas"] == 30 + changes - 1, f"the last change is stored: {final['spec']}")
    check(len(written) > changes, f"the monitor wrote only {len(written)} times")
    check(final["region_status"]["us-east-1"] == written[-1],
          f"the monitor's last status stays: {final['region_status']}\n{written[-1]}")
    print(f"ok: GCO's monitor status writes between reads and changes with If-Match: every change "
          f"lands and every status write stays ({changes} changes among {len(written)} status writes); "
          f"304 until a write; a CLI write is still 412")


def main():
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target/release/gco-console"
    dynalite = ROOT / "node_modules/.bin/dynalite"
    check(binary.exists(), f"{binary} is missing: cargo build --release -p gco-console")
    check(dynalite.exists(), f"{dynalite} is missing: run scripts/setup.sh")
    with tempfile.TemporaryDirectory(prefix="gco-interop-") as tmp:
        tmp = Path(tmp)
        (tmp / "dist").mkdir()
        (tmp / "dist/index.html").write_text("<!doctype html>")
        dport, cport = free_port(), free_port()
        procs = []
        try:
            db = subprocess.Popen([str(dynalite), "--port", str(dport), "--path", str(tmp / "db")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(db)
            wait_for(dport, "dynalite", db)
            endpoint = f"http://127.0.0.1:{dport}"
            log = open(tmp / "console.log", "w")
            procs.append(log)
            console = subprocess.Popen(
                [str(binary), "--addr", f"127.0.0.1:{cport}", "--dist", str(tmp / "dist"),
                 "--dynamodb-endpoint", endpoint, "--dynamodb-region", REGION, "--dynamodb-table", TABLE,
                 "--create-table", "--history-table", "off", "--regions", ",".join(DEPLOYED),
                 "--refresh-interval", f"{REFRESH_SECONDS}s"],
                stdout=log, stderr=subprocess.STDOUT)
            procs.append(console)
            wait_for(cport, "gco-console", console)
            api = Api(f"http://127.0.0.1:{cport}")
            table = boto3.resource("dynamodb", endpoint_url=endpoint, region_name=REGION).Table(TABLE)
            client = boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION)
            console_writes_python_reads(api, table, client)
            python_writes_console_reads(api, table)
            python_write_between_read_and_write(api, table)
            monitor_writes_among_console_changes(api, table, endpoint)
        finally:
            failed = sys.exc_info()[0] is not None
            for p in reversed(procs):
                if isinstance(p, subprocess.Popen):
                    p.terminate()
                    p.wait(timeout=10)
                else:
                    p.close()
            # The temporary directory goes with the run: show the server's
            # side of a failure first.
            if failed and (tmp / "console.log").exists():
                print("gco-console's log:\n" + (tmp / "console.log").read_text())


if __name__ == "__main__":
    main()
