#!/bin/sh
# Installs the Node test dependencies (tests/e2e, pinned in its lock file)
# when they are missing or older than the lock file (a dependency was
# added). Playwright's packages run the system Chromium: no browser
# download. Every target that runs Node tests calls this one script.
set -eu
cd "$(dirname "$0")/e2e"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	echo "install-node-deps: npm ci in tests/e2e" >&2
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
