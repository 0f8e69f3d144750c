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

work="$(mktemp -d /tmp/glassbox-bench-trace.XXXXXX)"
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

node fixtures/server.mjs > "$work/server.json" &
server_pid=$!
for _ in $(seq 1 50); do
	[ -s "$work/server.json" ] && break
	sleep 0.1
done
port="$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/server.json" | head -n 1)"
[ -n "$port" ] || { echo "bench/trace.sh: the fixture server did not start" >&2; exit 2; }
export SHOP_URL="http://shop.test:$port"
export SHOP_PASSWORD="bench-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
p.screencast = { fps: 2 }; require("fs").writeFileSync(process.argv[2], JSON.stringify(p));' \
	fixtures/policy/flows.json "$work/screencast.json"

median() {
	sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'
}
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
mp=$(printf '%s\n' "${plain[@]}" | median)
mc=$(printf '%s\n' "${cast[@]}" | median)
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
		"median $(printf '%s\n' "${times[@]}" | median) ms of $exports," \
		"$(stat -c %s "$work/export.$what") bytes"
done
exit "$status"
