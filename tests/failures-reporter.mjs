/*
 * failures-reporter.mjs - a node:test reporter that writes, once the run
 * ends, two lines per failed test (todo ones left out): its file and
 * name, then its error in one line. run-node-tests.sh prints it
 * last, so the end of a long log says what failed and why.
 */
const MAX_CHARS = 400;

/* A test failure's underlying error in one line of at most MAX_CHARS:
 * the message's first line, then, when it dumps a tool result, the start
 * of that result's text (where a tool says what went wrong), whitespace
 * and escaped newlines collapsed. One line each keeps every failure in
 * the last lines of a long log. */
function errorLine(error) {
  const cause = error && error.cause ? error.cause : error;
  const text = String((cause && (cause.message || String(cause))) || 'no message');
  const first = text.split('\n').find((l) => l.trim()) || 'no message';
  const said = /"text": "((?:[^"\\]|\\.)*)/.exec(text);
  const line = `${first.trim()}${said ? ` => ${said[1]}` : ''}`.replace(/\\n|\s+/g, ' ');
  return line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS)}…` : line;
}

export default async function* failuresReporter(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail' || event.data.todo || event.data.skip) continue;
    const { name, file, details } = event.data;
    // a suite fails with its subtests: those are listed on their own
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failed.push({ name, file, line: errorLine(details?.error) });
  }
  if (!failed.length) return;
  yield `failed tests (${failed.length}), each with its error:\n`;
  for (const f of failed) {
    yield `- ${f.file ? `${f.file.replace(/^.*\/tests\//, 'tests/')}: ` : ''}${f.name}\n`;
    yield `    ${f.line}\n`;
  }
}
