#!/usr/bin/env bash
# Runs Playwright MCP's own tests (microsoft/playwright tests/mcp) against
# glassbox and against Playwright MCP, one worker each, and prints both
# pass counts (bench/README.md, "Playwright MCP's own tests").
#
#   bench/playwright-suite.sh PATH-TO-CHECKOUT [glassbox|playwright|both]
#
# PATH-TO-CHECKOUT is a checkout of microsoft/playwright outside this
# repository, with its npm dependencies installed and built
# (npm ci && npm run build). Only the server fixture changes: the
# checkout's tests/mcp/fixtures.ts starts the server named by
# $MCP_SERVER_BIN (glassbox mcp) instead of Playwright MCP when that is
# set; the original is kept as fixtures.ts.orig and restored on exit.
#
#   GLASSBOX_BIN   the glassbox binary (default build/glassbox)
#   CHROMIUM       the browser both servers drive (default /usr/bin/chromium)
#   PW_SPECS       the specs to run (default: the ones that cover the tools
#                  glassbox has, below); "tools" names the specs of the tools
#                  of issue [tools] (console network files pdf form find mouse
#                  verify), and may be mixed with spec names
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
checkout="${1:?usage: bench/playwright-suite.sh PATH-TO-CHECKOUT [glassbox|playwright|both]}"
which="${2:-both}"
checkout="$(cd "$checkout" && pwd)"
case "$checkout" in "$repo"|"$repo"/*) echo "playwright-suite: the checkout must be outside this repository" >&2; exit 2 ;; esac
fixture="$checkout/tests/mcp/fixtures.ts"
[ -f "$fixture" ] || { echo "playwright-suite: $fixture is missing: is $checkout a microsoft/playwright checkout?" >&2; exit 2; }
[ -d "$checkout/node_modules/@playwright" ] && [ -f "$checkout/packages/playwright-core/lib/coreBundle.js" ] || {
  echo "playwright-suite: install and build the checkout first: (cd $checkout && npm ci && npm run build)" >&2; exit 2; }
glassbox="$(cd "$repo" && realpath "${GLASSBOX_BIN:-build/glassbox}")"
chromium="${CHROMIUM:-/usr/bin/chromium}"
specs="${PW_SPECS:-core click type tabs dialogs evaluate screenshot wait snapshot-mode timeouts autowait iframes validation unicode-serialization capabilities codegen clipboard}"
specs="${specs//tools/console network files pdf form find mouse verify}"

# The fixture change: with $MCP_SERVER_BIN, `glassbox mcp` with a data dir
# of the test's own, the fixture site's loopback allowed and evaluate not
# gated, top-level data: pages allowed as Playwright MCP allows them
# (fixtures/policy/playwright-suite.json), the test's dir as output dir,
# --no-structured-content (the specs compare whole results, which from
# Playwright MCP carry no structuredContent); the same flags as Playwright
# MCP gets. Without it, Playwright MCP driving $CHROMIUM.
[ -f "$fixture.orig" ] || cp "$fixture" "$fixture.orig"
trap 'cp "$fixture.orig" "$fixture"' EXIT
node - "$fixture.orig" "$fixture" <<'EOF'
const fs = require('fs');
const [src, dst] = process.argv.slice(2);
let s = fs.readFileSync(src, 'utf8');
const from = `    command: 'node',
    args: [...(mcpServerType === 'test-mcp' ? testMcpServerPath : mcpServerPath), ...options.args],`;
const to = `    command: process.env.MCP_SERVER_BIN && mcpServerType !== 'test-mcp' ? process.env.MCP_SERVER_BIN : 'node',
    args: process.env.MCP_SERVER_BIN && mcpServerType !== 'test-mcp'
      ? ['mcp', '--no-structured-content', ...options.args, \`--output-dir=\${options.cwd}\`]
      : [...(mcpServerType === 'test-mcp' ? testMcpServerPath : mcpServerPath), ...options.args, ...(process.env.MCP_EXECUTABLE ? [\`--executable-path=\${process.env.MCP_EXECUTABLE}\`] : [])],`;
const envFrom = `      PWMCP_PROFILES_DIR_FOR_TEST: profilesDir,`;
const envTo = `      PWMCP_PROFILES_DIR_FOR_TEST: profilesDir,
      ...(process.env.MCP_SERVER_BIN ? { GLASSBOX_DATA_DIR: test.info().outputPath('glassbox-data'), GLASSBOX_CONFIG: process.env.MCP_SERVER_POLICY, GLASSBOX_CHROMIUM: process.env.MCP_EXECUTABLE } : {}),`;
if (!s.includes(from) || !s.includes(envFrom)) {
  console.error('playwright-suite: the server fixture of this checkout is not the one this script changes (tests/mcp/fixtures.ts createTransport)');
  process.exit(2);
}
s = s.replace(from, to).replace(envFrom, envTo);
fs.writeFileSync(dst, s);
EOF

files=()
for s in $specs; do files+=("tests/mcp/$s.spec.ts"); done

# The policy glassbox runs with: fixtures/policy/playwright-suite.json
# (loopback, evaluate not gated, data: pages allowed), plus the checkout's
# test-results dir as an upload dir (files.upload_dirs), where the upload
# and drop tests write the files they hand over. glassbox reads host files
# only from dirs an operator names so; the tests that expect a refusal
# outside the client's MCP roots, or an allowUnrestrictedFileAccess that
# glassbox refuses, differ by design (bench/README.md).
mkdir -p "$checkout/test-results"
policy="$(mktemp --suffix=.json)"
node -e '
  const fs = require("fs");
  const [src, dst, dir] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync(src, "utf8"));
  p.files = Object.assign({}, p.files, { upload_dirs: [dir] });
  fs.writeFileSync(dst, JSON.stringify(p, null, 2));
' "$repo/fixtures/policy/playwright-suite.json" "$policy" "$(cd "$checkout/test-results" && pwd -P)"
trap 'cp "$fixture.orig" "$fixture"; rm -f "$policy"' EXIT

# One run: prints "NAME passed P of T" (T = P + failed; skipped are said apart).
run() {
  local name="$1" out="$2"
  shift 2
  (cd "$checkout" && env "$@" PWTEST_SKIP_TEST_OUTPUT=1 npx playwright test --config=tests/mcp/playwright.config.ts \
    --project=chromium --workers=1 --reporter=json "${files[@]}" "tests/mcp/launch.spec.ts:23" >"$out" 2>"$out.stderr") || true
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const s = r.stats;
    const total = s.expected + s.unexpected + s.flaky;
    console.log(`${process.argv[2]}: passed ${s.expected} of ${total} (${s.unexpected} failed, ${s.flaky} flaky, ${s.skipped} skipped)`);
    if (process.env.PW_SUITE_LIST) {
      const walk = (suite) => { for (const sp of suite.specs || []) for (const t of sp.tests) console.log(`  ${t.status === "expected" ? "pass" : t.status}  ${sp.file}: ${sp.title}`); for (const c of suite.suites || []) walk(c); };
      for (const suite of r.suites) walk(suite);
    }' "$out" "$name"
}

results="$(mktemp -d)"
if [ "$which" = glassbox ] || [ "$which" = both ]; then
  run glassbox "$results/glassbox.json" MCP_SERVER_BIN="$glassbox" MCP_SERVER_POLICY="$policy" MCP_EXECUTABLE="$chromium"
fi
if [ "$which" = playwright ] || [ "$which" = both ]; then
  run "playwright-mcp" "$results/playwright.json" MCP_EXECUTABLE="$chromium"
fi
echo "reports in $results"
