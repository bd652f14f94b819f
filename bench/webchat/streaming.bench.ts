/**
 * Streaming benchmark: N concurrent conversations, each streaming a builtin digital employee's reply to a
 * subscribed client. Reports envelopes/s, time to first envelope and the p99 gap between envelopes of one reply.
 *
 *   npm run bench -- webchat                      (1,000 conversations)
 *   node --import tsx bench/webchat/streaming.bench.ts --conversations=200 --words=40 --word-delay=20
 *   npm run bench -- streaming --store=postgres   (PostgreSQL + Redis broker: BENCH_DATABASE_URL / BENCH_REDIS_URL,
 *                                                 else the tests', else postgres://postgres@127.0.0.1:5432/test and
 *                                                 redis://127.0.0.1:6379; a schema and a Redis key prefix of its own)
 *   npm run bench -- streaming --store=postgres --no-retry   (refused publishes are not retried: counted as failed)
 *   npm run bench -- streaming --store=postgres --statements   (the statements of the burst by kind: count per visitor
 *                                                              message and mean connection hold)
 *   npm run bench -- streaming --busy-flush-ms=60   (the replies' partials at most every 60 ms while visitor messages
 *                                                  wait to be taken in: the busy coalescing on, for comparison)
 *   npm run bench -- streaming --cpu-prof=/tmp/burst.cpuprofile   (V8 profile of the server's thread from the burst's
 *                                                                 first publication to the last reply's end, summarised)
 *
 * The server runs on the main thread; the load side runs in a worker thread (so each has an event loop of its own)
 * with raw `ws` clients speaking the Centrifugo JSON protocol — the `centrifuge` client is heavier than needed at
 * 1,000 connections. Both share this machine's cores, so the figures are a lower bound for a dedicated node.
 *
 * Peer, in the same run with the same load side: the same replies (words, pacing, 40 ms coalescing, envelopes of
 * the same shape) from a bare `ws` server with timers and nothing else — the floor of this machine.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import WebSocket, { WebSocketServer } from 'ws';
import { type CpuProfile, startCpuProfile, summariseCpuProfile } from '../lib/cpu-profile.ts';
import { StatementTally } from '../lib/statement-tally.ts';
import { percentile } from '../lib/stats.ts';

/** The goals of a burst of 1,000 (docs/operations.md "Capacity"): the first is absolute, the second relative to the floor. */
/** SQLite with the memory broker (one node); or PostgreSQL with the Redis broker, a cluster's stores, on one node. */
const STORE = process.argv.includes('--store=postgres') ? 'postgres' : 'sqlite';
const FIRST_P99_GOAL_MS = STORE === 'postgres' ? 500 : 300;
const GOAL = `a burst of 1,000 messages on one node: first envelope p99 <= ${FIRST_P99_GOAL_MS} ms, p99 gap between envelopes <= 1.3x the floor`;
const GAP_P99_GOAL_RATIO = 1.3;

interface Target {
  conversationId: string;
  channel: string;
  connectToken: string;
  subscribeToken: string;
  /** The visitor message's id, kept across retries (the server stores it once). */
  clientMessageId?: string;
}

interface Outcome {
  /** The conversation (for the server-side account of a reply that did not end). */
  conversationId: string;
  sentAt: number;
  /** Publishes of the visitor's message: the first and the SDK-style retries after a temporary refusal. */
  attempts: number;
  /** Codes of the refusals (`{code, temporary}` replies to the publish), in order. */
  refusals: number[];
  /** The publish was acknowledged (the server stored the visitor's message). */
  acknowledged: boolean;
  /** A refusal that is not temporary: the SDK marks the message failed and does not retry. */
  failed: boolean;
  /** The code of the error block the reply ended with, if it failed (a clear failure still ends the reply). */
  errorCode?: string;
  /** What ended the client's connection or subscription before the reply's end (a push or the close code). */
  lost?: string;
  /** Arrival times of the reply's envelopes (digital employee only). */
  arrivals: number[];
  completedAt: number;
}

/** Where the server thread's CPU profile of the burst goes (`--cpu-prof=<file>`), if anywhere. */
const PROFILE_FILE = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);

function arg(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
}

