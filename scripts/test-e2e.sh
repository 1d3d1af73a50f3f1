#!/usr/bin/env bash
# Runs the console's browser end-to-end tests (tests/e2e/) in headless
# Chromium: Debian's /usr/bin/chromium driven by npm playwright-core, against
# the real backend with a fresh data directory. Builds dist/ when it is
# missing or older than the console's sources (web/, core/src, api/src,
# index.html, Cargo.lock), and the backend (unless GCO_CONSOLE_BIN names one).
# Installs what is missing by scripts/setup-tests.sh. Exits non-zero when a
# test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
log() { printf '[test-e2e] %s\n' "$*" >&2; }

if [ ! -x /usr/bin/chromium ] || [ ! -f node_modules/playwright-core/package.json ]; then
  bash scripts/setup-tests.sh
fi

# dist/ is stale when a console source or the page's own files are newer.
stale=""
if [ ! -f dist/index.html ]; then
  stale="missing"
elif [ -n "$(find web core/src api/src index.html Cargo.lock -newer dist/index.html -type f -print -quit 2>/dev/null)" ]; then
  stale="older than its sources"
fi
if [ -n "$stale" ]; then
  log "building the console (dist/ $stale): scripts/build-web.sh"
  bash scripts/build-web.sh
fi

# GCO_CONSOLE_BIN names a backend built elsewhere (tests/e2e/harness.cjs
# runs it); without it, the release build in cargo's target directory.
if [ -n "${GCO_CONSOLE_BIN:-}" ]; then
  log "the backend: $GCO_CONSOLE_BIN (GCO_CONSOLE_BIN)"
else
  log "building the backend: cargo build --release -p gco-console"
  cargo build --release -q -p gco-console
fi

rm -rf tests/e2e/artifacts
log "running node --test tests/e2e/"
node --test tests/e2e/
