/**
 * Streaming benchmark: N concurrent conversations, each streaming a builtin digital employee's reply to a
 * subscribed client. Reports envelopes/s, time to first envelope and the p99 gap between envelopes of one reply.
 *
 *   npm run bench -- webchat                      (1,000 conversations)
 *   node --import tsx bench/webchat/streaming.bench.ts --conversations=200 --words=40
 *
 * The load side uses raw `ws` clients speaking the Centrifugo JSON protocol (the `centrifuge` client is heavier
 * than needed at 1,000 connections). Server and clients share this process and the machine's cores, so the figures
 * are a lower bound for a dedicated node.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../../packages/server/src/testing/test-server.ts';

const GOAL = '1,000 concurrent streaming conversations on one node with p99 inter-envelope gap < 100 ms';

function arg(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
}

const CONVERSATIONS = arg('conversations', 1000);
const WORDS = arg('words', 40);
const WORD_DELAY_MS = arg('word-delay', 20);
const SETUP_CONCURRENCY = 50;
const TIMEOUT_MS = arg('timeout-s', 300) * 1000;

interface Probe {
  conversationId: string;
  channel: string;
  sessionId: string;
  connectToken: string;
  subscribeToken: string;
  ws?: WebSocket;
  sentAt: number;
  /** Arrival times of the reply's envelopes. */
  arrivals: number[];
  completedAt: number;
  done: () => void;
}

async function main(): Promise<void> {
  const server = await startTestServer({
    config: {
      logLevel: 'warn',
      webchat: {
        conversationsPerMinutePerSession: 1_000_000,
        conversationsPerMinutePerIp: 1_000_000,
        messagesPerMinutePerSession: 1_000_000,
        messagesPerMinutePerIp: 1_000_000,
      },
    },
  });
  try {
    const company = await server.ctx.companies.create('Bench Co');
    const employee = await server.ctx.digitalEmployees.create({
      companyId: company.id,
      name: 'Bench',
      responder: 'builtin',
      settings: {
        fallback: Array.from({ length: WORDS }, (_, i) => `word${i}`).join(' '),
        word_delay_ms: WORD_DELAY_MS,
        greeting: null,
      },
      isDefault: true,
    });
    void employee;

    const t0 = Date.now();
    const probes = await inBatches(CONVERSATIONS, SETUP_CONCURRENCY, () =>
      setUpConversation(server, company.id),
    );
    await inBatches(probes.length, SETUP_CONCURRENCY, (i) => connectAndSubscribe(server, probes[i]!));
    const setupMs = Date.now() - t0;
    console.log(`set up ${probes.length} conversations with subscribed clients in ${setupMs} ms`);

    // Event-loop delay during the streaming phase: high values mean the node (or this machine) is CPU-bound.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    // Everyone sends at once; each reply streams to its subscriber.
    const finished = Promise.all(probes.map((p) => new Promise<void>((resolve) => (p.done = resolve))));
    const start = Date.now();
    for (const p of probes) {
      p.sentAt = Date.now();
      p.ws!.send(
        JSON.stringify({
          id: 3,
          publish: {
            channel: p.channel,
            data: {
              version: 1,
              client_message_id: randomUUID(),
              blocks: [{ type: 'markdown', content: 'benchmark' }],
            },
          },
        }),
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    const complete = probes.filter((p) => p.completedAt > 0);
    if (timedOut) console.error(`timed out after ${TIMEOUT_MS / 1000} s: ${complete.length}/${probes.length} replies complete`);
    const end = complete.length > 0 ? Math.max(...complete.map((p) => p.completedAt)) : Date.now();

    const envelopes = probes.reduce((n, p) => n + p.arrivals.length, 0);
    const firsts = probes.filter((p) => p.arrivals.length > 0).map((p) => p.arrivals[0]! - p.sentAt);
    const gaps = probes.flatMap((p) => p.arrivals.slice(1).map((t, i) => t - p.arrivals[i]!));
    const durationS = (end - start) / 1000;
    const p99Gap = percentile(gaps, 99);
    console.log(
      JSON.stringify(
        {
          conversations: CONVERSATIONS,
          completed: complete.length,
          words_per_reply: WORDS,
          word_delay_ms: WORD_DELAY_MS,
          setup_ms: setupMs,
          streaming_s: round(durationS),
          envelopes,
          envelopes_per_s: Math.round(envelopes / durationS),
          envelopes_per_reply: round(envelopes / CONVERSATIONS),
          first_envelope_ms: {
            p50: percentile(firsts, 50),
            p99: percentile(firsts, 99),
            max: Math.max(...firsts),
          },
          inter_envelope_gap_ms: { p50: percentile(gaps, 50), p99: p99Gap, max: Math.max(...gaps) },
          event_loop_delay_ms: { p50: round(loopDelay.percentile(50) / 1e6), p99: round(loopDelay.percentile(99) / 1e6) },
          cpu_cores: availableParallelism(),
          load_average_1m: round(loadavg()[0]!),
        },
        null,
        2,
      ),
    );
    console.log(`goal: ${GOAL}`);
    console.log(
      `result: ${CONVERSATIONS} conversations, p99 gap ${p99Gap} ms → ${CONVERSATIONS >= 1000 && p99Gap < 100 ? 'MET' : 'NOT MET'}`,
    );
    for (const p of probes) p.ws?.close();
  } finally {
    await server.close();
  }
}

async function setUpConversation(server: TestServer, companyId: string): Promise<Probe> {
  const sessionId = randomUUID();
  const headers = { 'content-type': 'application/json', 'x-session-id': sessionId, 'x-company': companyId };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.baseUrl}/sdk/v1${path}`, {
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
    conversationId: conversation.id!,
    channel: conversation.channel!,
    sessionId,
    connectToken: connect.connection_token!,
    subscribeToken: subscribe.subscription_token!,
    sentAt: 0,
    arrivals: [],
    completedAt: 0,
    done: () => {},
  };
}

/** Centrifugo JSON protocol by hand: connect (id 1), subscribe (id 2), then pushes; pings `{}` are answered `{}`. */
function connectAndSubscribe(server: TestServer, probe: Probe): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.baseUrl.replace('http', 'ws')}/connection/websocket`);
    probe.ws = ws;
    ws.on('error', reject);
    ws.on('open', () => {
      ws.send(
        `${JSON.stringify({ id: 1, connect: { token: probe.connectToken, name: 'bench' } })}\n${JSON.stringify(
          {
            id: 2,
            subscribe: { channel: probe.channel, token: probe.subscribeToken },
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
        else if (reply.id === 2) resolve();
        else if (!reply.id && !reply.push) ws.send('{}');
        else if (reply.push?.pub) {
          const envelope = reply.push.pub.data;
          if (envelope.message_snapshot.role !== 'digital_employee') continue;
          probe.arrivals.push(now);
          if (envelope.operation === 'complete') {
            probe.completedAt = now;
            probe.done();
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

await main();
