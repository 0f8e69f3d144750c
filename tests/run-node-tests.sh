#!/usr/bin/env bash
# Runs the Node end-to-end and integration tests (MCP SDK client against
# `glassbox mcp`, real Chromium, local fixture site). Starts no service:
# each test file starts its own fixture server and glassbox process.
#
#   GLASSBOX_BIN=path/to/glassbox  (default build/glassbox)
#   NODE_TEST_CONCURRENCY=N        test files run at once (default 2)
#   NODE_TESTS=drills              the heavy drills of tests/drills.list only
#                                  (left out otherwise)
#   test files given as arguments run alone (tests/integration/serve.test.mjs);
#   other arguments are passed to node --test (e.g. --test-name-pattern=...)
#
# Exits non-zero when a test fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

sh tests/install-node-deps.sh

bin="${GLASSBOX_BIN:-build/glassbox}"
if [ ! -x "$bin" ]; then
	echo "run-node-tests: warning: $bin is missing or not executable; the tests will fail" >&2
fi

# Test files among the arguments run alone; other arguments go to node --test.
files=()
args=()
for a in "$@"; do
	case "$a" in
	*.test.mjs) files+=("$a") ;;
	*) args+=("$a") ;;
	esac
done
# Without file arguments: every test file but the heavy drills of
# tests/drills.list, or (NODE_TESTS=drills) those drills alone.
drills="$(grep -v '^#' tests/drills.list | sed '/^$/d')"
if [ "${#files[@]}" -eq 0 ]; then
	if [ "${NODE_TESTS:-}" = drills ]; then
		while IFS= read -r f; do files+=("$f"); done <<<"$drills"
	else
		while IFS= read -r f; do
			grep -qxF "$f" <<<"$drills" || files+=("$f")
		done < <(find tests/e2e tests/integration -name node_modules -prune -o -name '*.test.mjs' -print | sort)
	fi
fi
if [ "${#files[@]}" -eq 0 ]; then
	echo "run-node-tests: no test files found" >&2
	exit 1
fi

log="$(mktemp)"
failures="$(mktemp)"
durations="$(mktemp)"
trap 'rm -f "$log" "$failures" "$durations"' EXIT
set +e
node --test --test-concurrency="${NODE_TEST_CONCURRENCY:-2}" \
	--test-reporter=spec --test-reporter-destination=stdout \
	--test-reporter=./tests/failures-reporter.mjs --test-reporter-destination="$failures" \
	--test-reporter=./tests/durations-reporter.mjs --test-reporter-destination="$durations" \
	"${args[@]}" "${files[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# The spec reporter lists the failures after its summary: repeat the
# summary last, then the slowest files (tests/durations-reporter.mjs),
# each failure's first error lines (tests/failures-reporter.mjs), and
# close with one plain line.
count() { sed -n "s/^ℹ $1 \([0-9][0-9]*\)$/\1/p" "$log" | tail -n 1; }
echo
grep -E '^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$log" | tail -n 8 || true
cat "$durations" "$failures"
pass=$(count pass); fail=$(count fail); cancelled=$(count cancelled); skipped=$(count skipped)
echo "node-tests: ${pass:-0} passed, $(( ${fail:-0} + ${cancelled:-0} )) failed, ${skipped:-0} skipped"
exit "$rc"
