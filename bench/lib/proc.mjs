// Process-tree helpers over /proc: descendants, memory (RSS, PSS), and cleanup by process group.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export function readStat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const f = s.slice(close + 2).split(' ');
    // f[0]=state f[1]=ppid f[2]=pgrp f[3]=session
    return { pid, comm, state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]) };
  } catch {
    return null;
  }
}

// CPU time (ms) the process pid has used, user + system; with children, also what its children
// that have ended and were waited for used (clock ticks of 10 ms).
export function cpuMs(pid, { children = false } = {}) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    const own = Number(f[11]) + Number(f[12]);
    return (children ? own + Number(f[13]) + Number(f[14]) : own) * 10;
  } catch {
    return 0;
  }
}

// CPU time (ms) of rootPid and every process below it, with the children that ended on the way
// (a renderer a navigation replaced still counts, through the parent that reaped it).
export function treeCpuMs(rootPid) {
  const procs = listProcs();
  return [rootPid, ...descendants(rootPid, procs).map((p) => p.pid)].reduce((a, pid) => a + cpuMs(pid, { children: true }), 0);
}

export function exeOf(pid) {
  try { return readlinkSync(`/proc/${pid}/exe`); } catch { return ''; }
}

export function listProcs() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (st) out.push(st);
  }
  return out;
}

export function descendants(rootPid, procs = listProcs()) {
  const children = new Map();
  for (const p of procs) {
    if (!children.has(p.ppid)) children.set(p.ppid, []);
    children.get(p.ppid).push(p);
  }
  const out = [];
  const queue = [rootPid];
  const seen = new Set([rootPid]);
  while (queue.length) {
    const pid = queue.shift();
    for (const c of children.get(pid) || []) {
      if (seen.has(c.pid)) continue;
      seen.add(c.pid);
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

// { rss, pss } in KiB from smaps_rollup (PSS splits shared pages among the sharers, so it can be summed).
export function memOf(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const rss = Number(/^Rss:\s+(\d+) kB/m.exec(text)?.[1] ?? NaN);
    const pss = Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? NaN);
    return { rss, pss };
  } catch {
    try {
      const text = readFileSync(`/proc/${pid}/status`, 'utf8');
      return { rss: Number(/^VmRSS:\s+(\d+) kB/m.exec(text)?.[1] ?? NaN), pss: NaN };
    } catch {
      return { rss: NaN, pss: NaN };
    }
  }
}

// Chromium processes, less the crashpad handler: it double-forks away to init under most parents
// (so it cannot be attributed to one server), but stays below a parent that is a child subreaper;
// leaving it out everywhere keeps the trees comparable.
export function isBrowserProc(p) {
  if (p.comm.startsWith('chrome_crashpad')) return false;
  const exe = exeOf(p.pid);
  if (exe) return exe.startsWith('/usr/lib/chromium/') || /chrom(e|ium)/.test(exe);
  return /chrom/i.test(p.comm);
}

// The browser processes below rootPid (includeRoot: the root itself is the browser, as for the floor).
export function browserTree(rootPid, { includeRoot = false } = {}) {
  const procs = listProcs();
  let list = descendants(rootPid, procs).filter(isBrowserProc);
  if (includeRoot) {
    const root = procs.find((p) => p.pid === rootPid);
    if (root) list = [root, ...list];
  }
  let pss = 0, rss = 0;
  const detail = [];
  for (const p of list) {
    const m = memOf(p.pid);
    if (Number.isFinite(m.pss)) pss += m.pss;
    if (Number.isFinite(m.rss)) rss += m.rss;
    detail.push({ pid: p.pid, comm: p.comm, pss_kb: m.pss, rss_kb: m.rss });
  }
  return { count: list.length, pss_kb: pss, rss_sum_kb: rss, processes: detail };
}

export function alive(pid) {
  try { process.kill(pid, 0); } catch { return false; }
  const st = readStat(pid);
  return !!st && st.state !== 'Z';
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Terminate rootPid's process group, every process group below it, and every process in `extra`
// ({pid, comm} seen earlier below the root, which may have been re-parented since; a pid whose
// command name changed was reused and is left alone). SIGTERM, then SIGKILL after graceMs.
export async function killTree(rootPid, { extra = [], graceMs = 3000, rootIsGroupLeader = false } = {}) {
  const own = process.pid;
  const ownPgid = readStat(own)?.pgid;
  const pids = new Set();
  for (const e of extra) {
    const st = readStat(e.pid);
    if (st && st.comm === e.comm) pids.add(e.pid);
  }
  const groups = new Set();
  if (rootPid) {
    pids.add(rootPid);
    if (rootIsGroupLeader) groups.add(rootPid);
    const st = readStat(rootPid);
    if (st) groups.add(st.pgid);
    for (const d of descendants(rootPid)) { pids.add(d.pid); groups.add(d.pgid); }
  }
  for (const p of pids) {
    const st = readStat(p);
    if (st && st.state !== 'Z') groups.add(st.pgid);
  }
  pids.delete(own);
  groups.delete(ownPgid);
  groups.delete(0);
  groups.delete(1);
  const signal = (sig) => {
    for (const g of groups) { try { process.kill(-g, sig); } catch { /* gone */ } }
    for (const p of pids) { try { process.kill(p, sig); } catch { /* gone */ } }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && [...pids].some(alive)) await sleep(50);
  const left = [...pids].filter(alive);
  if (left.length) {
    signal('SIGKILL');
    const d2 = Date.now() + 2000;
    while (Date.now() < d2 && [...pids].some(alive)) await sleep(50);
  }
  return { killed: left.length, remaining: [...pids].filter(alive) };
}
