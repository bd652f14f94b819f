import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Centrifuge } from 'centrifuge';
import { ConfigError } from '../config/errors.ts';
import type { Logger } from '../engine/logger.ts';
import { silentLogger } from '../engine/logger.ts';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  newClient,
  SECRET,
  startTestServer,
  subscriptionToken,
  waitForEvent,
} from '../testing/harness.ts';
import { loadCentrifugoConfig } from './config.ts';
import { runStandalone, type StandaloneServer } from './run.ts';

/** Centrifugo v6 configuration loading and the stand-alone server a stock `centrifuge` client connects to. */

const cleanups = closedAfterAll();

const CONFIG = {
  client: {
    token: { hmac_secret_key: SECRET },
    allowed_origins: ['http://localhost:3000'],
    ping_interval: '20s',
    pong_timeout: '5s',
    channel_limit: 64,
  },
  http_api: { key: 'standalone-key' },
  channel: {
    without_namespace: { allow_subscribe_for_client: true },
    namespaces: [
      {
        name: 'chat',
        history_size: 20,
        history_ttl: '300s',
        force_recovery: true,
        allow_publish_for_subscriber: true,
      },
    ],
  },
  engine: { type: 'memory' },
  http_server: { port: 8000 },
  log: { level: 'none' },
};

describe('loadCentrifugoConfig', () => {
  test('maps Centrifugo keys to engine options', () => {
    const settings = loadCentrifugoConfig(JSON.stringify(CONFIG));
    assert.deepEqual(settings.unknownKeys, []);
    assert.deepEqual(settings.options.token, { hmacSecretKeys: [SECRET] });
    assert.deepEqual(settings.options.allowedOrigins, ['http://localhost:3000']);
    assert.equal(settings.options.pingIntervalMs, 20_000);
    assert.equal(settings.options.pongTimeoutMs, 5_000);
    assert.equal(settings.options.channelLimit, 64);
    assert.equal(settings.options.apiKey, 'standalone-key');
    assert.deepEqual(settings.options.namespaces, [
      {
        name: 'chat',
        history_size: 20,
        history_ttl: 300_000,
        force_recovery: true,
        allow_publish_for_subscriber: true,
      },
    ]);
    assert.deepEqual(settings.engine, { type: 'memory' });
    assert.deepEqual(settings.httpServer, { port: 8000, address: '' });
  });

  test('reports every key it does not implement, at any depth', () => {
    const settings = loadCentrifugoConfig({
      ...CONFIG,
      prometheus: { enabled: true, instrument_http_handlers: true },
      client: {
        ...CONFIG.client,
        subscription_token: { enabled: true },
        token: { ...CONFIG.client.token, jwks_public_endpoint: 'x' },
      },
      channel: {
        ...CONFIG.channel,
        namespaces: [{ name: 'chat', history_size: 5, history_ttl: '1m', allow_tags_filter: true }],
      },
      engine: { type: 'redis', redis: { address: '127.0.0.1:6379', io_timeout: '1s' } },
    });
    assert.deepEqual(settings.unknownKeys.sort(), [
      'channel.namespaces[0].allow_tags_filter',
      'client.subscription_token',
      'client.token.jwks_public_endpoint',
      'engine.redis.io_timeout',
      'prometheus.instrument_http_handlers',
    ]);
    assert.deepEqual(settings.engine, { type: 'redis', redisUrl: 'redis://127.0.0.1:6379' });
  });

  test('numeric durations are nanoseconds like Go, with a warning; bad values are configuration errors', () => {
    const settings = loadCentrifugoConfig({ client: { ping_interval: 10_000_000_000 } });
    assert.equal(settings.options.pingIntervalMs, 10_000);
    assert.equal(settings.warnings.length, 1);
    assert.throws(() => loadCentrifugoConfig({ client: { ping_interval: '10 parsecs' } }), ConfigError);
    assert.throws(() => loadCentrifugoConfig({ engine: { type: 'nats' } }), ConfigError);
    assert.throws(() => loadCentrifugoConfig('{not json'), ConfigError);
  });
});

