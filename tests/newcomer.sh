#!/usr/bin/env bash
# tests/newcomer.sh - what the README tells a new user to do, done
# literally from a clean data dir, checking what that person would read.
#
#   1. every command's --help and -h, and --version;
#   2. `make run POLICY=FILE` (glassbox init, then glassbox serve --policy
#      FILE) with a policy that allows the local fixture site;
#   3. an MCP client (the official SDK, over HTTP, with the printed token)
#      that lists the tools, navigates, snapshots, clicks and screenshots,
#      and has a held action approved on the CLI;
#   4. `make demo`: the example flows, the JUnit file, the HTML report and
#      audit verify;
#   5. `glassbox report`, rendered in headless Chromium: each record names
#      its actor, element and flow, and the counters count what the trail
#      holds; then `glassbox audit verify`.
#
#   GLASSBOX_BIN=path   the binary (default build/glassbox)
#   NEWCOMER_KEEP=1     keep the work dir
#
# glassbox serve without --config listens on 127.0.0.1:8931, as the README
# says: the port must be free. Exits 0 when everything was as expected.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin="${GLASSBOX_BIN:-build/glassbox}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
chromium="${GLASSBOX_CHROMIUM:-/usr/lib/chromium/chromium}"

work="$(mktemp -d /tmp/glassbox-newcomer.XXXXXX)"
export GLASSBOX_DATA_DIR="$work/data"
unset GLASSBOX_CONFIG GLASSBOX_TENANT
site_pid=""
serve_pid=""
make_pid=""
cleanup() {
	if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
	if [ -n "$make_pid" ]; then kill "$make_pid" 2>/dev/null || true; fi
	if [ -n "$site_pid" ]; then kill "$site_pid" 2>/dev/null || true; fi
	if [ "${NEWCOMER_KEEP:-}" = 1 ]; then echo "newcomer: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

fails=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*" >&2
	fails=$((fails + 1))
}
# expect FILE TEXT WHAT: FILE contains TEXT (fixed string).
expect() {
	if grep -qF -- "$2" "$1"; then ok "$3"; else
		bad "$3: \"$2\" is not in $1:"
		sed -n 1,40p "$1" >&2
	fi
}

if [ ! -x "$bin" ]; then
	echo "newcomer: $bin is missing: build first (make build)" >&2
	exit 1
fi
sh tests/install-node-deps.sh

# ---- 1. every command explains itself ----------------------------------------
fails_before=$fails
for cmd in mcp serve init approvals audit report run profile keys secret version help; do
	for flag in --help -h; do
		set +e
		"$bin" "$cmd" "$flag" >"$work/help.txt" 2>&1
		rc=$?
		set -e
		if [ "$rc" != 0 ]; then
			bad "glassbox $cmd $flag exits $rc"
			cat "$work/help.txt" >&2
			continue
		fi
		grep -q "^usage: glassbox $cmd" "$work/help.txt" || bad "glassbox $cmd $flag: no usage line"
		grep -q "^example:" "$work/help.txt" || bad "glassbox $cmd $flag: no example"
		if [ "$cmd" != version ]; then
			grep -q "^options:" "$work/help.txt" || bad "glassbox $cmd $flag: no options"
		fi
	done
done
[ "$fails" = "$fails_before" ] && ok "every command answers --help and -h with usage, options and an example"
"$bin" --version >"$work/version.txt"
expect "$work/version.txt" "glassbox " "glassbox --version"
"$bin" serve --help >"$work/help.txt"
expect "$work/help.txt" "--config FILE       the service config" "serve --help: --config is the service config"
expect "$work/help.txt" "--policy FILE       the local tenant's policy" "serve --help: --policy"
"$bin" help >"$work/help.txt"
if grep -q "the tenant's policy" "$work/help.txt"; then
	bad "the general help still calls --config the tenant's policy"
fi

# ---- 2. make run (init, then serve) with a policy ------------------------------
# a data dir this user cannot write (root writes everywhere: run as nobody)
ro="$(mktemp -d /tmp/glassbox-newcomer-ro.XXXXXX)"
chmod 0755 "$ro"
mkdir "$ro/data"
chmod 0555 "$ro/data"
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
set +e
"${as_user[@]}" "$bin" init --data-dir "$ro/data" >"$work/ro.txt" 2>&1
set -e
rm -rf "$ro"
expect "$work/ro.txt" "the data dir $ro/data is not writable by this user" "init on a read-only data dir names the data dir"
if grep -q "Chromium does not start" "$work/ro.txt"; then bad "init on a read-only data dir blames Chromium"; fi

node fixtures/server.mjs >"$work/site.txt" &
site_pid=$!
port=""
for _ in $(seq 1 100); do
	port="$(sed -n 's/^{"port":\([0-9][0-9]*\),.*/\1/p' "$work/site.txt" | head -n 1)"
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || {
	echo "newcomer: the fixture site did not start" >&2
	exit 1
}
site="http://127.0.0.1:$port"
# the policy a newcomer writes for a local site: that address and port only
cat >"$work/policy.json" <<EOF
{ "egress": { "allow": ["127.0.0.1:$port"], "allow_private": ["127.0.0.1"] } }
EOF

# GLASSBOX_CONFIG is honoured by serve (here: a broken file is named as such)
echo '{"egress": ' >"$work/broken.json"
set +e
GLASSBOX_CONFIG="$work/broken.json" "$bin" serve >"$work/env.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || bad "serve with a broken \$GLASSBOX_CONFIG exits $rc, not 2"
expect "$work/env.txt" "cannot read the policy $work/broken.json (\$GLASSBOX_CONFIG)" "serve reads \$GLASSBOX_CONFIG"

