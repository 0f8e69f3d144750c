#!/usr/bin/env bash
# bench/trace.sh - what the session recording costs a flow, and what an
# export costs: the wall time of `glassbox run` for the example checkout
# (11 steps, real Chromium, the fixture shop on loopback) without and with
# "screencast" in the policy, runs alternating; then `glassbox trace
# export` and `glassbox har export` of one of those sessions. Prints each
# run, the medians and the ratio. See bench/README.md ("Traces").
#
#   bench/trace.sh [--runs N] [--exports N]
#   GLASSBOX_BIN=path/to/glassbox (default build/glassbox)
#
# Exit status: 0 when every run passed, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

runs=5
exports=9
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs="$2"; shift 2 ;;
	--exports) exports="$2"; shift 2 ;;
	*) echo "usage: bench/trace.sh [--runs N] [--exports N]" >&2; exit 2 ;;
	esac
done
bin="${GLASSBOX_BIN:-build/glassbox}"
[ -x "$bin" ] || { echo "bench/trace.sh: $bin is missing: build first (ninja -C build)" >&2; exit 2; }

. bench/lib/fixture_shop.sh
bench_fixture_shop trace
node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
p.screencast = { fps: 2 }; require("fs").writeFileSync(process.argv[2], JSON.stringify(p));' \
	fixtures/policy/flows.json "$work/screencast.json"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

plain=()
cast=()
status=0
for r in $(seq 1 "$runs"); do
	for mode in plain screencast; do
		policy=fixtures/policy/flows.json
		[ "$mode" = screencast ] && policy="$work/screencast.json"
		start=$(now_ms)
		if ! "$bin" run fixtures/flows/checkout.json --config "$policy" \
			--data-dir "$work/data-$mode" > "$work/run-$mode-$r.log" 2>&1; then
			echo "run $r ($mode): the flow failed:" >&2
			tail -n 20 "$work/run-$mode-$r.log" >&2
			status=1
		fi
		ms=$(( $(now_ms) - start ))
		if [ "$mode" = plain ]; then plain+=("$ms"); else cast+=("$ms"); fi
		echo "run $r: checkout, $mode: ${ms} ms"
	done
done
mp=$(printf '%s\n' "${plain[@]}" | bench_median)
mc=$(printf '%s\n' "${cast[@]}" | bench_median)
echo "median of $runs runs: ${mp} ms without, ${mc} ms with the screencast;" \
	"ratio $(awk -v a="$mc" -v b="$mp" 'BEGIN {printf "%.2f", a / b}') ($(nproc) cores)"

for what in trace har; do
	times=()
	for r in $(seq 1 "$exports"); do
		start=$(now_ms)
		"$bin" "$what" export --flow checkout --data-dir "$work/data-screencast" \
			-o "$work/export.$what" 2> /dev/null
		times+=($(( $(now_ms) - start )))
	done
	echo "$what export of one checkout session (with its recording):" \
		"median $(printf '%s\n' "${times[@]}" | bench_median) ms of $exports," \
		"$(stat -c %s "$work/export.$what") bytes"
done
exit "$status"
