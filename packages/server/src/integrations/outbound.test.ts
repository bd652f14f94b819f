import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  checkConnector,
  createTenant,
  type KeyRecorder,
  startKeyRecorder,
  testKey,
} from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import OpenAI from 'openai';
import { DestinationPolicy } from './address-policy.ts';
import { OutboundError } from './connectors.errors.ts';
import { joinUrl } from './outbound.ts';
import { OutboundHttp } from './outbound-http.ts';

const CLI = { actor: 'cli' };

describe('outbound HTTP client', () => {
  let recorder: KeyRecorder;
  let elsewhere: KeyRecorder;
  let client: OutboundHttp;
  let blocking: OutboundHttp;
  before(async () => {
    recorder = await startKeyRecorder();
    elsewhere = await startKeyRecorder();
    client = new OutboundHttp({
      destinations: new DestinationPolicy({ blockPrivate: false }),
      timeoutMs: 5_000,
      maxRedirects: 3,
    });
    blocking = new OutboundHttp({
      destinations: new DestinationPolicy({ blockPrivate: true }),
      timeoutMs: 5_000,
      maxRedirects: 3,
    });
  });
  after(async () => {
    client.close();
    blocking.close();
    await recorder.close();
    await elsewhere.close();
  });

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  it('follows same-origin redirects with the key, and refuses one to another origin without sending it there', async () => {
    const key = testKey('redirect');
    const same = await client.fetch(`${recorder.url}/redirect?to=/landed&status=307`, { headers: auth(key) });
    assert.equal(same.status, 200);
    assert.deepEqual(
      recorder.calls.slice(-2).map((c) => [c.path, c.authorization]),
      [
        ['/redirect?to=/landed&status=307', `Bearer ${key}`],
        ['/landed', `Bearer ${key}`],
      ],
    );

    const away = `${recorder.url}/redirect?to=${encodeURIComponent(`${elsewhere.url}/stolen`)}`;
    await assert.rejects(client.fetch(away, { headers: auth(key) }), (err: Error) => {
      assert.ok(err instanceof OutboundError);
      assert.equal(err.code, 'connector_redirect_refused');
      assert.ok(!err.message.includes(key));
      return true;
    });
    assert.equal(elsewhere.calls.length, 0, 'the other origin never saw a request');

    // A 303 after a POST is repeated as a GET without the body.
    await client.fetch(`${recorder.url}/redirect?to=/after-post&status=303`, {
      method: 'POST',
      headers: auth(key),
      body: 'payload',
    });
    assert.deepEqual(
      [recorder.calls.at(-1)!.method, recorder.calls.at(-1)!.path, recorder.calls.at(-1)!.body],
      ['GET', '/after-post', ''],
    );
  });

  it("honours redirect: 'error' and 'manual', and stops a redirect loop", async () => {
    await assert.rejects(client.fetch(`${recorder.url}/redirect?to=/x`, { redirect: 'error' }), {
      code: 'connector_redirect_refused',
    });
    const manual = await client.fetch(`${recorder.url}/redirect?to=/x`, { redirect: 'manual' });
    assert.equal(manual.status, 302);
    assert.equal(manual.headers.get('location'), '/x');
    // Five nested same-origin redirects: more than maxRedirects (3).
    let chain = '/end';
    for (let i = 0; i < 5; i++) chain = `/redirect?to=${encodeURIComponent(chain)}`;
    await assert.rejects(client.fetch(`${recorder.url}${chain}`), { code: 'connector_redirect_refused' });
  });

  it('times out a silent server, and reports an unreachable one, without the key in the error', async () => {
    const key = testKey('timeout');
    const started = Date.now();
    await assert.rejects(
      client.fetch(`${recorder.url}/hang`, { headers: auth(key), timeoutMs: 200 }),
      (err: Error) => {
        assert.ok(err instanceof OutboundError);
        assert.equal(err.code, 'connector_timeout');
        assert.ok(!JSON.stringify({ ...err, message: err.message, stack: err.stack }).includes(key));
        return true;
      },
    );
    assert.ok(Date.now() - started < 4_000);

    const down = await startKeyRecorder();
    await down.close();
    await assert.rejects(client.fetch(`${down.url}/x`, { headers: auth(key) }), (err: Error) => {
      assert.ok(err instanceof OutboundError);
      assert.equal(err.code, 'connector_unreachable');
      assert.match(err.message, /ECONNREFUSED/);
      assert.equal(err.cause, undefined);
      assert.ok(!String(err.stack).includes(key));
      return true;
    });
  });

  it('reports a request Node refuses to build as connector_url_invalid, naming neither header nor value', async () => {
    // A control character passes `Headers` but not node:http's own header check.
    const value = `${testKey('unbuildable')}\u0001`;
    const before = recorder.calls.length;
    await assert.rejects(
      client.fetch(`${recorder.url}/x`, { headers: { 'x-custom': value } }),
      (err: Error) => {
        assert.ok(err instanceof OutboundError);
        assert.equal(err.code, 'connector_url_invalid');
        assert.ok(!String(err.stack).includes(value.slice(0, -1)));
        assert.ok(!err.message.includes('x-custom'));
        return true;
      },
    );
    assert.equal(recorder.calls.length, before, 'nothing was sent');
  });

  it('ends a call when the caller aborts it', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    await assert.rejects(
      client.fetch(`${recorder.url}/hang`, { signal: controller.signal }),
      /caller gave up/,
    );
  });

  it('streams response bodies as they arrive', async () => {
    const response = await client.fetch(`${recorder.url}/ndjson`);
    assert.equal(response.headers.get('content-type'), 'application/x-ndjson');
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) chunks.push(decoder.decode(chunk));
    assert.equal(chunks.join(''), '{"delta":"part1"}\n{"delta":"part2"}\n{"delta":"part3"}\n');
    assert.ok(chunks.length >= 2, 'more than one chunk: the body was not buffered');
  });

  it('with blockPrivate, refuses loopback by IP literal, by name (every resolved address) and IPv4-mapped IPv6', async () => {
    const port = new URL(recorder.url).port;
    const before = recorder.calls.length;
    for (const url of [
      `http://127.0.0.1:${port}/a`,
      `http://localhost:${port}/b`,
      `http://[::1]:${port}/c`,
      `http://[::ffff:127.0.0.1]:${port}/d`,
      `http://0.0.0.0:${port}/e`,
    ]) {
      await assert.rejects(
        blocking.fetch(url, { headers: auth(testKey()) }),
        { code: 'connector_destination_blocked' },
        url,
      );
    }
    assert.equal(recorder.calls.length, before, 'no blocked destination received a request');
    assert.equal(
      (await client.fetch(`http://localhost:${port}/allowed`)).status,
      200,
      'allowed when the switch is off',
    );
  });
});

