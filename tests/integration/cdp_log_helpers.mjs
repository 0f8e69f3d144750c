/*
 * The CDP methods glassbox sent for one tool call, read from its debug
 * log (GLASSBOX_LOG=debug): the "-> call N Method" lines between the
 * call's "queued" and "done" lines.
 */
import { assert, callTool } from '../e2e/lib.mjs';

/* The CDP methods sent for the call of tool with MCP id `id`, in order. */
export function methodsOfCall(stderr, tool, id) {
  const lines = stderr.split('\n');
  const start = lines.findIndex((l) => l.includes(`tools/call ${tool} (id ${id}) queued`));
  assert.ok(start >= 0, `no call ${tool} id ${id} in the log`);
  const end = lines.findIndex((l, i) => i > start && l.includes(`${tool} (id ${id}) done`));
  assert.ok(end > start, `call ${tool} id ${id} never done in the log`);
  return lines.slice(start, end).map((l) => /-> call \d+ (\S+)/.exec(l)?.[1]).filter(Boolean);
}

/* Calls tool with args on the glassbox of harness h (started with
 * GLASSBOX_LOG=debug): the result and the CDP methods the call sent. */
export async function callLogged(h, tool, args) {
  const before = h.gb.stderr().length;
  const r = await callTool(h.client, tool, args);
  const id = new RegExp(`tools/call ${tool} \\(id (\\d+)\\) queued`).exec(h.gb.stderr().slice(before))?.[1];
  assert.ok(id, 'the call is in the debug log');
  return { r, methods: methodsOfCall(h.gb.stderr(), tool, id) };
}
