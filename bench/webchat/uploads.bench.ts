// Upload benchmark: 1 MiB attachments (multipart, image/png) to `POST /sdk/v1/conversations/{id}/attachments` of a
// Parley server in its own process (SQLite in a temp data dir, its default embedded setup: every byte goes through
// the inspector — size, type sniffing, SHA-256 — into 256 KiB chunk rows), at 1, 10 and 50 concurrent uploads.
// Peer in the same run: the floor (upload-floor-server.mjs), raw node:http streaming each body to a sink while
// hashing it. Prints the server's CPU ms per MiB (from /proc, the figure contention distorts least on a shared
// machine), MiB/s, and the peak RSS at each concurrency (sampled every 10 ms).
//
// Goals (printed beside the figures): CPU per MiB ≤ 1.5 × the floor's at 50 concurrent uploads; peak RSS flat with
// concurrency (streaming: each upload holds at most a chunk, not its file).
//
//   npm run bench -- uploads          BENCH_UPLOADS_PER_LEVEL=300 to change how many uploads the 50-level sends
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
import {
  fmt,
  parleyCli,
  parleyEnv,
  repoRoot,
  startParleyProcess,
  stop,
  waitForUp,
} from '../lib/parley-process.ts';
import { cpuMs, rssMiB } from '../lib/proc-stats.ts';

const FILE_MIB = 1;
const LEVELS = [1, 10, 50];
const UPLOADS_AT_50 = Number(process.env.BENCH_UPLOADS_PER_LEVEL ?? 300);
const uploadsAt = (concurrency: number) =>
  concurrency === 50 ? UPLOADS_AT_50 : Math.max(40, concurrency * 6);

interface Target {
  name: string;
  pid: number;
  url: string;
  headers: Record<string, string>;
}

interface Level {
  concurrency: number;
  uploads: number;
  seconds: number;
  cpuMs: number;
  peakRssMiB: number;
}

/** One multipart body, reused by every upload: a PNG signature then random bytes (1 MiB of file in all). */
function multipartBody(): { body: Buffer; contentType: string } {
  const boundary = 'parley-bench-boundary';
  const file = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    randomBytes(FILE_MIB * 1024 * 1024 - 8),
  ]);
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

const { body, contentType } = multipartBody();

function uploadOnce(target: Target, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, {
      method: 'POST',
      agent,
      headers: { ...target.headers, 'content-type': contentType, 'content-length': String(body.length) },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 201 ? resolve() : reject(new Error(`${target.name} answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `uploads` uploads from `concurrency` parallel senders on keep-alive connections, with CPU and peak RSS. */
async function measure(target: Target, concurrency: number, uploads: number): Promise<Level> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let peak = rssMiB(target.pid) ?? Number.NaN;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(target.pid) ?? Number.NaN);
  }, 10);
  const cpuBefore = cpuMs(target.pid) ?? Number.NaN;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < uploads) {
        next++;
        await uploadOnce(target, agent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = (cpuMs(target.pid) ?? Number.NaN) - cpuBefore;
  clearInterval(sampler);
  agent.destroy();
  return { concurrency, uploads, seconds, cpuMs: cpu, peakRssMiB: peak };
}

async function startParley(): Promise<{ target: Target; stop: () => Promise<void> }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-uploads-'));
  // One visitor session sends every upload: its per-session and per-IP upload limits and byte quotas are lifted for
  // the run (the limiter still counts every request and byte).
  const env = parleyEnv(port, dataDir, {
    LOG_LEVEL: 'warn',
    PARLEY_WEBCHAT_UPLOADS_PER_MINUTE_PER_SESSION: String(1_000_000),
    PARLEY_WEBCHAT_UPLOADS_PER_MINUTE_PER_IP: String(1_000_000),
    PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_SESSION: String(2 ** 40),
    PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_IP: String(2 ** 40),
  });
  const company = await parleyCli({ ...env, LOG_LEVEL: 'error' }, ['companies', 'create', '--name', 'Bench']);
  const child = await startParleyProcess(env, port);
  const headers = { 'x-session-id': crypto.randomUUID(), 'x-company': company.id! };
  const created = await fetch(`http://127.0.0.1:${port}/sdk/v1/conversations`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{}',
  });
  const conversation = (await created.json()) as { id: string };
  return {
    target: {
      name: 'parley',
      pid: child.pid!,
      url: `http://127.0.0.1:${port}/sdk/v1/conversations/${conversation.id}/attachments`,
      headers,
    },
    stop: async () => {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startFloor(): Promise<{ target: Target; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [join(repoRoot, 'bench/webchat/upload-floor-server.mjs')],
    {
      env: { ...process.env, PORT: String(port), NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  await waitForUp(child, `http://127.0.0.1:${port}/`);
  return {
    target: { name: 'floor', pid: child.pid!, url: `http://127.0.0.1:${port}/upload`, headers: {} },
    stop: () => stop(child),
  };
}

const started: Array<{ target: Target; stop: () => Promise<void> }> = [];
const results = new Map<string, Level[]>();
try {
  started.push(await startParley(), await startFloor());
  for (const { target } of started) {
    await measure(target, 4, 20); // warm-up (JIT, SQLite pages)
    const levels: Level[] = [];
    for (const concurrency of LEVELS) levels.push(await measure(target, concurrency, uploadsAt(concurrency)));
    results.set(target.name, levels);
  }
} finally {
  for (const s of started.reverse()) await s.stop();
}

const cpuPerMiB = (l: Level) => l.cpuMs / (l.uploads * FILE_MIB);
console.log(
  `\nPOST …/attachments, ${FILE_MIB} MiB multipart image/png, keep-alive, uploads per level: 1→${uploadsAt(1)}, 10→${uploadsAt(10)}, 50→${uploadsAt(50)}`,
);
console.log(
  'parley: SQLite (WAL), 256 KiB chunk rows, type sniffing + size limit + SHA-256 while streaming, LOG_LEVEL=warn',
);
console.log('| server | concurrent |    MiB/s | CPU ms/MiB | peak RSS (MiB) |');
console.log('|--------|------------|----------|------------|----------------|');
for (const [name, levels] of results) {
  for (const l of levels) {
    console.log(
      `| ${name.padEnd(6)} | ${String(l.concurrency).padStart(10)} | ${fmt(l.uploads / l.seconds)} |  ${fmt(cpuPerMiB(l), 2)} |      ${fmt(l.peakRssMiB)} |`,
    );
  }
}
const ours = results.get('parley')!.at(-1)!;
const floor = results.get('floor')!.at(-1)!;
const ratio = cpuPerMiB(ours) / cpuPerMiB(floor);
console.log(
  `parley / floor CPU per MiB at 50 concurrent: ${ratio.toFixed(2)}x   goal ≤ 1.5x   ${ratio <= 1.5 ? 'MET' : 'MISSED'}`,
);
const rss = results.get('parley')!.map((l) => l.peakRssMiB);
const growth = rss.at(-1)! - rss[0]!;
console.log(
  `parley peak RSS 1 → 50 concurrent: ${rss.map((r) => r.toFixed(0)).join(' → ')} MiB (+${growth.toFixed(0)} MiB for 49 more uploads in flight; ${((growth / 49) * 1024).toFixed(0)} KiB per upload)`,
);
