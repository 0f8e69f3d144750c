#!/usr/bin/env bash
# Agent-loop benchmark (see bench/README.md). Options are passed to bench/agent-loop.mjs;
# `bench/run.sh serve [options]` runs bench/serve.mjs (many sessions in one glassbox serve);
# `bench/run.sh tokens [options]` runs bench/tokens.mjs (characters an agent receives per loop).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# Install the pinned packages when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
    npm ci --no-audit --no-fund --loglevel=error >&2
fi
cd "$here/.."
if [ "${1:-}" = tokens ]; then
  shift
  exec node bench/tokens.mjs "$@"
fi
if [ "${1:-}" = serve ]; then
  shift
  exec node bench/serve.mjs "$@"
fi
exec node bench/agent-loop.mjs "$@"