/**
 * The PostgreSQL and Redis of `--store=postgres`: BENCH_DATABASE_URL / BENCH_REDIS_URL, else the tests'
 * (scripts/test.mjs sets them), else the local defaults — so `npm run bench -- streaming --store=postgres` runs as
 * documented. The test server reads the PARLEY_TEST_* names (packages/testing/src/databases.ts).
 */
function useBenchStores(): void {
  process.env.PARLEY_TEST_DATABASE_URL =
    process.env.BENCH_DATABASE_URL ??
    process.env.PARLEY_TEST_DATABASE_URL ??
    process.env.DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  process.env.PARLEY_TEST_REDIS_URL =
    process.env.BENCH_REDIS_URL ??
    process.env.PARLEY_TEST_REDIS_URL ??
    process.env.REDIS_URL ??
    'redis://127.0.0.1:6379';
}

async function runServerSide(): Promise<void> {
  if (STORE === 'postgres') useBenchStores();
  const conversations = arg('conversations', 1000);
  const words = arg('words', 40);
  const wordDelayMs = arg('word-delay', 20);
  const timeoutMs = arg('timeout-s', 300) * 1000;
  const { startTestServer } = await import('@parley/testing/test-server');
  const server = await startTestServer({
    ...(STORE === 'postgres' ? { database: 'postgres' as const, redis: true } : {}),
    config: {
      logLevel: 'warn',
      // Every client connects from this machine: one address holding a connection per conversation.
      http: { maxConnectionsPerAddress: 1_000_000 },
      webchat: {
        conversationsPerMinutePerSession: 1_000_000,
        conversationsPerMinutePerIp: 1_000_000,
        messagesPerMinutePerSession: 1_000_000,
        messagesPerMinutePerIp: 1_000_000,
        // A key prefix of this run's own: other runs and test servers share the Redis.
        realtimeRedisPrefix: `parley:bench:${randomUUID().slice(0, 8)}`,
        ...(process.argv.some((a) => a.startsWith('--persist-ms='))
          ? { streamPersistIntervalMs: arg('persist-ms', 1000) }
          : {}),
        // `--busy-flush-ms=60`: the replies' partials coalesced while visitor messages wait (off by default).
        ...(process.argv.some((a) => a.startsWith('--busy-flush-ms='))
          ? { streamBusyFlushIntervalMs: arg('busy-flush-ms', 60) }
          : {}),
      },
    },
  });
  let closed = false;
  try {
    const company = await server.ctx.companies.create('Bench Co');
    await server.ctx.digitalEmployees.create({
      companyId: company.id,
      name: 'Bench',
      responder: 'builtin',
      settings: {
        fallback: Array.from({ length: words }, (_, i) => `word${i}`).join(' '),
        word_delay_ms: wordDelayMs,
        greeting: null,
      },
      isDefault: true,
    });
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    const tally = process.argv.includes('--statements') ? new StatementTally() : undefined;
    if (tally) {
      const metrics = server.ctx.metrics;
      metrics.storeQuery = tally.wrap(metrics.storeQuery.bind(metrics));
    }
    let profile: CpuProfile | undefined;
    // The load side creates the conversations too, from its own thread: the figure is the server's, not fetch's.
    const result = await runClients(
      {
        mode: 'centrifugo',
        baseUrl: server.baseUrl,
        companyId: company.id,
        count: conversations,
        wsUrl: `${server.baseUrl.replace('http', 'ws')}/connection/websocket`,
        timeoutMs,
        noRetry: NO_RETRY,
      },
      loopDelay,
      PROFILE_FILE ? (p) => (profile = p) : undefined,
      tally,
    );
    tally?.stop();
    const parley = report(result, { conversations, words, wordDelayMs, timeoutMs, loopDelay });
    if (tally)
      console.log(`\nstatements from the burst's start to its last reply:\n${tally.summary(conversations)}`);
    await accountForReplies(result, server);
    if (profile && PROFILE_FILE) {
      writeFileSync(PROFILE_FILE, JSON.stringify(profile));
      console.log(`\nserver thread during the burst (${PROFILE_FILE}):\n${summariseCpuProfile(profile)}\n`);
    }
    await server.close();
    closed = true;
    const floor = await measureFloor({ conversations, words, wordDelayMs, timeoutMs });
    printComparison(parley, floor);
  } finally {
    if (!closed) await server.close();
  }
}

