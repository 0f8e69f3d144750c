// The floor: the same loop over raw CDP against a Chromium the bench starts itself, no MCP server.
// With evidence (floor-shots), it also takes the PNG screenshot glassbox keeps after each
// state-changing step (navigate, type, both clicks): what evidence costs with nothing in between.
import { spawn } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Cdp } from './cdp.mjs';
import { browserTree, descendants, killTree } from './proc.mjs';
import { confirmFunction, TITLE_FUNCTION } from './loop.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class FloorDriver {
  constructor({ name = 'floor', chromium, flags, tmpBase, evidence = false }) {
    this.name = name;
    this.evidence = evidence;
    this.chromium = chromium;
    this.flags = flags;
    this.tmpBase = tmpBase;
    this.stderrTail = '';
    this.seen = [];
    this.notes = new Set();
    this.timeToReady = null;
  }

  async start() {
    this.userDataDir = await mkdtemp(path.join(this.tmpBase, 'floor-profile-'));
    const args = [
      ...this.flags,
      `--user-data-dir=${this.userDataDir}`,
      '--remote-debugging-port=0',
      'about:blank',
    ];
    this.proc = spawn(this.chromium, args, {
      detached: true, // own process group
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, TMPDIR: this.tmpBase },
    });
    this.pid = this.proc.pid;
    this.proc.stderr.on('data', (c) => { this.stderrTail = (this.stderrTail + c.toString()).slice(-8192); });
    let exited = null;
    this.proc.once('exit', (code, sig) => { exited = `chromium exited (${sig || code})`; });

    // DevToolsActivePort: line 1 the port, line 2 the browser target path.
    const file = path.join(this.userDataDir, 'DevToolsActivePort');
    const deadline = performance.now() + 30000;
    let port, wsPath;
    while (!port) {
      if (exited) throw new Error(exited);
      if (performance.now() > deadline) throw new Error('DevToolsActivePort did not appear within 30 s');
      try {
        const [p, w] = (await readFile(file, 'utf8')).split('\n');
        if (p && w) { port = Number(p); wsPath = w.trim(); break; }
      } catch { /* not yet */ }
      await sleep(5);
    }
    this.cdp = await Cdp.connect(`ws://127.0.0.1:${port}${wsPath}`);
    const { targetInfos } = await this.cdp.send('Target.getTargets');
    let page = targetInfos.find((t) => t.type === 'page');
    if (!page) {
      const { targetId } = await this.cdp.send('Target.createTarget', { url: 'about:blank' });
      page = { targetId };
    }
    const { sessionId } = await this.cdp.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    this.session = sessionId;
    await Promise.all([
      this.send('Page.enable'),
      this.send('Runtime.enable'),
      this.send('DOM.enable'),
    ]);
  }

  send(method, params) {
    return this.cdp.send(method, params, this.session);
  }

  // The evidence screenshot, with glassbox's parameters, when this floor keeps evidence.
  async evidenceShot() {
    if (!this.evidence) return;
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true });
    if (!data?.startsWith('iVBORw0KGgo')) throw new Error('evidence screenshot: not a PNG');
  }

  async navigate(url) {
    const load = this.cdp.waitFor('Page.loadEventFired', this.session);
    const res = await this.send('Page.navigate', { url });
    if (res.errorText) { load.cancel(); throw new Error(`navigate: ${res.errorText}`); }
    await load;
    await this.evidenceShot();
  }

  async snapshot() {
    const { nodes } = await this.send('Accessibility.getFullAXTree');
    const find = (role, re) => nodes.find((n) => !n.ignored && n.role?.value === role && re.test(n.name?.value ?? ''));
    const textbox = find('textbox', /.*/);
    const save = find('button', /^save$/i);
    const link = find('link', /second page/i);
    if (!textbox || !save || !link) throw new Error('snapshot: textbox, Save or link not in the AX tree');
    this.targets = { textbox: textbox.backendDOMNodeId, save: save.backendDOMNodeId, link: link.backendDOMNodeId };
    return this.targets;
  }

  async type(text) {
    await this.send('DOM.focus', { backendNodeId: this.targets.textbox });
    await this.send('Input.insertText', { text });
    await this.evidenceShot();
  }

  async #clickNode(backendNodeId) {
    await this.send('DOM.scrollIntoViewIfNeeded', { backendNodeId });
    const { model } = await this.send('DOM.getBoxModel', { backendNodeId });
    const q = model.content;
    const x = (q[0] + q[2] + q[4] + q[6]) / 4;
    const y = (q[1] + q[3] + q[5] + q[7]) / 4;
    await this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
    await this.send('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', clickCount: 1 });
    await this.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x, y, button: 'left', clickCount: 1 });
  }

  async clickSave() {
    await this.#clickNode(this.targets.save);
    await this.evidenceShot();
  }

  async confirm(text) {
    const want = `Saved: ${text}`;
    const r = await this.send('Runtime.evaluate', {
      expression: `(${confirmFunction(want)})()`, awaitPromise: true, returnByValue: true,
    });
    if (r.result?.value !== want) throw new Error(`confirm: status is ${JSON.stringify(r.result?.value)}`);
  }

  async clickLink() {
    const load = this.cdp.waitFor('Page.loadEventFired', this.session);
    try {
      await this.#clickNode(this.targets.link);
    } catch (err) {
      load.cancel();
      throw err;
    }
    await load;
    await this.evidenceShot();
  }

  async title() {
    const r = await this.send('Runtime.evaluate', { expression: `(${TITLE_FUNCTION})()`, returnByValue: true });
    if (r.result?.value !== 'Second page') throw new Error(`title: ${JSON.stringify(r.result?.value)}`);
  }

  async screenshot() {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png' });
    if (!data?.startsWith('iVBORw0KGgo')) throw new Error('screenshot: not a PNG');
  }

  memory() {
    const browser = browserTree(this.pid, { includeRoot: true });
    this.seen = descendants(this.pid).map((p) => ({ pid: p.pid, comm: p.comm }));
    return { server_rss_kb: null, server_pss_kb: null, browser };
  }

  async stop() {
    if (this.pid) this.seen.push(...descendants(this.pid).map((p) => ({ pid: p.pid, comm: p.comm })));
    try { if (this.cdp && !this.cdp.closed) await this.cdp.send('Browser.close', {}, undefined, 3000); } catch { /* ignore */ }
    this.cdp?.close();
    const k = await killTree(this.pid, { extra: this.seen, graceMs: 3000, rootIsGroupLeader: true });
    if (this.userDataDir) await rm(this.userDataDir, { recursive: true, force: true });
    return k;
  }
}
