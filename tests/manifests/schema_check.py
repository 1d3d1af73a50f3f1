#!/usr/bin/env python3
"""Checks every object of the golden manifests against the Kubernetes
schemas (PyPI kubernetes-validate, offline, strict: an unknown field is an
error).

Each golden file is one `v1` `List`, which has no schema of its own, so its
items are checked one by one. KEDA's ScaledObject is a custom resource with
no schema in kubernetes-validate: it is counted apart, never passed as
valid. Exits 1 when any object is invalid (or no object was checked).

    python3 tests/manifests/schema_check.py [-k 1.33.0] [FILE.yaml ...]
"""

import argparse
import pathlib
import sys

import kubernetes_validate
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "core" / "tests" / "golden" / "manifests"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", "--kubernetes-version", action="append", dest="versions")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    versions = args.versions or ["1.33.0"]
    files = args.files or sorted(GOLDEN.glob("*.yaml"))
    checked = invalid = 0
    no_schema: dict[str, int] = {}
    for version in versions:
        for path in files:
            listed = yaml.safe_load(path.read_text(encoding="utf-8"))
            if not isinstance(listed, dict) or listed.get("kind") != "List":
                print(f"{path}: not a v1 List", file=sys.stderr)
                return 1
            for item in listed.get("items") or []:
                what = f"{path.name}: {item.get('kind')} {item.get('metadata', {}).get('name')}"
                try:
                    kubernetes_validate.validate(item, version, strict=True)
                    checked += 1
                except kubernetes_validate.SchemaNotFoundError:
                    kind = f"{item.get('apiVersion')} {item.get('kind')}"
                    no_schema[kind] = no_schema.get(kind, 0) + 1
                except kubernetes_validate.ValidationError as error:
                    invalid += 1
                    print(f"INVALID ({version}) {what}: {error.message} at {list(error.path)}")
    print(
        f"kubernetes-validate {', '.join(versions)} (strict): {checked} objects checked "
        f"in {len(files)} files, {invalid} invalid"
        + "".join(f"; {n} {kind} without a schema (custom resource)" for kind, n in no_schema.items())
    )
    return 1 if invalid or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
