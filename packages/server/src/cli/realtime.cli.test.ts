import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { signHmacJwt } from '@parley/realtime';
import { freePort, PARLEY_CLI } from '@parley/testing/process';
import { waitFor } from '@parley/testing/wait';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { parseExposition, sampleValue } from '../metrics/testing/exposition.ts';

describe('parley realtime --config (Centrifugo-compatible standalone mode)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rt-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('serves a Centrifugo v6 config to the official client and reports unknown keys', async () => {
    const port = await freePort();
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        client: { token: { hmac_secret_key: 'test-secret' }, allowed_origins: ['http://localhost'] },
        http_api: { key: 'api-key' },
        channel: {
          namespaces: [
            { name: 'chat', allow_publish_for_subscriber: true, allow_subscribe_for_client: true },
          ],
        },
        prometheus: { enabled: true },
        no_such_option: true,
      }),
    );
    const child = spawn(
      process.execPath,
      [...PARLEY_CLI, 'realtime', '--config', file, '--port', String(port)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    try {
      await waitFor(
        'the standalone engine to answer /health',
        async () => {
          assert.equal(child.exitCode, null, `standalone engine exited:\n${out}`);
          return fetch(`http://127.0.0.1:${port}/health`).then(
            (r) => r.ok,
            () => false,
          );
        },
        30_000,
        100,
      );
      const token = signHmacJwt({ sub: 'u1', exp: Math.floor(Date.now() / 1000) + 60 }, 'test-secret');
      const client = new Centrifuge(`ws://127.0.0.1:${port}/connection/websocket`, {
        websocket: WebSocket,
        token,
      });
      const received = new Promise<unknown>((resolve) => {
        const sub = client.newSubscription('chat:room');
        sub.on('publication', (ctx) => resolve(ctx.data));
        sub.on('subscribed', () => {
          void fetch(`http://127.0.0.1:${port}/api/publish`, {
            method: 'POST',
            headers: { 'x-api-key': 'api-key', 'content-type': 'application/json' },
            body: JSON.stringify({ channel: 'chat:room', data: { hello: 'world' } }),
          });
        });
        sub.subscribe();
      });
      client.connect();
      assert.deepEqual(await received, { hello: 'world' });
      // Centrifugo's own metric names (and Parley's) follow the connected client (prometheus.enabled).
      const scrape = async () =>
        parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
      const samples = await scrape();
      for (const name of [
        'centrifugo_node_num_clients',
        'centrifugo_node_num_users',
        'centrifugo_node_num_subscriptions',
        'centrifugo_node_num_channels',
        'parley_realtime_clients',
      ]) {
        assert.equal(sampleValue(samples, name), 1, name);
      }
      assert.equal(
        sampleValue(samples, 'centrifugo_transport_messages_received', {
          transport: 'websocket',
          frame_type: 'subscribe',
        }),
        1,
      );
      assert.equal(
        sampleValue(samples, 'centrifugo_client_command_duration_seconds_count', { method: 'connect' }),
        1,
      );
      assert.ok(
        sampleValue(samples, 'centrifugo_transport_messages_sent', {
          transport: 'websocket',
          frame_type: 'publication',
        })! >= 1,
      );
      assert.ok(sampleValue(samples, 'parley_process_cpu_seconds_total')! > 0);
      client.disconnect();
      await waitFor(
        'the client gone from centrifugo_node_num_clients',
        async () => sampleValue(await scrape(), 'centrifugo_node_num_clients') === 0,
      );
      assert.match(out, /no_such_option/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
