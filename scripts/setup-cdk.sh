#!/usr/bin/env bash
# Installs the CDK app's Python packages (deploy/cdk/requirements.txt, pinned:
# aws-cdk-lib, constructs, cdk-nag) and its tests' (requirements-dev.txt:
# pytest) into python3, with every indirect one held to
# deploy/cdk/constraints.txt, skipping each one already installed at its
# version; then the pinned CDK CLI (deploy/cdk/package.json, npm ci), which
# `npx --yes cdk` runs. About 30 s the first time; a second after.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[setup-cdk] %s\n' "$*" >&2; }

missing=$(python3 - deploy/cdk/constraints.txt <<'PY'
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
  python3 -m pip install --quiet --disable-pip-version-check -c deploy/cdk/constraints.txt \
    -r deploy/cdk/requirements.txt -r deploy/cdk/requirements-dev.txt $missing
fi
cli_wanted=$(node -p 'require("./deploy/cdk/package.json").devDependencies["aws-cdk"]')
cli_have=$(node -p 'require("./deploy/cdk/node_modules/aws-cdk/package.json").version' 2>/dev/null || true)
if [ "$cli_have" != "$cli_wanted" ]; then
  log "installing the pinned CDK CLI (deploy/cdk: npm ci)"
  (cd deploy/cdk && npm ci --no-audit --no-fund --silent)
fi