type LoadData =
  | {
      mode: 'centrifugo';
      baseUrl: string;
      companyId: string;
      count: number;
      wsUrl: string;
      timeoutMs: number;
      noRetry: boolean;
    }
  | { mode: 'floor'; wsUrl: string; count: number; timeoutMs: number };
type RunResult = { outcomes: Outcome[]; start: number; timedOut: boolean };

/** Runs the load side in a worker thread: connect everyone, then "go", then the timed replies. */
async function runClients(
  data: LoadData,
  loopDelay?: ReturnType<typeof monitorEventLoopDelay>,
  onProfile?: (profile: CpuProfile) => void,
  tally?: StatementTally,
): Promise<RunResult> {
  // Worker threads do not inherit tsx's loader hooks: register them first, then load this file as the worker.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: data });
  let profiler: Awaited<ReturnType<typeof startCpuProfile>> | undefined;
  try {
    return await new Promise<RunResult>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (message: { type: string } & Record<string, unknown>) => {
        if (message.type === 'created') {
          const perSecond = Math.round((1000 * Number(message.count)) / Number(message.ms));
          console.log(
            `created ${message.count} conversations with tokens in ${message.ms} ms (${perSecond}/s; one SDK request each, from the load side's thread)`,
          );
        } else if (message.type === 'subscribed') {
          console.log(`${data.mode}: ${message.clients} clients ready in ${message.ms} ms; streaming…`);
          loopDelay?.enable();
          tally?.start();
          const go = () => worker.postMessage('go');
          if (onProfile)
            void startCpuProfile().then((started) => {
              profiler = started;
              go();
            }, reject);
          else go();
        } else if (message.type === 'done') {
          const stopped = profiler?.stop().then(onProfile);
          profiler = undefined;
          void Promise.resolve(stopped).then(() => resolve(message as never), reject);
        }
      });
    });
  } finally {
    loopDelay?.disable();
    await worker.terminate();
  }
}

/**
 * The peer: the same replies (same words, pacing and 40 ms coalescing, envelopes of the same shape) streamed by a
 * bare `ws` server with no protocol, storage, broker or history — the floor this machine allows, measured in the
 * same run by the same load side.
 */
async function measureFloor(o: {
  conversations: number;
  words: number;
  wordDelayMs: number;
  timeoutMs: number;
}): Promise<Figures> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws) => ws.once('message', () => streamFloorReply(ws, o.words, o.wordDelayMs)));
  try {
    const { port } = wss.address() as { port: number };
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    const result = await runClients(
      { mode: 'floor', wsUrl: `ws://127.0.0.1:${port}`, count: o.conversations, timeoutMs: o.timeoutMs },
      loopDelay,
    );
    return figuresOf(result, loopDelay);
  } finally {
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }
}

function streamFloorReply(ws: WebSocket, words: number, wordDelayMs: number): void {
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  let sequence = 0;
  let content = '';
  let lastFlushAt = Date.now();
  let flushTimer: NodeJS.Timeout | undefined;
  let dirty = false;
  const send = (operation: 'replace' | 'complete', blocks: unknown[]) =>
    ws.send(
      JSON.stringify({
        version: 1,
        operation,
        sequence: ++sequence,
        message_snapshot: {
          id,
          conversation_id: id,
          role: 'digital_employee',
          author: { id, name: 'Bench' },
          status: operation === 'complete' ? 'complete' : 'partial',
          blocks,
          client_message_id: null,
          created_at: createdAt,
          updated_at: new Date().toISOString(),
        },
      }),
    );
  const markdown = () => [{ id, type: 'markdown', content }];
  const flush = () => {
    flushTimer = undefined;
    if (!dirty) return;
    dirty = false;
    lastFlushAt = Date.now();
    send('replace', markdown());
  };
  send('replace', [{ id, type: 'typing', typing: true }]);
  let word = 0;
  const next = () => {
    content += `word${word} `;
    dirty = true;
    const wait = lastFlushAt + 40 - Date.now();
    if (wait <= 0) flush();
    else flushTimer ??= setTimeout(flush, wait);
    if (++word < words) setTimeout(next, wordDelayMs);
    else {
      clearTimeout(flushTimer);
      send('complete', markdown());
    }
  };
  next();
}

