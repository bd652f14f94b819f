// The floor for bench/webchat/uploads.bench.ts: only the essential work of an upload, on raw node:http with no
// framework — the request body streamed to a sink while its SHA-256 is computed, then a small JSON answer. No
// multipart parsing, type detection, limits or storage: it shows what this machine allows at all for moving the
// bytes through a Node process, so Parley's CPU per MiB can be read against it. Nobody should run this.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
const server = createServer((req, res) => {
  if (req.method !== 'POST') return res.writeHead(200).end('ok');
  const hash = createHash('sha256');
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    hash.update(chunk);
  });
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ size, sha256: hash.digest('hex') }));
  });
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1');
