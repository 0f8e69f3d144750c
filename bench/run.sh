#!/usr/bin/env bash
# Agent-loop benchmark (see bench/README.md). Options are passed to bench/agent-loop.mjs;
# `bench/run.sh serve [options]` runs bench/serve.mjs (many sessions in one glassbox serve);
# `bench/run.sh pool [options]` runs bench/pool.mjs (a new session's first navigate, warm pool).
# `bench/run.sh replicas [options]` runs bench/replicas.mjs (HAProxy vs direct, sessions per replica).
# `bench/run.sh profiles [options]` runs bench/profiles.mjs (profile open and save, data dir vs bucket).
# `bench/run.sh files [options]` runs bench/files.mjs (uploads and downloads).
# `bench/run.sh cdp [options]` runs bench/cdp-relay.mjs (the CDP endpoint's relay overhead).
# `bench/run.sh console [options]` runs bench/console.mjs (web console viewers and the agents).
# `bench/run.sh isolation [options]` runs bench/isolation.mjs (sessions per machine in each isolation mode).
# `bench/run.sh isolation-chromium [options]` runs bench/isolation-chromium.mjs (the same, Chromium alone, by process kind).
# `bench/run.sh tokens [options]` runs bench/tokens.mjs (characters an agent receives per loop).
# `bench/run.sh list-tools [options]` runs bench/list-tools.mjs (what tools/list costs an SDK client).
# `bench/run.sh one-call [options]` runs bench/one-call.mjs (a one-round-trip step, layer by layer).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# Install the pinned packages when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
    npm ci --no-audit --no-fund --loglevel=error >&2
fi
cd "$here/.."
case "${1:-}" in
  serve) shift; exec node bench/serve.mjs "$@" ;;
  pool) shift; exec node bench/pool.mjs "$@" ;;
  replicas) shift; exec node bench/replicas.mjs "$@" ;;
  profiles) shift; exec node bench/profiles.mjs "$@" ;;
  files) shift; exec node bench/files.mjs "$@" ;;
  cdp) shift; exec node bench/cdp-relay.mjs "$@" ;;
  console) shift; exec node bench/console.mjs "$@" ;;
  tokens) shift; exec node bench/tokens.mjs "$@" ;;
  list-tools) shift; exec node bench/list-tools.mjs "$@" ;;
  one-call) shift; exec node bench/one-call.mjs "$@" ;;
  isolation) shift; exec node bench/isolation.mjs "$@" ;;
  isolation-chromium) shift; exec node bench/isolation-chromium.mjs "$@" ;;
esac
exec node bench/agent-loop.mjs "$@"