interface Figures {
  completed: number;
  streamingS: number;
  envelopes: number;
  envelopesPerS: number;
  first: { p50: number; p99: number; max: number };
  gap: { p50: number; p99: number; max: number; p99InBurst: number };
  burstMs: number;
  loopDelayP99: number;
}

function figuresOf(result: RunResult, loopDelay: ReturnType<typeof monitorEventLoopDelay>): Figures {
  const complete = result.outcomes.filter((x) => x.completedAt > 0);
  const end = complete.length > 0 ? Math.max(...complete.map((x) => x.completedAt)) : Date.now();
  const envelopes = result.outcomes.reduce((n, x) => n + x.arrivals.length, 0);
  const firsts = result.outcomes.filter((x) => x.arrivals.length > 0).map((x) => x.arrivals[0]! - x.sentAt);
  const gaps = result.outcomes.flatMap((x) => x.arrivals.slice(1).map((t, i) => t - x.arrivals[i]!));
  // The start-up burst lasts until the last reply has begun; gaps ending within it are the hardest.
  const burstEnd = Math.max(...result.outcomes.map((x) => x.arrivals[0] ?? 0));
  const gapsInBurst = result.outcomes.flatMap((x) =>
    x.arrivals.slice(1).flatMap((t, i) => (t <= burstEnd ? [t - x.arrivals[i]!] : [])),
  );
  const seconds = (end - result.start) / 1000;
  return {
    completed: complete.length,
    streamingS: round(seconds),
    envelopes,
    envelopesPerS: Math.round(envelopes / seconds),
    first: { p50: percentile(firsts, 50), p99: percentile(firsts, 99), max: Math.max(...firsts) },
    gap: {
      p50: percentile(gaps, 50),
      p99: percentile(gaps, 99),
      max: Math.max(...gaps),
      p99InBurst: percentile(gapsInBurst, 99),
    },
    burstMs: burstEnd - result.start,
    loopDelayP99: round(loopDelay.percentile(99) / 1e6),
  };
}

function report(
  result: RunResult,
  o: {
    conversations: number;
    words: number;
    wordDelayMs: number;
    timeoutMs: number;
    loopDelay: ReturnType<typeof monitorEventLoopDelay>;
  },
): Figures {
  const f = figuresOf(result, o.loopDelay);
  if (result.timedOut)
    console.error(
      `timed out after ${o.timeoutMs / 1000} s: ${f.completed}/${o.conversations} replies complete`,
    );
  console.log(
    JSON.stringify(
      {
        conversations: o.conversations,
        completed: f.completed,
        words_per_reply: o.words,
        word_delay_ms: o.wordDelayMs,
        streaming_s: f.streamingS,
        envelopes: f.envelopes,
        envelopes_per_s: f.envelopesPerS,
        envelopes_per_reply: round(f.envelopes / o.conversations),
        first_envelope_ms: f.first,
        inter_envelope_gap_ms: {
          p50: f.gap.p50,
          p99: f.gap.p99,
          max: f.gap.max,
          p99_during_start_burst: f.gap.p99InBurst,
        },
        start_burst_ms: f.burstMs,
        server_event_loop_delay_ms: {
          p50: round(o.loopDelay.percentile(50) / 1e6),
          p99: f.loopDelayP99,
        },
        cpu_cores: availableParallelism(),
        load_average_1m: round(loadavg()[0]!),
      },
      null,
      2,
    ),
  );
  if (result.timedOut || f.completed < o.conversations)
    console.log(`result: only ${f.completed}/${o.conversations} conversations streamed to their end`);
  return f;
}

type BenchServer = Awaited<ReturnType<typeof import('@parley/testing/test-server').startTestServer>>;

/**
 * What happened to every visitor's message, from both sides: the client's (refused and retried, acknowledged, first
 * envelope, end, connection lost) and, for each acknowledged message whose reply did not end, the store's (its reply
 * job's state, its reply message's status) — plus the server's warnings and errors grouped by message.
 */