describe('outbound connector client', () => {
  let server: TestServer;
  let recorder: KeyRecorder;
  let companyId: string;
  before(async () => {
    server = await startTestServer({ config: { logLevel: 'debug' } });
    recorder = await startKeyRecorder();
    companyId = (await server.ctx.companies.create('Outbound Co')).id;
  });
  after(async () => {
    await server.close();
    await recorder.close();
  });

  it('joins paths onto the connector URL and refuses paths that leave it', () => {
    assert.equal(
      joinUrl('https://h.example/v1', 'chat/completions').href,
      'https://h.example/v1/chat/completions',
    );
    assert.equal(
      joinUrl('https://h.example/v1/', '/models?limit=2').href,
      'https://h.example/v1/models?limit=2',
    );
    assert.equal(joinUrl('https://h.example/hook', '').href, 'https://h.example/hook');
    for (const bad of ['https://evil.example/x', '//evil.example/x', 'javascript:alert(1)']) {
      assert.throws(() => joinUrl('https://h.example/v1', bad), { code: 'connector_url_invalid' }, bad);
    }
  });

  it('connectorFetch sends the current key as bearer (replacing any caller Authorization) to URL + path', async () => {
    const key = testKey('fetch');
    const c = await server.ctx.connectors.create(
      { companyId, name: 'f', type: 'webhook', url: `${recorder.url}/base/`, apiKey: key },
      CLI,
    );
    const res = await server.ctx.connectorCaller.connectorFetch(companyId, c.id, 'sub/path?x=1', {
      method: 'POST',
      headers: { authorization: 'Bearer caller-supplied', 'content-type': 'application/json' },
      body: '{"hello":1}',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
    const call = recorder.calls.at(-1)!;
    assert.deepEqual(
      [call.method, call.path, call.authorization, call.body],
      ['POST', '/base/sub/path?x=1', `Bearer ${key}`, '{"hello":1}'],
    );

    // The port the digital employees use (companyId, connectorId, path, init) is the same call.
    await server.ctx.connectorCaller.fetch(companyId, c.id, '', { method: 'GET' });
    assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${key}`);

    const before = recorder.calls.length;
    await assert.rejects(
      server.ctx.connectorCaller.connectorFetch(companyId, c.id, 'https://evil.example/'),
      {
        code: 'connector_url_invalid',
      },
    );
    const unset = await server.ctx.connectors.create(
      { companyId, name: 'u', type: 'webhook', url: recorder.url },
      CLI,
    );
    await assert.rejects(server.ctx.connectorCaller.connectorFetch(companyId, unset.id, ''), {
      code: 'connector_key_not_set',
      status: 409,
    });
    assert.equal(recorder.calls.length, before);
    assert.ok(!server.logs.some((l) => l.includes(key)), 'the debug log of the call holds no key');
    assert.ok(server.logs.some((l) => l.includes('calling connector')));
  });

  it('resolveConnectorCredentials serves the OpenAI SDK, whose calls go through the outbound fetch with the current key', async () => {
    const key = testKey('openai');
    const c = await server.ctx.connectors.create(
      { companyId, name: 'llm', type: 'openai', url: `${recorder.url}/v1`, apiKey: key },
      CLI,
    );
    const credentials = await server.ctx.connectorCaller.resolveConnectorCredentials(companyId, c.id);
    assert.equal(credentials.baseUrl, `${recorder.url}/v1`);
    assert.equal(credentials.keyVersion, 1);
    const sdk = new OpenAI({
      apiKey: credentials.apiKey,
      baseURL: credentials.baseUrl,
      fetch: credentials.fetch,
      maxRetries: 0,
    });
    const models = await sdk.models.list();
    assert.equal(models.data[0]!.id, 'm1');
    const call = recorder.calls.at(-1)!;
    assert.deepEqual([call.method, call.path, call.authorization], ['GET', '/v1/models', `Bearer ${key}`]);

    const rotated = testKey('openai2');
    await server.ctx.connectors.rotateKey({ companyId, connectorId: c.id, apiKey: rotated }, CLI);
    const next = await server.ctx.connectorCaller.credentials(companyId, c.id);
    assert.equal(next.apiKey, rotated, 'read at call time: the rotation is seen at once');
  });
});

describe('a server whose public URL is https (production) refuses private destinations by default', () => {
  let server: TestServer;
  let recorder: KeyRecorder;
  before(async () => {
    const publicUrl = 'https://parley.example';
    // PARLEY_OUTBOUND_BLOCK_PRIVATE is not set: the https public URL alone turns blocking on.
    server = await startTestServer({ config: { publicUrl, oauth: { audience: publicUrl } } });
    recorder = await startKeyRecorder();
  });
  after(async () => {
    await server.close();
    await recorder.close();
  });

  it('makes the check report connector_destination_blocked for loopback targets, sending nothing', async () => {
    assert.equal(server.config.integrations.outboundBlockPrivate, true);
    const tenant = await createTenant(server);
    const port = new URL(recorder.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/x`,
      `http://localhost:${port}/y`,
      `http://[::1]:${port}/z`,
    ]) {
      const c = await server.ctx.connectors.create(
        { companyId: tenant.companyId, name: url, type: 'webhook', url, apiKey: testKey() },
        CLI,
      );
      const res = await checkConnector(server, tenant.auth, c.id);
      assert.equal(res.status, 200);
      assert.deepEqual(
        [res.body.ok, res.body.status, res.body.error],
        [false, 0, 'connector_destination_blocked'],
        url,
      );
    }
    assert.equal(recorder.calls.length, 0);
  });
});
