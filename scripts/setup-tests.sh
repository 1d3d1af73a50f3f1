#!/usr/bin/env bash
# Installs what the tests need beyond the build (scripts/setup.sh, run
# first): package.json's test tools (dynalite, playwright-core, the
# OpenID provider, ...), boto3 and moto's DynamoDB server, kubernetes-validate
# (the manifests' schema check), jsonschema (the SARIF check), and
# Debian's Chromium. Skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

log() { printf '[setup-tests] %s\n' "$*" >&2; }

if [ ! -x node_modules/.bin/dynalite ] || [ ! -d node_modules/playwright-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing the npm test tools (dynalite, playwright-core, oidc-provider, ...)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if ! python3 -c 'import boto3' 2>/dev/null; then
  log "installing boto3 for the interop test (GCO's side of the table)"
  python3 -m pip install --quiet --disable-pip-version-check 'boto3>=1.34,<2'
fi

if ! python3 -c 'import moto.server, werkzeug' 2>/dev/null || ! command -v moto_server >/dev/null; then
  log "installing moto's DynamoDB server for the history tests (dynalite has no TransactWriteItems)"
  python3 -m pip install --quiet --disable-pip-version-check 'moto[server]>=5,<6'
fi

if [ "$(python3 -c 'import kubernetes_validate.version as v; print(v.__version__)' 2>/dev/null)" != "1.37.0" ]; then
  log "installing kubernetes-validate 1.37.0 (the Kubernetes schemas, offline) for the manifests' schema check"
  python3 -m pip install --quiet --disable-pip-version-check 'kubernetes-validate==1.37.0'
fi

if ! python3 -c 'import jsonschema' 2>/dev/null; then
  log "installing jsonschema for the SARIF output's check against its published schema"
  python3 -m pip install --quiet --disable-pip-version-check 'jsonschema>=4.18,<5'
fi

if [ ! -x /usr/bin/chromium ]; then
  log "installing Debian's Chromium for the browser tests (about 20 s)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