if ss -ltn 2>/dev/null | grep -q '127.0.0.1:8931 '; then
	echo "newcomer: 127.0.0.1:8931 is in use (another glassbox serve?): stop it and run again" >&2
	exit 1
fi
# the README's command, with the policy: make runs glassbox init, then
# execs glassbox serve --policy FILE (its child: serve_pid)
make --no-print-directory run BUILD="$(dirname "$bin")" POLICY="$work/policy.json" \
	>"$work/serve.out" 2>"$work/serve.err" &
make_pid=$!
for _ in $(seq 1 600); do
	grep -q "MCP on http://127.0.0.1:8931/mcp" "$work/serve.err" && break
	kill -0 "$make_pid" 2>/dev/null || break
	sleep 0.1
done
serve_pid="$(pgrep -P "$make_pid" | head -n 1 || true)"
expect "$work/serve.err" "Chromium works: " "make run: init says Chromium starts"
expect "$work/serve.err" "data dir $GLASSBOX_DATA_DIR" "make run: init names the data dir"
expect "$work/serve.err" "MCP on http://127.0.0.1:8931/mcp" "serve listens on 127.0.0.1:8931"
expect "$work/serve.err" "tenant \"local\" has the policy $work/policy.json" "serve names the policy it uses"
if grep -q "another glassbox service" "$work/serve.err"; then bad "serve says another service exists"; fi
token="$(sed -n 's/^    Authorization: Bearer \([0-9a-f]*\)$/\1/p' "$work/serve.err" | head -n 1)"
[ -n "$token" ] || bad "serve printed no token"

# ---- 3. an MCP client over HTTP -----------------------------------------------
if node tests/e2e/newcomer-client.mjs http://127.0.0.1:8931/mcp "$token" "$site" "$bin" >"$work/client.txt" 2>&1; then
	ok "SDK client: $(tr '\n' ';' <"$work/client.txt")"
else
	bad "the SDK client over HTTP:"
	cat "$work/client.txt" >&2
fi
if [ -n "$serve_pid" ]; then
	kill -TERM "$serve_pid"
else
	bad "make run started no glassbox serve"
	kill -TERM "$make_pid" 2>/dev/null || true
fi
set +e
wait "$make_pid"
rc=$?
set -e
serve_pid=""
make_pid=""
[ "$rc" = 0 ] || bad "make run (glassbox serve) did not stop cleanly on SIGTERM (exit $rc)"
if grep -q "another glassbox service" "$work/serve.err"; then bad "serve says another service exists"; fi

# ---- 4. make demo -------------------------------------------------------------
if make --no-print-directory demo BUILD="$(dirname "$bin")" DEMO_RESULTS="$work/results" >"$work/demo.txt" 2>&1; then
	ok "make demo"
else
	bad "make demo failed:"
	tail -n 30 "$work/demo.txt" >&2
fi
expect "$work/demo.txt" "PASS checkout" "demo: the checkout flow passes"
expect "$work/demo.txt" "4 flows: 1 passed, 3 failed" "demo: the run's summary"
expect "$work/demo.txt" "local: chain verified" "demo: audit verify"
if grep -q "waiting for a person" "$work/demo.txt" "$work/results/junit.xml" "$work/results/trail.html"; then
	bad "a held flow step says a person is waited for"
fi
if grep -q "another glassbox service" "$work/demo.txt"; then bad "run -j 2 says another service exists"; fi
grep -q '<testsuite name="glassbox run" tests="4" failures="3"' "$work/results/junit.xml" &&
	ok "demo: the JUnit file" || bad "demo: the JUnit file"

# ---- 5. the report, in headless Chromium, and audit verify ---------------------
"$bin" report --tenant local -o "$work/trail.html" >"$work/report.txt" 2>&1 || {
	bad "glassbox report failed"
	cat "$work/report.txt" >&2
}
"$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$work/chromium" \
	--dump-dom "file://$work/trail.html" >"$work/dom.html" 2>/dev/null || bad "Chromium could not render the report"
# the DOM's text, tags dropped
sed -e 's/<[^>]*>/ /g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' "$work/dom.html" | tr -s ' \n' ' ' >"$work/dom.txt"
credential="sha256:$(printf %s "$token" | sha256sum | cut -c1-12)"
expect "$work/dom.txt" "The audit chain verified" "report: the chain verified"
expect "$work/dom.txt" "tenant local · credential $credential · client newcomer-agent" \
	"report: an MCP call names tenant, credential id and client"
expect "$work/dom.txt" "human " "report: the approval names a person"
expect "$work/dom.txt" "client glassbox-run" "report: a flow's calls name the run"
expect "$work/dom.txt" "Flow checkout" "report: the flow's name"
expect "$work/dom.txt" "button “Add Coffee beans to cart”" "report: the element's role and name"
if grep -q "element ref" "$work/dom.txt"; then bad "report: an element is shown as \"element ref\""; fi
for stat in refused held approvals; do
	n="$(grep -o "id=\"stat-$stat\"><b>[0-9]*" "$work/dom.html" | sed 's/.*<b>//')"
	if [ -n "$n" ] && [ "$n" -ge 1 ]; then ok "report: counter $stat is $n"; else bad "report: counter $stat is '${n}', the trail holds one"; fi
done
if grep -rqF -- "$token" "$work/trail.html" "$GLASSBOX_DATA_DIR"; then bad "the token is in the report or the data dir"; fi

"$bin" audit verify >"$work/verify.txt" 2>&1 || bad "glassbox audit verify failed"
expect "$work/verify.txt" "local: chain verified" "audit verify"

if [ "$fails" != 0 ]; then
	echo "newcomer: $fails check(s) failed (work dir kept: $work)" >&2
	NEWCOMER_KEEP=1
	exit 1
fi
echo "newcomer: every step of the README works as written"
