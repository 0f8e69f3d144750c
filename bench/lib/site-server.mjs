// Fixture site for the agent loop: serves bench/site/ and POST /api/save on 127.0.0.1.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };
const MAX_BODY = 64 * 1024;

export async function startSite(root) {
  const stats = { requests: 0, saves: 0 };
  const server = http.createServer(async (req, res) => {
    stats.requests++;
    const url = new URL(req.url, 'http://127.0.0.1');
    try {
      if (url.pathname === '/api/save') {
        if (req.method !== 'POST') return send(res, 405, { error: 'POST only' });
        let body = '';
        for await (const chunk of req) {
          body += chunk;
          if (body.length > MAX_BODY) return send(res, 413, { error: 'too large' });
        }
        let text;
        try { text = String(JSON.parse(body).text ?? ''); } catch { return send(res, 400, { error: 'bad json' }); }
        stats.saves++;
        return send(res, 200, { text });
      }
      if (url.pathname === '/favicon.ico') { res.writeHead(204); return res.end(); }
      const rel = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
      if (rel.includes('..') || rel.includes('\0')) return send(res, 400, { error: 'bad path' });
      const file = path.join(root, rel);
      const data = await readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'cache-control': 'no-store',
        'content-length': data.length,
      });
      res.end(data);
    } catch {
      send(res, 404, { error: 'not found' });
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    formUrl: `${origin}/`,
    stats,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    }),
  };
}

function send(res, status, obj) {
  const data = Buffer.from(JSON.stringify(obj));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': data.length, 'cache-control': 'no-store' });
  res.end(data);
}
