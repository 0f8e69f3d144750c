#!/usr/bin/env node
/*
 * tests/e2e/newcomer-client.mjs - the MCP client of tests/newcomer.sh: the
 * official SDK over Streamable HTTP against `glassbox serve`, doing what a
 * newcomer's agent does first. Not a node:test file (run-node-tests.sh
 * does not pick it up).
 *
 *   node tests/e2e/newcomer-client.mjs URL TOKEN SITE_URL GLASSBOX_BIN
 *
 * Lists the tools; navigates to the fixture shop, snapshots, clicks "Add
 * Coffee beans to cart" by its ref and checks the page changed; takes a
 * screenshot and checks it is a PNG; then clicks "Delete all orders",
 * which is held for a person's approval, approves it with `glassbox
 * approvals approve` (as a person would), repeats the call with the
 * approval and checks that it ran. Prints one line per step; exits 1 with
 * the reason on the first thing that is not as a newcomer would expect.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFileSync } from 'node:child_process';

const [url, token, site, bin] = process.argv.slice(2);
if (!url || !token || !site || !bin) {
  console.error('usage: newcomer-client.mjs URL TOKEN SITE_URL GLASSBOX_BIN');
  process.exit(2);
}

function fail(msg) {
  console.error(`newcomer-client: ${msg}`);
  process.exit(1);
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/* The ref of the element a snapshot line shows as ROLE "NAME" [ref=eN]. */
function refOf(snapshot, role, name) {
  for (const line of snapshot.split('\n')) {
    if (line.includes(`${role} "${name}"`)) {
      const m = line.match(/\[ref=([a-z0-9]+)\]/);
      if (m) return m[1];
    }
  }
  return null;
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'newcomer-agent', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
if (!tools.some((t) => t.name === 'browser_navigate')) fail(`no browser_navigate in ${tools.map((t) => t.name)}`);
console.log(`tools: ${tools.length}`);

let r = await client.callTool({ name: 'browser_navigate', arguments: { url: `${site}/shop/` } });
if (r.isError) fail(`navigate: ${text(r)}`);
console.log(`navigate: ${text(r).split('\n')[0]}`);

r = await client.callTool({ name: 'browser_snapshot', arguments: {} });
if (r.isError) fail(`snapshot: ${text(r)}`);
const ref = refOf(text(r), 'button', 'Add Coffee beans to cart');
if (!ref) fail(`the snapshot shows no button "Add Coffee beans to cart":\n${text(r)}`);
console.log(`snapshot: button "Add Coffee beans to cart" is ${ref}`);

r = await client.callTool({ name: 'browser_click', arguments: { target: ref, expect: { text: 'Cart (1)' } } });
if (r.isError) fail(`click: ${text(r)}`);
console.log(`click: ${text(r).split('\n')[0]}`);

r = await client.callTool({ name: 'browser_take_screenshot', arguments: {} });
const image = (r.content ?? []).find((c) => c.type === 'image');
if (r.isError || !image) fail(`screenshot: ${text(r)}`);
const png = Buffer.from(image.data, 'base64');
if (png.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') fail('the screenshot is not a PNG');
console.log(`screenshot: PNG, ${png.length} bytes`);

/* an action held for a person: approved on the CLI, then repeated */
r = await client.callTool({ name: 'browser_navigate', arguments: { url: `${site}/gates/orders.html` } });
if (r.isError) fail(`navigate to the orders page: ${text(r)}`);
const target = 'role=button[name="Delete all orders"]';
r = await client.callTool({ name: 'browser_click', arguments: { target } });
const approval = r.structuredContent?.gate?.approval_id;
if (!r.isError || r.structuredContent?.error?.code !== 'approval_required' || !approval) {
  fail(`the destructive click was not held for approval: ${text(r)}`);
}
console.log(`held: ${approval}`);
const out = execFileSync(bin, ['approvals', 'approve', approval, '--reason', 'newcomer check'], { encoding: 'utf8' });
console.log(`approved: ${out.trim().split('\n')[0]}`);
r = await client.callTool({ name: 'browser_click', arguments: { target, approval } });
if (r.isError) fail(`the approved click did not run: ${text(r)}`);
console.log(`approved click: ${text(r).split('\n')[0]}`);

await transport.terminateSession();
await client.close();
