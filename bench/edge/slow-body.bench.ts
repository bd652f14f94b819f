/**
 * Slow-body attack and memory: N sockets each send a request's headers and all but the last KiB of a body of
 * `--body-kib` KiB (the route's whole limit), then stall (one byte every 10 s after that, so the connection never
 * goes idle). The target is an unknown route, which reads its body before answering 404 and needs nothing to be
 * reached; `--upload` stalls multipart uploads to a visitor's conversation instead. The server runs on this
 * process's main thread; the attack runs in a child process, so the figures are the server's alone.
 *
 *   npm run bench -- slow-body
 *   node --import tsx --expose-gc bench/edge/slow-body.bench.ts --sockets=300 --body-kib=1024 [--upload]
 *
 * Prints RSS, V8 heap and external memory (after a full GC: `--expose-gc`) before the attack, while every body is
 * stalled, and after the attack ended — the server's body time-out (PARLEY_BODY_TIMEOUT_MS, 30 s) answered 408 and
 * closed the sockets — with how many sockets were answered 408 and closed by the server. The goal
 * (docs/operations.md "Capacity"): after the attack the RSS is back within GOAL_MIB of its baseline.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const GOAL_MIB = 48;
const BOUNDARY = 'slow-body-bench';

function arg(name: string, fallback: string): string {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? found.slice(name.length + 3) : fallback;
}

interface Figures {
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
}

async function measure(): Promise<Figures> {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Two passes: the first frees what the second's weak callbacks (socket handles, buffers) release.
  for (let i = 0; i < 2 && gc; i++) {
    gc();
    await sleep(50);
  }
  const m = process.memoryUsage();
  const mib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
  return { rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), externalMiB: mib(m.external) };
}

const show = (label: string, f: Figures) =>
  console.log(
    `${label.padEnd(34)} rss ${String(f.rssMiB).padStart(7)} MiB   heap ${String(f.heapUsedMiB).padStart(6)} MiB   external ${String(f.externalMiB).padStart(6)} MiB`,
  );

interface Target {
  port: number;
  path: string;
  /** Extra request headers (a visitor's session for `--upload`). */
  headers: Record<string, string>;
  upload: boolean;
}

