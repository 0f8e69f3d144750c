# bench/lib/fixture_shop.sh - what the shell benchmarks (flows.sh,
# trace.sh) share; sourced, not run:
#
#   . bench/lib/fixture_shop.sh
#   bench_fixture_shop NAME   a temporary work dir ($work, named after NAME)
#                             and the fixture shop (fixtures/server.mjs) on a
#                             random loopback port ($port), both removed
#                             when the script exits; exports SHOP_URL
#                             (shop.test:$port) and a fresh SHOP_PASSWORD
#                             for the example flows. Exits 2, saying so,
#                             when the site does not start.
#   bench_median              the median of the whole numbers on stdin, one
#                             a line (of an even count, the mean of the
#                             middle two, rounded down).

bench_fixture_shop() {
	work="$(mktemp -d "/tmp/glassbox-bench-$1.XXXXXX")"
	server_pid=""
	trap bench_fixture_shop_cleanup EXIT
	# the fixture site on a random loopback port; its first line says which
	node fixtures/server.mjs > "$work/server.json" &
	server_pid=$!
	for _ in $(seq 1 50); do
		[ -s "$work/server.json" ] && break
		sleep 0.1
	done
	port="$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/server.json" | head -n 1)"
	[ -n "$port" ] || { echo "bench/$1.sh: the fixture server did not start" >&2; exit 2; }
	export SHOP_URL="http://shop.test:$port"
	SHOP_PASSWORD="bench-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	export SHOP_PASSWORD
}

bench_fixture_shop_cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
	rm -rf "$work"
}

bench_median() {
	sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'
}
