#!/usr/bin/env bash
# bench/flows.sh - wall time of `glassbox run` for 8 flows with -j 4 (the
# example checkout of fixtures/flows/, 11 steps each, real Chromium,
# against the fixture shop on loopback), over a few runs; prints each run
# and the median. See bench/README.md ("Flows").
#
#   bench/flows.sh [--runs N] [--flows N] [-j N]
#   GLASSBOX_BIN=path/to/glassbox (default build/glassbox)
#
# Exit status: 0 when every run passed every flow, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

runs=3
flows=8
jobs=4
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs="$2"; shift 2 ;;
	--flows) flows="$2"; shift 2 ;;
	-j) jobs="$2"; shift 2 ;;
	*) echo "usage: bench/flows.sh [--runs N] [--flows N] [-j N]" >&2; exit 2 ;;
	esac
done
bin="${GLASSBOX_BIN:-build/glassbox}"
[ -x "$bin" ] || { echo "bench/flows.sh: $bin is missing: build first (ninja -C build)" >&2; exit 2; }

. bench/lib/fixture_shop.sh
bench_fixture_shop flows
args=()
for _ in $(seq 1 "$flows"); do args+=(fixtures/flows/checkout.json); done

times=()
status=0
for r in $(seq 1 "$runs"); do
	start=$(date +%s%N)
	if ! "$bin" run "${args[@]}" -j "$jobs" --config fixtures/policy/flows.json \
		--data-dir "$work/data" --junit "$work/junit-$r.xml" > "$work/run-$r.log" 2>&1; then
		echo "run $r: a flow failed:" >&2
		grep -E '^(FAIL|[0-9]+ flows)' "$work/run-$r.log" >&2 || tail -n 20 "$work/run-$r.log" >&2
		status=1
	fi
	end=$(date +%s%N)
	ms=$(( (end - start) / 1000000 ))
	times+=("$ms")
	echo "run $r: $flows flows, -j $jobs: ${ms} ms"
done
median=$(printf '%s\n' "${times[@]}" | bench_median)
echo "median of $runs runs: ${median} ms wall for $flows flows with -j $jobs ($(nproc) cores)"
exit "$status"
