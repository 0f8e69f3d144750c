/*
 * auth-proxy.mjs - a loopback HTTP proxy that adds one tenant's bearer
 * token to every request and forwards it, headers (Host, Origin) and body
 * unchanged, to glassbox serve. The conformance suite has no option for
 * an Authorization header; glassbox serve refuses requests without one,
 * so the suite talks to this proxy instead.
 *
 *   node auth-proxy.mjs TARGET_PORT TOKEN   prints "listening PORT" on stdout
 */
import http from 'node:http';

const [targetPort, token] = process.argv.slice(2);
if (!targetPort || !token) {
  console.error('usage: node auth-proxy.mjs TARGET_PORT TOKEN');
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: '127.0.0.1', port: Number(targetPort), method: req.method, path: req.url, headers },
    (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${err.message}\n`);
  });
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
