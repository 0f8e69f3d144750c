/*
 * durations-reporter.mjs - a node:test reporter that writes, once the run
 * ends, the slowest test files: each file's top-level tests' durations
 * added up (a file's tests run one after another), slowest first.
 * run-node-tests.sh prints it before the failures, so a long run says
 * where its time went.
 */
const SHOWN = 15;

export default async function* durationsReporter(source) {
  const perFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file || nesting !== 0 || !details?.duration_ms) continue;
    perFile.set(file, (perFile.get(file) || 0) + details.duration_ms);
  }
  if (!perFile.size) return;
  const total = [...perFile.values()].reduce((a, b) => a + b, 0);
  yield `slowest test files (of ${perFile.size}, ${(total / 1000).toFixed(0)} s in all):\n`;
  for (const [file, ms] of [...perFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN))
    yield `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(/^.*\/tests\//, 'tests/')}\n`;
}
