/*
 * failures-reporter.mjs - a node:test reporter that writes, once the run
 * ends, one short block per failed test (todo ones left out): its file,
 * its name and the first lines of its error. run-node-tests.sh prints it
 * last, so the end of a long log says what failed and why.
 */
const MAX_LINES = 6;

/* The first lines of a test failure's underlying error. */
function errorLines(error) {
  const cause = error && error.cause ? error.cause : error;
  const text = cause && (cause.message || String(cause));
  return String(text || 'no message')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, MAX_LINES)
    .map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
}

export default async function* failuresReporter(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail' || event.data.todo || event.data.skip) continue;
    const { name, file, details } = event.data;
    // a suite fails with its subtests: those are listed on their own
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failed.push({ name, file, lines: errorLines(details?.error) });
  }
  if (!failed.length) return;
  yield `failed tests (${failed.length}), with the first lines of their errors:\n`;
  for (const f of failed) {
    yield `- ${f.file ? `${f.file.replace(/^.*\/tests\//, 'tests/')}: ` : ''}${f.name}\n`;
    for (const l of f.lines) yield `    ${l}\n`;
  }
}