/** The attack side (child process): opens the sockets, stalls them, reports when stalled and when all closed. */
async function attack(target: Target, sockets: number, bodyBytes: number): Promise<void> {
  const open: Socket[] = [];
  let stalled = 0;
  let answered408 = 0;
  let closed = 0;
  const partHead = target.upload
    ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`
    : '';
  // All but the last KiB, which one byte every 10 s would take hours to finish.
  const body = Buffer.alloc(bodyBytes - 1024 - partHead.length, 'a');
  const extra = Object.entries(target.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const type = target.upload ? `multipart/form-data; boundary=${BOUNDARY}` : 'application/json';
  for (let i = 0; i < sockets; i++) {
    const socket = connect(target.port, '127.0.0.1');
    socket.setNoDelay(true);
    open.push(socket);
    let head = '';
    socket.on('data', (chunk) => {
      if (head.length < 16) head += chunk.toString('latin1');
      if (head.startsWith('HTTP/1.1 408')) answered408++;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed++;
      if (closed === sockets) process.send!({ type: 'closed', answered408 });
    });
    socket.write(
      `POST ${target.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Content-Type: ${type}\r\nContent-Length: ${bodyBytes}\r\n\r\n${partHead}`,
    );
    socket.write(body, () => {
      stalled++;
      if (stalled === sockets) process.send!({ type: 'stalled' });
    });
    if (i % 25 === 24) await sleep(10);
  }
  // One byte every 10 s keeps each connection from ever being idle; the body is never finished.
  const trickle = setInterval(() => {
    for (const s of open) if (s.writable) s.write('a');
  }, 10_000);
  trickle.unref();
  process.on('message', (m: { type: string }) => {
    if (m.type === 'stop') for (const s of open) s.destroy();
  });
}

async function main(): Promise<void> {
  const sockets = Number(arg('sockets', '300'));
  const bodyKiB = Number(arg('body-kib', '1024'));
  const upload = process.argv.includes('--upload');
  // The attack gives up this long after every body stalled (the server should have closed them long before).
  const giveUpS = Number(arg('give-up-s', '90'));
  if (!(globalThis as { gc?: unknown }).gc) console.log('(run with --expose-gc for figures after a full GC)');
  const { startTestServer } = await import('@parley/testing/test-server');
  const server = await startTestServer({
    config: {
      logLevel: 'silent',
      http: { maxConnectionsPerAddress: Math.max(sockets + 10, 256) },
      webchat: {
        uploadsPerMinutePerSession: 100_000,
        uploadsPerMinutePerIp: 100_000,
        uploadBytesPerHourPerSession: 1024 ** 3,
      },
    },
  });
  const target: Target = {
    port: Number(new URL(server.baseUrl).port),
    path: '/no-such-route',
    headers: {},
    upload,
  };
  try {
    if (upload) {
      const company = await server.ctx.companies.create('Bench');
      target.headers = { 'x-session-id': randomUUID(), 'x-company': company.id };
      const created = await fetch(`${server.baseUrl}/sdk/v1/conversations`, {
        method: 'POST',
        body: '{}',
        headers: { ...target.headers, 'content-type': 'application/json' },
      });
      target.path = `/sdk/v1/conversations/${((await created.json()) as { id: string }).id}/attachments`;
    }
    // Warm up (first requests compile schemas, fill caches) so the baseline is the steady state.
    for (let i = 0; i < 20; i++)
      await fetch(`${server.baseUrl}/no-such-route`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
    const before = await measure();
    console.log(`${sockets} stalled ${upload ? 'uploads' : 'bodies'} of ${bodyKiB} KiB to ${target.path}`);
    show('before the attack', before);

    const child = fork(
      new URL(import.meta.url).pathname,
      ['--attack', JSON.stringify(target), String(sockets), String(bodyKiB * 1024)],
      { execArgv: ['--import', 'tsx'] },
    );
    const events: Array<{ type: string; answered408?: number }> = [];
    child.on('message', (m: { type: string }) => events.push(m));
    const next = async (type: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = events.find((e) => e.type === type);
        if (found) return found;
        await sleep(100);
      }
      return undefined;
    };
    const startedAt = Date.now();
    if (!(await next('stalled', 60_000))) throw new Error('the attack could not send its bodies');
    // The bodies are in the kernel's buffers now; give the server time to read them.
    await sleep(5000);
    show(`during (${sockets} stalled)`, await measure());

    const closed = await next('closed', giveUpS * 1000);
    const endedBy = closed
      ? `the server closed every socket after ${((Date.now() - startedAt) / 1000).toFixed(1)} s, ${closed.answered408} answered 408`
      : `the server had not closed them after ${giveUpS} s; the attacker closed them`;
    if (!closed) child.send({ type: 'stop' });
    console.log(`attack ended: ${endedBy}`);
    await sleep(500);
    child.kill();
    await sleep(1500);
    show('after the attack (+2 s)', await measure());
    await sleep(10_000);
    const later = await measure();
    show('after the attack (+12 s)', later);
    const grew = Math.round((later.rssMiB - before.rssMiB) * 10) / 10;
    console.log(
      `rss after vs before: ${grew >= 0 ? '+' : ''}${grew} MiB (goal: within ${GOAL_MIB} MiB) ${grew <= GOAL_MIB ? 'MET' : 'MISSED'}`,
    );
  } finally {
    await server.close();
  }
}

if (process.argv[2] === '--attack') {
  const [, , , target, sockets, bodyBytes] = process.argv;
  void attack(JSON.parse(target!) as Target, Number(sockets), Number(bodyBytes));
} else {
  await main();
  process.exit(0);
}