async function accountForReplies(result: RunResult, server: BenchServer): Promise<void> {
  const outcomes = result.outcomes;
  const client = {
    complete: outcomes.filter((x) => x.completedAt > 0).length,
    ended_with_error_block: countBy(outcomes.flatMap((x) => (x.errorCode ? [x.errorCode] : []))),
    failed_refused: outcomes.filter((x) => x.failed).length,
    never_acknowledged: outcomes.filter((x) => !x.acknowledged && !x.failed).length,
    acknowledged_no_envelope: outcomes.filter((x) => x.acknowledged && x.arrivals.length === 0).length,
    started_not_ended: outcomes.filter((x) => x.arrivals.length > 0 && !x.completedAt).length,
    connection_lost: outcomes.filter((x) => x.lost).length,
    publishes: outcomes.reduce((n, x) => n + x.attempts, 0),
    refusals: countBy(outcomes.flatMap((x) => x.refusals.map(String))),
    retried_messages: outcomes.filter((x) => x.attempts > 1).length,
  };
  const stranded = outcomes.filter((x) => x.acknowledged && !x.completedAt).map((x) => x.conversationId);
  const store: Record<string, number> = {};
  for (let i = 0; i < stranded.length; i += 500) {
    const ids = stranded.slice(i, i + 500);
    const jobs = await server.ctx.store.db
      .selectFrom('reply_jobs')
      .select(['conversation_id', 'state', 'reply_message_id'])
      .where('conversation_id', 'in', ids)
      .execute();
    const replies = await server.ctx.store.db
      .selectFrom('messages')
      .select(['conversation_id', 'status'])
      .where('conversation_id', 'in', ids)
      .where('role', '=', 'digital_employee')
      .execute();
    for (const id of ids) {
      const job = jobs.find((j) => j.conversation_id === id);
      const reply = replies.find((r) => r.conversation_id === id);
      const jobState = job ? `${job.state}${job.reply_message_id ? ' (reply attached)' : ''}` : 'gone';
      const key = `job ${jobState}, reply ${reply?.status ?? 'none'}`;
      store[key] = (store[key] ?? 0) + 1;
    }
  }
  const logs = countBy(
    server.logs.map((line) => {
      const parsed = JSON.parse(line) as { msg?: string; code?: string; err?: unknown };
      const err = typeof parsed.err === 'string' ? parsed.err : (parsed.err as { message?: string })?.message;
      return [parsed.msg ?? '?', parsed.code, err?.slice(0, 80)].filter(Boolean).join(' | ');
    }),
  );
  console.log(
    JSON.stringify({ client, acknowledged_not_ended_in_store: store, server_warnings: logs }, null, 2),
  );
  const lost = countBy(outcomes.flatMap((x) => (x.lost && !x.completedAt ? [x.lost] : [])));
  if (Object.keys(lost).length > 0) console.log(`lost before the end: ${JSON.stringify(lost)}`);
}

