// The floor for bench/oauth/token.bench.ts: only the essential work of a client-credentials grant, on raw
// node:http with no framework, validation, rate limiting or error handling — HTTP Basic, one SQLite lookup (WAL),
// HMAC-SHA256 of the secret, RFC 9068 claims, ES256 on libuv's thread pool (as Parley does) and the audit row in a
// batched insert. Nobody should run this; it shows how close Parley and the peer come to what this machine allows.
// Runs in its own process; prints "ready <port>" when listening.
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

const port = Number(process.env.PORT);
const clientId = process.env.BENCH_CLIENT_ID;
const clientSecret = process.env.BENCH_CLIENT_SECRET;

const dir = mkdtempSync(join(tmpdir(), 'parley-floor-'));
const db = new SQLite(join(dir, 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('create table clients (id text primary key, company_id text, scopes text, digest text)');
db.exec(
  'create table audit (id text primary key, company_id text, type text, actor text, subject text, ip text, details text, created_at text)',
);
db.exec('create index audit_company_time on audit (company_id, created_at)');
db.exec('create index audit_type_time on audit (type, created_at)');
const pepper = randomBytes(32);
const digestOf = (secret) => createHmac('sha256', pepper).update(secret).digest('base64url');
db.prepare('insert into clients values (?, ?, ?, ?)').run(
  clientId,
  'company',
  'connector:write connector:read',
  digestOf(clientSecret),
);
const lookup = db.prepare('select * from clients where id = ?');

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'floor' })).toString(
  'base64url',
);

let pending = [];
let timer;
function flushAudit() {
  timer = undefined;
  const rows = pending;
  pending = [];
  if (rows.length === 0) return;
  db.prepare(`insert into audit values ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`).run(
    rows.flat(),
  );
}

function grant(req, res, body) {
  const params = new URLSearchParams(body);
  const basic = Buffer.from((req.headers.authorization ?? '').slice(6), 'base64').toString();
  const colon = basic.indexOf(':');
  const id = basic.slice(0, colon);
  const client = lookup.get(id);
  if (!client || digestOf(basic.slice(colon + 1)) !== client.digest) return res.writeHead(401).end();
  const scope = params.get('scope') ?? client.scopes;
  const iat = Math.floor(Date.now() / 1000);
  const jti = randomBytes(16).toString('base64url');
  const claims = {
    iss: `http://127.0.0.1:${port}`,
    sub: id,
    client_id: id,
    aud: 'urn:parley:bench',
    scope,
    company_id: client.company_id,
    iat,
    exp: iat + 3600,
    jti,
  };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }, (error, signature) => {
    if (error) return res.writeHead(500).end();
    pending.push([
      randomBytes(16).toString('hex'),
      client.company_id,
      'token.issued',
      `client:${id}`,
      id,
      req.socket.remoteAddress,
      JSON.stringify({ client_id: id, scopes: scope.split(' '), jti }),
      new Date().toISOString(),
    ]);
    if (timer === undefined) timer = setTimeout(flushAudit, 25);
    const out = JSON.stringify({
      access_token: `${input}.${signature.toString('base64url')}`,
      token_type: 'Bearer',
      expires_in: 3600,
      scope,
    });
    res
      .writeHead(200, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        pragma: 'no-cache',
        'content-length': Buffer.byteLength(out),
      })
      .end(out);
  });
}

const server = createServer((req, res) => {
  if (req.method === 'GET') return res.writeHead(200).end('ok');
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => grant(req, res, body));
});
server.listen(port, '127.0.0.1', () => console.log(`ready ${port}`));
process.on('SIGTERM', () =>
  server.close(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