async function startStandalone(config: object): Promise<StandaloneServer> {
  const dir = await mkdtemp(join(tmpdir(), 'realtime-standalone-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify(config));
  const running = await runStandalone(path, { port: 0, address: '127.0.0.1', logger: silentLogger });
  cleanups.push(() => running.close());
  return running;
}

describe('runStandalone', () => {
  test('a centrifuge client connects, subscribes and receives an API publication', async () => {
    const running = await startStandalone(CONFIG);
    const wsUrl = `${running.url.replace('http', 'ws')}/connection/websocket`;
    const client = newClient(wsUrl, { token: connectionToken('standalone-user') });
    cleanups.push(() => client.disconnect());
    const sub = client.newSubscription('chat:s', {
      getToken: async () => subscriptionToken('standalone-user', 'chat:s'),
    });
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    const response = await fetch(`${running.url}/api/publish`, {
      method: 'POST',
      headers: { 'X-API-Key': 'standalone-key' },
      body: JSON.stringify({ channel: 'chat:s', data: { via: 'standalone' } }),
    });
    assert.deepEqual(((await response.json()) as { result: { offset: number } }).result.offset, 1);
    assert.deepEqual((await received).data, { via: 'standalone' });
    const health = await fetch(`${running.url}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  });

  test('client.insecure accepts connections without a token and grants channel permissions', async () => {
    const running = await startStandalone({ ...CONFIG, client: { insecure: true }, log: { level: 'none' } });
    const wsUrl = `${running.url.replace('http', 'ws')}/connection/websocket`;
    const client = newClient(wsUrl);
    cleanups.push(() => client.disconnect());
    const sub = client.newSubscription('chat:open');
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    const received = waitForEvent<{ data: unknown; info: { user: string } }>(sub, 'publication');
    await sub.publish({ anonymous: true });
    const pub = await received;
    assert.deepEqual(pub.data, { anonymous: true });
    assert.equal(pub.info.user, '');
  });

  test('engine.type redis: two stand-alone nodes share channels through Redis', async () => {
    const redisUrl = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const config = {
      ...CONFIG,
      engine: { type: 'redis', redis: { address: redisUrl, prefix: `test-${randomUUID()}` } },
    };
    const first = await startStandalone(config);
    const second = await startStandalone(config);
    const wsUrl = `${second.url.replace('http', 'ws')}/connection/websocket`;
    const client = newClient(wsUrl, { token: connectionToken('redis-user') });
    cleanups.push(() => client.disconnect());
    const sub = client.newSubscription('chat:r', {
      getToken: async () => subscriptionToken('redis-user', 'chat:r'),
    });
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    const response = await fetch(`${first.url}/api/publish`, {
      method: 'POST',
      headers: { Authorization: 'apikey standalone-key' },
      body: JSON.stringify({ channel: 'chat:r', data: { node: 'first' } }),
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
    assert.deepEqual((await received).data, { node: 'first' });
  });
});

/** A Centrifugo v6 config as a Centrifugo user has it: proxies, emulation, delta, a few keys this engine skips. */
const REAL_CONFIG_PATH = new URL('./testdata/centrifugo-v6.json', import.meta.url).pathname;

describe('a real Centrifugo v6 config file', () => {
  test('every implemented section is read; exactly the keys still ignored are named', () => {
    const settings = loadCentrifugoConfig(readFileSync(REAL_CONFIG_PATH, 'utf8'));
    assert.equal(settings.prometheus, true);
    assert.deepEqual(settings.unknownKeys.sort(), [
      'admin',
      'channel.namespaces[0].allow_tags_filter',
      'client.concurrency',
      'client.proxy.connect.emulated_headers',
      'client.proxy.connect.http.tls',
      'client.subscription_token',
      'rpc.ping',
      'swagger',
      'websocket.compression',
    ]);
    const { options } = settings;
    assert.equal(options.proxy?.connect?.endpoint, 'http://127.0.0.1:1/centrifugo/connect');
    assert.equal(options.proxy?.connect?.timeout, 1000);
    assert.deepEqual(options.proxy?.connect?.static_headers, { 'X-Source': 'centrifugo' });
    assert.equal(options.proxy?.refresh, undefined, 'a proxy with enabled: false is off');
    assert.equal(options.proxy?.publish?.status_to_code_transforms?.[0]?.to_error?.code, 1404);
    assert.equal(options.proxy?.named?.moderation?.timeout, 2000);
    assert.equal(options.proxy?.rpc_routing?.without_namespace?.proxy_enabled, true);
    assert.equal(options.httpStream, true);
    assert.equal(options.sse, true);
    assert.equal(options.connectionLimit, 50_000);
    assert.equal(options.apiTransportErrorMode, true);
    assert.equal(options.nodeName, 'realtime-1');
    const chat = options.namespaces?.find((n) => n.name === 'chat');
    assert.deepEqual(chat?.allowed_delta_types, ['fossil']);
    assert.equal(chat?.publish_proxy_name, 'moderation');
    assert.equal(chat?.publication_data_format, 'json', 'channel.publication_data_format is the default');
  });

  test('the server names each ignored key at start, one line each, and serves HTTP-streaming', async () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const record = (fields: Record<string, unknown>, message: string) => lines.push({ fields, message });
    const logger: Logger = { debug: () => {}, info: () => {}, warn: record, error: record };
    const config = JSON.parse(readFileSync(REAL_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
    // No proxy backend here: connections come with a token, which the connect proxy never sees.
    const running = await runStandalone(
      { config: JSON.stringify(config) },
      { port: 0, address: '127.0.0.1', logger },
    );
    cleanups.push(() => running.close());
    const ignored = lines.filter((l) => l.message === 'unknown or unsupported configuration key ignored');
    assert.deepEqual(ignored.map((l) => l.fields.key).sort(), running.settings.unknownKeys.sort());
    const client = new Centrifuge(
      [{ transport: 'http_stream', endpoint: `${running.url}/connection/http_stream` }],
      {
        token: connectionToken('standalone-stream'),
        emulationEndpoint: `${running.url}/emulation`,
      },
    );
    cleanups.push(() => client.disconnect());
    const connected = waitForEvent<{ transport: string }>(client, 'connected');
    client.connect();
    assert.equal((await connected).transport, 'http_stream');
  });
});

describe('command rate: none in the stand-alone mode unless configured (as Centrifugo OSS)', () => {
  /** 300 commands in one frame: over the engine's default bucket of 200, far under its flood close. */
  const BURST = Array.from({ length: 300 }, (_, i) => ({ id: i + 2, unsubscribe: { channel: `chat:${i}` } }));

  test('a stand-alone server answers a burst of 300 commands without a 111', async () => {
    assert.equal(loadCentrifugoConfig(CONFIG).options.commandRate, false);
    const running = await runStandalone({ config: CONFIG }, { port: 0, address: '127.0.0.1' });
    cleanups.push(() => running.close());
    const raw = await connectRawClient(
      `${running.url.replace('http', 'ws')}/connection/websocket`,
      connectionToken('burst'),
    );
    cleanups.push(() => raw.close());
    raw.send(...BURST);
    for (const { id } of BURST) assert.deepEqual((await raw.waitForReply(id)).unsubscribe, {});
  });

  test('an engine embedded with default options (the webchat) still limits each connection', async () => {
    const server = await startTestServer({ namespaces: [{ name: 'chat' }] });
    cleanups.push(() => server.close());
    const raw = await connectRawClient(server.wsUrl, connectionToken('burst'));
    cleanups.push(() => raw.close());
    // 250, not 300: the bucket holds 199–200 tokens by now (the connect took one; it refills 100/s), so 50–51 are
    // refused — with 300 it could be 101 in a row, and the engine closes such a flood (3013) before the last reply.
    const burst = BURST.slice(0, 250);
    raw.send(...burst);
    const last = await raw.waitForReply(burst.at(-1)!.id);
    assert.equal((last.error as { code: number } | undefined)?.code, 111);
  });
});
