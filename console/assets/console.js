/* glassbox console: the live view (frames, status, a person's input). No
 * framework; every text goes in with textContent. */
'use strict';
(function () {
  const body = document.body;
  const csrf = body.dataset.csrf || '';
  /* lists that change by themselves reload every few seconds, unless the person is typing a reason */
  const refresh = document.querySelector('[data-refresh]');
  if (refresh)
    setInterval(() => {
      const busy = [...document.querySelectorAll('input[type=text]')].some((i) => i.value || i === document.activeElement);
      if (!busy) location.reload();
    }, Number(refresh.dataset.refresh) * 1000);
  const live = document.getElementById('live');
  if (!live) return;
  const base = live.dataset.base;
  const interval = Math.max(33, Math.round(1000 / Number(live.dataset.fps || 5)));
  const img = document.getElementById('frame');
  const state = document.getElementById('state');
  const url = document.getElementById('url');
  const actions = document.getElementById('actions');
  const note = document.getElementById('note');
  let seq = 0;
  let css = { w: 0, h: 0 };
  let control = 'agent';
  let mine = false;

  async function post(path, fields) {
    const form = new URLSearchParams({ csrf, ...fields });
    const r = await fetch(base + path, { method: 'POST', body: form, credentials: 'same-origin' });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) note.textContent = j.error || `${r.status}`;
    else note.textContent = '';
    return r.ok;
  }

  async function pullFrame() {
    try {
      const r = await fetch(`${base}/frame?after=${seq}`, { credentials: 'same-origin', cache: 'no-store' });
      if (r.status === 200) {
        seq = Number(r.headers.get('X-Frame-Seq') || seq);
        css = { w: Number(r.headers.get('X-Css-Width') || 0), h: Number(r.headers.get('X-Css-Height') || 0) };
        const blob = await r.blob();
        const old = img.src;
        img.src = URL.createObjectURL(blob);
        if (old.startsWith('blob:')) URL.revokeObjectURL(old);
        img.dataset.seq = String(seq);
      }
    } catch (e) {
      /* the service restarted or the session ended: keep trying */
    }
    setTimeout(pullFrame, interval);
  }

  function renderActions(list) {
    actions.replaceChildren();
    for (const a of list) {
      const li = document.createElement('li');
      li.className = a.verdict === 'ok' ? 'verdict-ok' : a.kind === 'tool_call' ? 'verdict-bad' : '';
      const t = document.createElement('span');
      const what = a.kind === 'tool_call' ? `${a.tool} ${a.verdict}` : a.tool ? `${a.kind} (${a.tool})` : a.kind;
      t.textContent = `${a.time} ${what}${a.actor === 'human' ? ' (a person: ' + a.by + ')' : ''}`;
      li.append(t);
      if (a.thumb) {
        const link = document.createElement('a');
        link.href = a.thumb;
        const th = document.createElement('img');
        th.src = a.thumb;
        th.className = 'thumb';
        th.alt = `evidence of ${a.tool || a.kind}`;
        link.append(th);
        li.append(link);
      }
      actions.append(li);
    }
  }

  async function pullStatus() {
    try {
      const r = await fetch(`${base}/status`, { credentials: 'same-origin', cache: 'no-store' });
      if (r.ok) {
        const s = await r.json();
        control = s.live.control;
        mine = !!s.mine;
        url.textContent = s.live.url || '(no page yet)';
        state.textContent = control === 'human' ? `a person has the browser: ${s.live.by}` : 'the agent has the browser';
        body.dataset.control = control;
        body.dataset.mine = mine ? '1' : '0';
        renderActions(s.actions || []);
      }
    } catch (e) {}
    setTimeout(pullStatus, 1000);
  }

  img.addEventListener('click', (e) => {
    if (control !== 'human' || !mine || !css.w) return;
    const r = img.getBoundingClientRect();
    const x = ((e.clientX - r.left) / r.width) * css.w;
    const y = ((e.clientY - r.top) / r.height) * css.h;
    post('/input', { kind: 'click', x: x.toFixed(1), y: y.toFixed(1) });
  });
  const typeForm = document.getElementById('type-form');
  typeForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const field = document.getElementById('type-text');
    if (field.value && (await post('/input', { kind: 'type', text: field.value }))) field.value = '';
  });
  for (const b of document.querySelectorAll('button[data-key]'))
    b.addEventListener('click', () => post('/input', { kind: 'key', key: b.dataset.key }));
  for (const b of document.querySelectorAll('button[data-control]'))
    b.addEventListener('click', async () => {
      await post(`/${b.dataset.control}`, {});
    });
  pullFrame();
  pullStatus();
})();
