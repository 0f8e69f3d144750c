// The agent loop shared by every driver, and the helpers to read MCP results.
import { performance } from 'node:perf_hooks';

export const STEPS = ['navigate', 'snapshot', 'type', 'click_save', 'confirm', 'click_link', 'title', 'screenshot'];

// Resolves once the status line reads `want` (MutationObserver, no polling), or after 5 s with what it shows.
export function confirmFunction(want) {
  const w = JSON.stringify(want);
  return `async () => { const want = ${w}; const el = document.getElementById('status');
  if (el.textContent === want) return el.textContent;
  return await new Promise((resolve) => {
    const obs = new MutationObserver(() => { if (el.textContent === want) { clearTimeout(t); obs.disconnect(); resolve(el.textContent); } });
    const t = setTimeout(() => { obs.disconnect(); resolve(el.textContent); }, 5000);
    obs.observe(el, { childList: true, characterData: true, subtree: true });
  }); }`;
}

export function statusFunction() {
  return `() => document.getElementById('status').textContent`;
}

export const TITLE_FUNCTION = '() => document.title';

// Elements from a text snapshot: Playwright-style `- role "name" [ref=e5]` (Playwright MCP, glassbox)
// and chrome-devtools-mcp `uid=1_5 role "name"`.
export function parseSnapshot(text) {
  const out = [];
  for (const line of text.split('\n')) {
    let m = /^\s*-\s+([\w-]+)(?:\s+"((?:[^"\\]|\\.)*)")?.*?\[ref=([^\]\s]+)\]/.exec(line);
    if (m) { out.push({ role: m[1], name: unq(m[2]), ref: m[3] }); continue; }
    m = /uid=(\S+)\s+([\w-]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(line);
    if (m) out.push({ role: m[2], name: unq(m[3]), ref: m[1] });
  }
  return out;
}

function unq(s) {
  if (s === undefined) return '';
  try { return JSON.parse(`"${s}"`); } catch { return s; }
}

export function pickTargets(elements) {
  const textbox = elements.find((e) => e.role === 'textbox');
  const save = elements.find((e) => e.role === 'button' && /^save$/i.test(e.name));
  const link = elements.find((e) => e.role === 'link' && /second page/i.test(e.name));
  const missing = [!textbox && 'textbox', !save && 'button "Save"', !link && 'link "…second page"'].filter(Boolean);
  if (missing.length) {
    const err = new Error(`snapshot: missing ${missing.join(', ')} among ${elements.length} elements`);
    err.elements = elements;
    throw err;
  }
  return { textbox: textbox.ref, save: save.ref, link: link.ref };
}

export function resultText(res) {
  const parts = [];
  for (const c of res?.content || []) if (c.type === 'text') parts.push(c.text);
  if (res?.structuredContent !== undefined) parts.push(JSON.stringify(res.structuredContent));
  return parts.join('\n');
}

export function hasPng(res) {
  return (res?.content || []).some((c) => c.type === 'image' && typeof c.data === 'string' && c.data.startsWith('iVBORw0KGgo'));
}

export function findKey(obj, re, depth = 0) {
  if (!obj || typeof obj !== 'object' || depth > 4) return undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (re.test(k) && (typeof v === 'number' || typeof v === 'string')) return v;
    const inner = findKey(v, re, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

// One pass of the loop. thinkMs: an agent's think time before each call
// (in the total, not in the steps). Returns { total, steps: {name: ms} }.
export async function runIteration(driver, url, text, thinkMs = 0) {
  const steps = {};
  const t0 = performance.now();
  let t = t0;
  const step = async (name, fn) => {
    if (thinkMs > 0) {
      await new Promise((r) => setTimeout(r, thinkMs));
      t = performance.now();
    }
    try {
      await fn();
    } catch (err) {
      err.step = name;
      throw err;
    }
    const now = performance.now();
    steps[name] = now - t;
    t = now;
  };
  await step('navigate', () => driver.navigate(url));
  await step('snapshot', () => driver.snapshot());
  await step('type', () => driver.type(text));
  await step('click_save', () => driver.clickSave());
  await step('confirm', () => driver.confirm(text));
  await step('click_link', () => driver.clickLink());
  await step('title', () => driver.title());
  await step('screenshot', () => driver.screenshot());
  return { total: performance.now() - t0, steps };
}
