#!/usr/bin/env bash
# Installs the CDK app's Python packages (deploy/cdk/requirements.txt, pinned:
# aws-cdk-lib, constructs, cdk-nag) and its tests' (requirements-dev.txt:
# pytest) into python3, skipping each one already installed at its version.
# About 30 s the first time; a fraction of a second after.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[setup-cdk] %s\n' "$*" >&2; }

missing=$(python3 - deploy/cdk/requirements.txt deploy/cdk/requirements-dev.txt <<'PY'
import importlib.metadata as metadata, sys
for path in sys.argv[1:]:
    for line in open(path):
        spec = line.split("#", 1)[0].strip()
        if not spec:
            continue
        name, _, version = spec.partition("==")
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have != version:
            print(spec)
PY
)
if [ -n "$missing" ]; then
  log "installing $(echo $missing)"
  # shellcheck disable=SC2086
  python3 -m pip install --quiet --disable-pip-version-check $missing
fi