function countBy(keys: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

function printComparison(parley: Figures, floor: Figures): void {
  const row = (name: string, f: Figures) =>
    `| ${name.padEnd(45)} | ${String(f.envelopesPerS).padStart(11)} | ${String(f.first.p50).padStart(9)} | ${String(f.first.p99).padStart(9)} | ${String(f.gap.p50).padStart(7)} | ${String(f.gap.p99).padStart(7)} | ${String(f.gap.max).padStart(7)} |`;
  console.log('\nsame replies, same load side, same run (times in ms)');
  console.log(
    '| server                                        | envelopes/s | first p50 | first p99 | gap p50 | gap p99 | gap max |',
  );
  console.log(
    '|-----------------------------------------------|-------------|-----------|-----------|---------|---------|---------|',
  );
  const label = STORE === 'postgres' ? 'PostgreSQL, Redis broker' : 'SQLite, memory broker';
  console.log(row(`parley (${label}, full protocol)`, parley));
  console.log(row('floor: bare ws + timers (no storage/protocol)', floor));
  const gapRatio = Math.round((100 * parley.gap.p99) / floor.gap.p99) / 100;
  const firstMet = parley.first.p99 <= FIRST_P99_GOAL_MS;
  const gapMet = gapRatio <= GAP_P99_GOAL_RATIO;
  console.log(`\ngoal: ${GOAL}`);
  console.log(
    `result: first envelope p99 ${parley.first.p99} ms (${firstMet ? 'MET' : 'NOT MET'}); gap p99 ${gapRatio}x the floor's (${gapMet ? 'MET' : 'NOT MET'})`,
  );
}

async function setUpConversation(baseUrl: string, companyId: string): Promise<Target> {
  const headers = {
    'content-type': 'application/json',
    'x-session-id': randomUUID(),
    'x-company': companyId,
  };
  const post = async (path: string, body: unknown, attempt = 1): Promise<Record<string, string>> => {
    const res = await fetch(`${baseUrl}/sdk/v1${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    // A store that cannot take more now (a pool wait on a loaded machine) answers 503 with a Retry-After; the SDK
    // retries it, and so does the bench's set-up, a few times.
    if (res.status === 503 && attempt < 5) {
      const seconds = Number(res.headers.get('retry-after') ?? 1);
      await res.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 1000 * seconds));
      return post(path, body, attempt + 1);
    }
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  // One request, as the SDK opens a chat: the conversation comes with both tokens (docs/design.md "Webchat REST").
  const conversation = await post('/conversations', { realtime_tokens: true });
  const tokens = conversation.realtime_tokens as unknown as Record<string, string>;
  return {
    conversationId: conversation.id!,
    channel: conversation.channel!,
    connectToken: tokens.connection_token!,
    subscribeToken: tokens.subscription_token!,
  };
}

/** The worker: connects every client, waits for "go", publishes one SendMessage each and times the replies. */
async function runLoadSide(data: LoadData): Promise<void> {
  const count = data.count;
  let targets: Target[] = [];
  if (data.mode === 'centrifugo') {
    const created = Date.now();
    targets = await inBatches(count, 50, () => setUpConversation(data.baseUrl, data.companyId));
    parentPort!.postMessage({ type: 'created', count, ms: Date.now() - created });
  }
  const t0 = Date.now();
  const outcomes: Outcome[] = Array.from({ length: count }, (_, i) => ({
    conversationId: targets[i]?.conversationId ?? '',
    sentAt: 0,
    attempts: 0,
    refusals: [],
    acknowledged: false,
    failed: false,
    arrivals: [],
    completedAt: 0,
  }));
  let completed = 0;
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const onComplete = () => {
    if (++completed === count) finish();
  };
  const sockets = await inBatches(count, 50, (i) =>
    data.mode === 'centrifugo'
      ? connectAndSubscribe(data.wsUrl, targets[i]!, outcomes[i]!, onComplete)
      : connectToFloor(data.wsUrl, outcomes[i]!, onComplete),
  );
  parentPort!.postMessage({ type: 'subscribed', clients: count, ms: Date.now() - t0 });
  await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));
  const start = Date.now();
  sockets.forEach((ws, i) => {
    outcomes[i]!.sentAt = Date.now();
    if (data.mode === 'floor') {
      ws.send('go');
      return;
    }
    publishMessage(ws, targets[i]!, outcomes[i]!);
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    allDone.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), data.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  // Posted (copied) first: the close events of the terminated sockets must not count as lost connections.
  parentPort!.postMessage({ type: 'done', outcomes, start, timedOut });
  for (const ws of sockets) ws.terminate();
}

/** Centrifugo JSON protocol by hand: connect (id 1) and subscribe (id 2) in one frame; pings `{}` get `{}`. */
function connectAndSubscribe(
  wsUrl: string,
  target: Target,
  outcome: Outcome,
  onComplete: () => void,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    ws.on('error', reject);
    ws.on('close', (code) => {
      if (!outcome.completedAt) outcome.lost ??= `closed ${code}`;
    });
    ws.on('open', () => {
      ws.send(
        `${JSON.stringify({ id: 1, connect: { token: target.connectToken, name: 'bench' } })}\n${JSON.stringify(
          {
            id: 2,
            subscribe: { channel: target.channel, token: target.subscribeToken },
          },
        )}`,
      );
    });
    ws.on('message', (raw) => {
      const now = Date.now();
      for (const line of String(raw).split('\n')) {
        if (!line) continue;
        const reply = JSON.parse(line);
        if (reply.push?.disconnect || reply.push?.unsubscribe)
          outcome.lost ??= JSON.stringify(reply.push.disconnect ?? reply.push.unsubscribe);
        if (reply.id >= PUBLISH_ID) onPublishReply(ws, target, outcome, reply.error, onComplete);
        else if (reply.error) reject(new Error(`protocol error ${JSON.stringify(reply.error)}`));
        else if (reply.id === 2) resolve(ws);
        else if (!reply.id && !reply.push) ws.send('{}');
        else if (reply.push?.pub?.data?.message_snapshot?.role === 'digital_employee') {
          outcome.arrivals.push(now);
          if (reply.push.pub.data.operation === 'complete') {
            outcome.completedAt = now;
            const blocks = reply.push.pub.data.message_snapshot.blocks as { type: string; code?: string }[];
            outcome.errorCode = blocks.find((b) => b.type === 'error')?.code;
            onComplete();
          }
        }
      }
    });
  });
}

/** Command ids of the visitor's publishes: one per attempt, from here up. */
const PUBLISH_ID = 3;
/**
 * The SDK's retry of a temporarily refused publish (packages/webchat-sdk/src/outbox.ts): 1 s doubling to 15 s, for
 * 120 s.
 */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15_000;
const RETRY_WINDOW_MS = 120_000;
/**
 * `--no-retry`: the client as it was before it retried (a refused visitor waits for nothing), for comparison. Read
 * from the worker's data: a worker thread's `process.argv` holds none of the flags.
 */
const NO_RETRY = isMainThread
  ? process.argv.includes('--no-retry')
  : (workerData as { noRetry?: boolean }).noRetry === true;

/** Publishes the visitor's message (SendMessage), the same `client_message_id` on every attempt as the SDK does. */
function publishMessage(ws: WebSocket, target: Target, outcome: Outcome): void {
  target.clientMessageId ??= randomUUID();
  ws.send(
    JSON.stringify({
      id: PUBLISH_ID + outcome.attempts++,
      publish: {
        channel: target.channel,
        data: {
          version: 1,
          client_message_id: target.clientMessageId,
          blocks: [{ type: 'markdown', content: 'benchmark' }],
        },
      },
    }),
  );
}

/**
 * The reply to a publish. A refusal the protocol calls temporary (`temporary: true`, e.g. 503 while the store's pool
 * is full) is retried like the SDK does; any other refusal fails the message, as in the SDK, and ends the visitor's
 * wait (counted apart from completed replies).
 */
function onPublishReply(
  ws: WebSocket,
  target: Target,
  outcome: Outcome,
  error: { code?: number; temporary?: boolean } | undefined,
  onEnd: () => void,
): void {
  if (!error) {
    outcome.acknowledged = true;
    return;
  }
  outcome.refusals.push(error.code ?? 0);
  const temporary = error.temporary === true || error.code === undefined || error.code < 100;
  if (temporary && !NO_RETRY && Date.now() - outcome.sentAt < RETRY_WINDOW_MS) {
    const delay = Math.min(RETRY_FIRST_MS * 2 ** (outcome.refusals.length - 1), RETRY_MAX_MS);
    setTimeout(() => {
      if (ws.readyState === WebSocket.OPEN) publishMessage(ws, target, outcome);
    }, delay);
    return;
  }
  outcome.failed = true;
  onEnd();
}

/** The floor's client: every frame is one envelope of its reply. */
function connectToFloor(wsUrl: string, outcome: Outcome, onComplete: () => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    ws.on('error', reject);
    ws.on('open', () => resolve(ws));
    ws.on('message', (raw) => {
      const now = Date.now();
      outcome.arrivals.push(now);
      if (JSON.parse(String(raw)).operation === 'complete') {
        outcome.completedAt = now;
        onComplete();
      }
    });
  });
}

async function inBatches<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

const round = (n: number) => Math.round(n * 100) / 100;

if (isMainThread) await runServerSide();
else await runLoadSide(workerData as LoadData);
