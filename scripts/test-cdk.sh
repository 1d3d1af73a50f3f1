#!/usr/bin/env bash
# The CDK app's tests (deploy/cdk/tests): synthesizes the stack with no AWS
# account, checks it with aws_cdk.assertions, and runs cdk-nag's
# AwsSolutions pack over it. Installs the pinned Python packages first
# (scripts/setup-cdk.sh). The CDK runs its constructs in node (jsii): without
# node the tests cannot run, and this says so and skips.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test-cdk] %s\n' "$*" >&2; }

if ! node -e '' 2>/dev/null; then
  log "skipped: node does not run here, and the CDK's jsii runtime needs it"
  exit 0
fi
bash scripts/setup-cdk.sh
# jsii prints a banner for a node major it no longer supports (20 here);
# the CDK works on it (shared/TOOLCHAIN.md).
JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=$(node -p 'process.versions.node.split(".")[0]')
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION
python3 -m pytest -q -p no:cacheprovider deploy/cdk/tests
