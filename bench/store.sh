#!/bin/bash
# bench/store.sh [N]: what the store costs a tool call on each backend:
# build/store/store_bench N (default 300) on SQLite, then on a throwaway
# PostgreSQL (tests/postgres/run.sh: a unix socket, fsync off, so the
# figure is the engine and the round trips, not the disk). Prints both
# JSON lines and the PostgreSQL / SQLite ratio of the medians; writes
# bench/results/store.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-300}
bin=${STORE_BENCH:-build/store/store_bench}
mkdir -p bench/results
sqlite=$("$bin" "$n")
pg=$(tests/postgres/run.sh "$bin" "$n")
echo "$sqlite"
echo "$pg"
node -e '
const [s, p] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2])];
const r = (k) => (p[k].median / s[k].median).toFixed(2);
const out = { sqlite: s, postgresql: p, ratio_of_medians: { ledger_call: +r("ledger_call_us"), approval: +r("approval_us") } };
console.log(`ledger per tool call: median ${s.ledger_call_us.median} us (sqlite), ${p.ledger_call_us.median} us (postgresql), ratio ${r("ledger_call_us")}`);
console.log(`approval create+decide+consume: median ${s.approval_us.median} us (sqlite), ${p.approval_us.median} us (postgresql), ratio ${r("approval_us")}`);
require("fs").writeFileSync("bench/results/store.json", JSON.stringify(out, null, 2) + "\n");
' "$sqlite" "$pg"
