/**
 * Streaming benchmark: N concurrent conversations, each streaming a builtin digital employee's reply to a
 * subscribed client. Reports envelopes/s, time to first envelope and the p99 gap between envelopes of one reply.
 *
 *   npm run bench -- webchat                      (1,000 conversations)
 *   node --import tsx bench/webchat/streaming.bench.ts --conversations=200 --words=40 --word-delay=20
 *
 * The server runs on the main thread; the load side runs in a worker thread (so each has an event loop of its own)
 * with raw `ws` clients speaking the Centrifugo JSON protocol — the `centrifuge` client is heavier than needed at
 * 1,000 connections. Both share this machine's cores, so the figures are a lower bound for a dedicated node.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

const GOAL = '1,000 concurrent streaming conversations on one node with p99 inter-envelope gap < 100 ms';

interface Target {
  channel: string;
  connectToken: string;
  subscribeToken: string;
}

interface Outcome {
  sentAt: number;
  /** Arrival times of the reply's envelopes (digital employee only). */
  arrivals: number[];
  completedAt: number;
}

function arg(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
}

async function runServerSide(): Promise<void> {
  const conversations = arg('conversations', 1000);
  const words = arg('words', 40);
  const wordDelayMs = arg('word-delay', 20);
  const timeoutMs = arg('timeout-s', 300) * 1000;
  const { startTestServer } = await import('../../packages/server/src/testing/test-server.ts');
  const server = await startTestServer({
    config: {
      logLevel: 'warn',
      webchat: {
        conversationsPerMinutePerSession: 1_000_000,
        conversationsPerMinutePerIp: 1_000_000,
        messagesPerMinutePerSession: 1_000_000,
        messagesPerMinutePerIp: 1_000_000,
        ...(process.argv.some((a) => a.startsWith('--persist-ms='))
          ? { streamPersistIntervalMs: arg('persist-ms', 1000) }
          : {}),
      },
    },
  });
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
    const t0 = Date.now();
    const targets = await inBatches(conversations, 50, () => setUpConversation(server.baseUrl, company.id));
    console.log(`created ${targets.length} conversations with tokens in ${Date.now() - t0} ms`);

    // Worker threads do not inherit tsx's loader hooks: register them first, then load this file as the worker.
    const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: {
        wsUrl: `${server.baseUrl.replace('http', 'ws')}/connection/websocket`,
        targets,
        timeoutMs,
      },
    });
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    const result = await new Promise<{ outcomes: Outcome[]; start: number; timedOut: boolean }>(
      (resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (message: { type: string } & Record<string, unknown>) => {
          if (message.type === 'subscribed') {
            console.log(`subscribed ${targets.length} clients in ${message.ms} ms; streaming…`);
            loopDelay.enable();
            worker.postMessage('go');
          } else if (message.type === 'done') resolve(message as never);
        });
      },
    );
    loopDelay.disable();
    await worker.terminate();
    report(result, { conversations, words, wordDelayMs, timeoutMs, loopDelay });
  } finally {
    await server.close();
  }
}

function report(
  result: { outcomes: Outcome[]; start: number; timedOut: boolean },
  o: {
    conversations: number;
    words: number;
    wordDelayMs: number;
    timeoutMs: number;
    loopDelay: ReturnType<typeof monitorEventLoopDelay>;
  },
): void {
  const complete = result.outcomes.filter((x) => x.completedAt > 0);
  if (result.timedOut)
    console.error(
      `timed out after ${o.timeoutMs / 1000} s: ${complete.length}/${o.conversations} replies complete`,
    );
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
  const p99Gap = percentile(gaps, 99);
  console.log(
    JSON.stringify(
      {
        conversations: o.conversations,
        completed: complete.length,
        words_per_reply: o.words,
        word_delay_ms: o.wordDelayMs,
        streaming_s: round(seconds),
        envelopes,
        envelopes_per_s: Math.round(envelopes / seconds),
        envelopes_per_reply: round(envelopes / o.conversations),
        first_envelope_ms: {
          p50: percentile(firsts, 50),
          p99: percentile(firsts, 99),
          max: Math.max(...firsts),
        },
        inter_envelope_gap_ms: {
          p50: percentile(gaps, 50),
          p99: p99Gap,
          max: Math.max(...gaps),
          p99_during_start_burst: percentile(gapsInBurst, 99),
        },
        start_burst_ms: burstEnd - result.start,
        server_event_loop_delay_ms: {
          p50: round(o.loopDelay.percentile(50) / 1e6),
          p99: round(o.loopDelay.percentile(99) / 1e6),
        },
        cpu_cores: availableParallelism(),
        load_average_1m: round(loadavg()[0]!),
      },
      null,
      2,
    ),
  );
  const met = !result.timedOut && o.conversations >= 1000 && p99Gap < 100;
  console.log(`goal: ${GOAL}`);
  console.log(
    `result: ${complete.length}/${o.conversations} conversations streamed, p99 gap ${p99Gap} ms → ${met ? 'MET' : 'NOT MET'}`,
  );
}

async function setUpConversation(baseUrl: string, companyId: string): Promise<Target> {
  const headers = {
    'content-type': 'application/json',
    'x-session-id': randomUUID(),
    'x-company': companyId,
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${baseUrl}/sdk/v1${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const conversation = await post('/conversations', {});
  const connect = await post('/auth/connect-token', {});
  const subscribe = await post('/auth/subscribe-token', { conversation_id: conversation.id });
  return {
    channel: conversation.channel!,
    connectToken: connect.connection_token!,
    subscribeToken: subscribe.subscription_token!,
  };
}

/** The worker: connects every client, waits for "go", publishes one SendMessage each and times the replies. */
async function runLoadSide(data: { wsUrl: string; targets: Target[]; timeoutMs: number }): Promise<void> {
  const t0 = Date.now();
  const outcomes: Outcome[] = data.targets.map(() => ({ sentAt: 0, arrivals: [], completedAt: 0 }));
  let completed = 0;
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const sockets = await inBatches(data.targets.length, 50, (i) =>
    connectAndSubscribe(data.wsUrl, data.targets[i]!, outcomes[i]!, () => {
      if (++completed === data.targets.length) finish();
    }),
  );
  parentPort!.postMessage({ type: 'subscribed', ms: Date.now() - t0 });
  await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));
  const start = Date.now();
  sockets.forEach((ws, i) => {
    outcomes[i]!.sentAt = Date.now();
    ws.send(
      JSON.stringify({
        id: 3,
        publish: {
          channel: data.targets[i]!.channel,
          data: {
            version: 1,
            client_message_id: randomUUID(),
            blocks: [{ type: 'markdown', content: 'benchmark' }],
          },
        },
      }),
    );
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    allDone.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), data.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  for (const ws of sockets) ws.terminate();
  parentPort!.postMessage({ type: 'done', outcomes, start, timedOut });
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
        if (reply.error) reject(new Error(`protocol error ${JSON.stringify(reply.error)}`));
        else if (reply.id === 2) resolve(ws);
        else if (!reply.id && !reply.push) ws.send('{}');
        else if (reply.push?.pub?.data?.message_snapshot?.role === 'digital_employee') {
          outcome.arrivals.push(now);
          if (reply.push.pub.data.operation === 'complete') {
            outcome.completedAt = now;
            onComplete();
          }
        }
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

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number) => Math.round(n * 100) / 100;

if (isMainThread) await runServerSide();
else await runLoadSide(workerData as { wsUrl: string; targets: Target[]; timeoutMs: number });
