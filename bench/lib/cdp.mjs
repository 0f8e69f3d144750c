// Minimal CDP client over one browser websocket with flattened target sessions.
import WebSocket from 'ws';

export class Cdp {
  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.closed = false;
    ws.on('message', (data) => this.#onMessage(data));
    ws.on('close', () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error(`CDP socket closed during ${p.method}`));
      this.pending.clear();
    });
    ws.on('error', () => {});
  }

  static connect(url, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      const timer = setTimeout(() => { ws.terminate(); reject(new Error(`CDP connect timeout: ${url}`)); }, timeoutMs);
      ws.once('open', () => { clearTimeout(timer); resolve(new Cdp(ws)); });
      ws.once('error', (err) => { clearTimeout(timer); reject(err); });
    });
  }

  #onMessage(data) {
    let msg;
    try { msg = JSON.parse(data.toString()); } catch { return; }
    if (msg.id !== undefined) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}${msg.error.data ? ' (' + msg.error.data + ')' : ''}`));
      else p.resolve(msg.result);
      return;
    }
    for (const l of [...this.listeners]) l(msg);
  }

  send(method, params = {}, sessionId, timeoutMs = 30000) {
    if (this.closed) return Promise.reject(new Error('CDP socket closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`CDP timeout after ${timeoutMs} ms: ${method}`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, method });
      const msg = { id, method, params };
      if (sessionId) msg.sessionId = sessionId;
      this.ws.send(JSON.stringify(msg));
    });
  }

  // Resolves with the first event `method` (on sessionId) that satisfies pred.
  waitFor(method, sessionId, { timeoutMs = 30000, pred = () => true } = {}) {
    let cancel;
    const promise = new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.listeners.delete(l); reject(new Error(`timeout waiting for ${method}`)); }, timeoutMs);
      const l = (msg) => {
        if (msg.method !== method) return;
        if (sessionId && msg.sessionId !== sessionId) return;
        if (!pred(msg.params)) return;
        clearTimeout(timer);
        this.listeners.delete(l);
        resolve(msg.params);
      };
      this.listeners.add(l);
      cancel = () => { clearTimeout(timer); this.listeners.delete(l); };
    });
    promise.cancel = cancel;
    return promise;
  }

  close() {
    try { this.ws.close(); } catch { /* ignore */ }
    setTimeout(() => { try { this.ws.terminate(); } catch { /* ignore */ } }, 500).unref();
  }
}
