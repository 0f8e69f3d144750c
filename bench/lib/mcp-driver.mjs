// One agent-loop driver for every MCP server, over stdio with the official MCP SDK client.
// Server differences (tool names, argument names, snapshot format) live in the adapters.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { performance } from 'node:perf_hooks';
import { memOf, browserTree, descendants, killTree } from './proc.mjs';
import { confirmFunction, statusFunction, TITLE_FUNCTION, parseSnapshot, pickTargets, resultText, hasPng, findKey } from './loop.mjs';

const CALL_TIMEOUT_MS = 30000;
const STDERR_TAIL = 8192;

export class McpDriver {
  constructor(adapter) {
    this.adapter = adapter;
    this.name = adapter.name;
    this.client = null;
    this.transport = null;
    this.pid = null;
    this.stderrTail = '';
    this.stderrLines = [];
    this.seen = [];
    this.pageId = undefined;
    this.timeToReady = null;
    this.notes = new Set();
  }

  async start() {
    const a = this.adapter;
    // setsid: the server leads its own process group, so the whole group can be ended at the end.
    this.transport = new StdioClientTransport({
      command: 'setsid',
      args: [a.command, ...a.args],
      env: a.env,
      cwd: a.cwd,
      stderr: 'pipe',
    });
    this.transport.stderr?.on('data', (chunk) => {
      const s = chunk.toString();
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_TAIL);
      // "time_to_ready=123 ms" or glassbox's log line "session … ready in 123 ms".
      const m = /time_to_ready\w*[^0-9]{0,8}([0-9]+(?:\.[0-9]+)?)\s*(ms|s)?/i.exec(s) || /\bready in ([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b/.exec(s);
      if (m && this.timeToReady === null) this.timeToReady = { ms: Number(m[1]) * (m[2] === 's' ? 1000 : 1), source: 'stderr' };
    });
    this.client = new Client({ name: 'glassbox-bench', version: '0.1.0' });
    this.client.onerror = () => {};
    await this.client.connect(this.transport, { timeout: CALL_TIMEOUT_MS });
    this.pid = this.transport.pid;
    if (a.afterConnect) await a.afterConnect(this);
  }

  async call(name, args, { allowError = false } = {}) {
    const res = await this.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
    if (res.isError && !allowError) {
      const err = new Error(`${name}: ${resultText(res).slice(0, 500)}`);
      err.result = res;
      throw err;
    }
    const ttr = findKey(res.structuredContent, /time_to_ready/i);
    if (ttr !== undefined && this.timeToReady?.source !== 'structuredContent') this.timeToReady = { ms: Number(ttr), source: 'structuredContent' };
    return res;
  }

  // --- the loop steps ---------------------------------------------------------------------------

  async navigate(url) {
    const [tool, args] = this.adapter.navigate(url, this);
    const res = await this.call(tool, args);
    if (this.adapter.afterNavigate) await this.adapter.afterNavigate(res, this);
  }

  async snapshot() {
    const [tool, args] = this.adapter.snapshot(this);
    const res = await this.call(tool, args);
    const elements = parseSnapshot(resultText(res));
    this.targets = pickTargets(elements);
    return this.targets;
  }

  async type(text) {
    const [tool, args] = this.adapter.type(this.targets.textbox, text, this);
    const res = await this.call(tool, args);
    const v = res.structuredContent?.value;
    if (typeof v === 'string' && v !== text) throw new Error(`type: field value is ${JSON.stringify(v)}, expected ${JSON.stringify(text)}`);
  }

  async clickSave() {
    await this.#click('save');
  }

  async confirm(text) {
    const want = `Saved: ${text}`;
    const res = await this.evaluate(confirmFunction(want));
    if (resultText(res).includes(want)) return;
    // The server did not wait on the promise: poll, bounded.
    this.notes.add('confirm fell back to polling');
    const deadline = performance.now() + 10000;
    while (performance.now() < deadline) {
      const r = await this.evaluate(statusFunction());
      if (resultText(r).includes(want)) return;
      await new Promise((r2) => setTimeout(r2, 20));
    }
    throw new Error(`confirm: status never showed ${JSON.stringify(want)}`);
  }

  async clickLink() {
    await this.#click('link');
  }

  async title() {
    const res = await this.evaluate(TITLE_FUNCTION);
    if (!resultText(res).includes('Second page')) throw new Error(`title: got ${resultText(res).slice(0, 200)}`);
  }

  async screenshot() {
    const [tool, args] = this.adapter.screenshot(this);
    const res = await this.call(tool, args);
    if (!hasPng(res)) throw new Error(`screenshot: no PNG in the result (${resultText(res).slice(0, 200)})`);
  }

  async evaluate(fn) {
    const [tool, args] = this.adapter.evaluate(fn, this);
    return this.call(tool, args);
  }

  async #click(which) {
    const ref = this.targets[which];
    const [tool, args] = this.adapter.click(ref, this);
    const res = await this.call(tool, args, { allowError: true });
    if (!res.isError) return;
    const msg = resultText(res);
    // A ref the server considers stale: re-snapshot once, as an agent would, and retry.
    if (/stale|not found|no element|snapshot/i.test(msg)) {
      this.notes.add(`${which}: ref went stale, re-snapshotted`);
      await this.snapshot();
      const [t2, a2] = this.adapter.click(this.targets[which], this);
      await this.call(t2, a2);
      return;
    }
    throw new Error(`${tool}: ${msg.slice(0, 500)}`);
  }

  // --- measurement and cleanup ------------------------------------------------------------------

  memory() {
    const server = memOf(this.pid);
    const browser = browserTree(this.pid);
    this.seen = descendants(this.pid).map((p) => ({ pid: p.pid, comm: p.comm }));
    return { server_rss_kb: server.rss, server_pss_kb: server.pss, browser };
  }

  async stop() {
    if (this.pid) this.seen.push(...descendants(this.pid).map((p) => ({ pid: p.pid, comm: p.comm })));
    const pid = this.pid;
    try { await Promise.race([this.client?.close(), new Promise((r) => setTimeout(r, 6000))]); } catch { /* ignore */ }
    const k = await killTree(pid, { extra: this.seen, graceMs: 2000, rootIsGroupLeader: true });
    if (this.adapter.cleanup) await this.adapter.cleanup();
    return k;
  }
}
