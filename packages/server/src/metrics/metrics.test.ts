import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { createTestClient, fetchToken, postToken } from '@parley/testing/oauth/oauth-fixtures';
import { freePort } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectToNewConversation,
  digitalEmployeeCompletes as deComplete,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { parseExposition, type Sample, sampleValue } from './testing/exposition.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

async function scrape(server: TestServer): Promise<Sample[]> {
  const res = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

for (const database of TEST_DATABASES) {
  describe(`GET /metrics behind PARLEY_METRICS_TOKEN (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database, config: { metrics: { token: TOKEN } } });
    });
    after(() => server.close());

    it('refuses a missing or wrong token with a 401 problem, in constant time, without leaking the token', async () => {
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`]) {
        const res = await http(
          `${server.baseUrl}/metrics`,
          authorization ? { headers: { authorization } } : {},
        );
        assert.equal(res.status, 401);
        assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
        assert.equal(res.body.code, 'metrics_token_invalid');
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="parley-metrics"');
        assert.ok(!res.text.includes(TOKEN));
      }
    });

    it('documents the protected route in the OpenAPI document under "operations"', async () => {
      const doc = (await http(`${server.baseUrl}/docs/json`)).body;
      assert.deepEqual(doc.paths['/metrics'].get.tags, ['operations']);
    });

    it('counts requests by route template and status, grants and refusals, store queries and process figures', async () => {
      const client = await createTestClient(server.ctx);
      await fetchToken(server, client);
      await fetchToken(server, client);
      assert.equal((await postToken(server, 'grant_type=password')).status, 400);
      assert.equal((await http(`${server.baseUrl}/platform/v1/conversations/${randomUUID()}`)).status, 401);
      const samples = await scrape(server);
      const route = '/platform/v1/auth/token/client-credentials';
      assert.equal(
        sampleValue(samples, 'parley_http_requests_total', { method: 'POST', route, status: '200' }),
        2,
      );
      assert.equal(
        sampleValue(samples, 'parley_http_requests_total', { method: 'POST', route, status: '400' }),
        1,
      );
      assert.equal(
        sampleValue(samples, 'parley_http_requests_total', {
          method: 'GET',
          route: '/platform/v1/conversations/:id',
          status: '401',
        }),
        1,
      );
      assert.equal(
        sampleValue(samples, 'parley_http_request_duration_seconds_count', { method: 'POST', route }),
        3,
      );
      assert.equal(sampleValue(samples, 'parley_oauth_token_grants_total'), 2);
      assert.equal(
        sampleValue(samples, 'parley_oauth_token_refusals_total', { reason: 'unsupported_grant_type' }),
        1,
      );
      assert.ok(sampleValue(samples, 'parley_store_query_duration_seconds_count', { outcome: 'ok' })! > 0);
      assert.ok(sampleValue(samples, 'parley_process_cpu_seconds_total')! > 0);
      assert.ok(sampleValue(samples, 'parley_nodejs_eventloop_lag_p99_seconds') !== undefined);
      assert.equal(sampleValue(samples, 'parley_webchat_queued_replies'), 0);
    });

    it('adds no series for 1,000 distinct ids and paths (route templates, one label for unmatched routes)', async () => {
      // Warm up every label combination the loop below produces, so only new ids or paths could add series.
      await http(`${server.baseUrl}/sdk/v1/conversations/${randomUUID()}`);
      await http(`${server.baseUrl}/no-such/${randomUUID()}`);
      await scrape(server);
      // Left out, as fixed sets whose series appear when each first occurs: Node's GC kinds (four), and the scheduled
      // jobs' runs (one per job and outcome; a job may first run in the middle of the loop).
      const seriesOf = (samples: Sample[]) =>
        samples
          .filter((s) => !s.name.startsWith('parley_nodejs_gc_') && !s.name.startsWith('parley_job_'))
          .map((s) => `${s.name}${JSON.stringify(s.labels)}`);
      const before = new Set(seriesOf(await scrape(server)));
      // 50 at a time: what counts is 1,000 distinct paths, not a burst (1,000 connections opened at once overflow
      // the accept queue of a busy machine and come back as ECONNRESET).
      const urls = Array.from({ length: 1000 }, (_, i) =>
        i % 2 ? `${server.baseUrl}/sdk/v1/conversations/${randomUUID()}` : `${server.baseUrl}/x/${i}`,
      );
      for (let i = 0; i < urls.length; i += 50)
        await Promise.all(urls.slice(i, i + 50).map((url) => http(url)));
      const samples = await scrape(server);
      assert.deepEqual(
        seriesOf(samples).filter((s) => !before.has(s)),
        [],
      );
      assert.ok(!samples.some((s) => /[0-9a-f]{8}-[0-9a-f]{4}/.test(JSON.stringify(s.labels))));
      assert.ok(
        sampleValue(samples, 'parley_http_requests_total', { route: '(unmatched)', status: '404' })! >= 500,
      );
    });

    it('follows realtime clients, commands and frames, and times replies and broker publications', async () => {
      const gauge = async () => sampleValue(await scrape(server), 'parley_realtime_clients');
      assert.equal(await gauge(), 0);
      const company = await server.ctx.companies.create('Metrics Co');
      const { c } = await connectToNewConversation(server, newVisitor(company.id));
      try {
        assert.equal(await gauge(), 1);
        await sendMessage(c.sub, 'Who are you?');
        await c.log.waitFor((e) => deComplete(e).length === 1);
        const samples = await waitFor('the reply counted', async () => {
          const s = await scrape(server);
          const completed = { outcome: 'completed' };
          return sampleValue(s, 'parley_webchat_reply_duration_seconds_count', completed) === 1
            ? s
            : undefined;
        });
        assert.equal(sampleValue(samples, 'parley_realtime_subscriptions'), 1);
        assert.equal(sampleValue(samples, 'parley_realtime_channels'), 1);
        assert.equal(
          sampleValue(samples, 'parley_realtime_messages_received_total', {
            transport: 'websocket',
            type: 'connect',
          }),
          1,
        );
        assert.equal(
          sampleValue(samples, 'parley_realtime_messages_received_total', {
            transport: 'websocket',
            type: 'publish',
          }),
          1,
        );
        assert.ok(
          sampleValue(samples, 'parley_realtime_messages_sent_total', {
            transport: 'websocket',
            type: 'publication',
          })! > 1,
        );
        assert.equal(
          sampleValue(samples, 'parley_realtime_command_duration_seconds_count', { method: 'subscribe' }),
          1,
        );
        assert.equal(sampleValue(samples, 'parley_webchat_reply_first_token_seconds_count'), 1);
        assert.ok(
          sampleValue(samples, 'parley_broker_publish_duration_seconds_count', { outcome: 'ok' })! > 1,
        );
      } finally {
        c.close();
      }
      await waitFor('the client gone from the gauge', async () => (await gauge()) === 0);
    });
  });
}

describe('GET /metrics on PARLEY_METRICS_PORT', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    port = await freePort();
    server = await startTestServer({ config: { metrics: { port, token: TOKEN } } });
  });
  after(() => server.close());

  it('serves the metrics on its own listener without a token, and not on the main port', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    const samples = parseExposition(await res.text());
    assert.equal(sampleValue(samples, 'parley_realtime_clients'), 0);
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
    const main = await http(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(main.status, 404);
    assert.equal(main.body.code, 'route_not_found');
  });
});

describe('GET /metrics with neither a port nor a token', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('does not exist (404)', async () => {
    const res = await http(`${server.baseUrl}/metrics`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'route_not_found');
  });
});
