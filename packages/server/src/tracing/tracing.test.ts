import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectToNewConversation,
  newVisitor,
  digitalEmployeeCompletes as replies,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { OtlpReceiver, type ReceivedSpan } from './testing/otlp-receiver.ts';

const SERVER = 2;
const CLIENT = 3;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

for (const database of TEST_DATABASES) {
  describe(`OpenTelemetry traces over OTLP/HTTP (${database})`, () => {
    let receiver: OtlpReceiver;
    let bot: TestBot;
    let server: TestServer;
    before(async () => {
      receiver = await OtlpReceiver.start();
      bot = await TestBot.start();
      server = await startTestServer({
        database,
        config: { otel: { endpoint: receiver.url, exportDelayMs: 50, serviceName: 'parley-test' } },
      });
    });
    after(async () => {
      await server.close();
      await bot.close();
      await receiver.close();
    });

    const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
    const waitForSpan = (what: string, match: (s: ReceivedSpan) => boolean) =>
      waitFor(what, () => receiver.spans.find(match));

    it('continues the caller’s traceparent in a server span named by the route template', async () => {
      const traceId = randomBytes(16).toString('hex');
      const parentId = randomBytes(8).toString('hex');
      const res = await fetch(`${server.baseUrl}/healthz`, {
        headers: { traceparent: `00-${traceId}-${parentId}-01` },
      });
      assert.equal(res.status, 200);
      const span = await waitForSpan('the request span', (s) => s.traceId === traceId);
      assert.equal(span.parentSpanId, parentId);
      assert.equal(span.name, 'GET /healthz');
      assert.equal(span.kind, SERVER);
      assert.equal(span.attributes['http.route'], '/healthz');
      assert.equal(Number(span.attributes['http.response.status_code']), 200);
      assert.equal(span.serviceName, 'parley-test');
      assert.ok(receiver.contentTypes.every((t) => t.startsWith('application/json')));
    });

    it('traces a token grant with its store queries inside the request span', async () => {
      const client = await createTestClient(server.ctx);
      const traceId = randomBytes(16).toString('hex');
      const res = await fetch(`${server.baseUrl}/platform/v1/auth/token/client-credentials`, {
        method: 'POST',
        headers: {
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      assert.equal(res.status, 200);
      const grant = await waitForSpan(
        'the grant span',
        (s) => s.traceId === traceId && s.name === 'oauth.token_grant',
      );
      const request = spansOf(traceId).find((s) => s.kind === SERVER)!;
      assert.equal(request.name, 'POST /platform/v1/auth/token/client-credentials');
      assert.equal(grant.parentSpanId, request.spanId);
      const queries = await waitFor('store query spans', () => {
        const found = spansOf(traceId).filter((s) => s.name === 'db.query');
        return found.length > 0 ? found : undefined;
      });
      for (const query of queries) {
        assert.equal(query.parentSpanId, grant.spanId);
        assert.equal(query.attributes['db.system.name'], database === 'postgres' ? 'postgresql' : 'sqlite');
        assert.match(String(query.attributes['db.query.text']), /select|insert|update/i);
        assert.ok(!String(query.attributes['db.query.text']).includes(client.secret));
      }
      const all = JSON.stringify(receiver.spans);
      assert.ok(!all.includes(client.secret), 'no secret in any span');
      assert.ok(
        !all.includes(await fetchToken(server, client).then((t) => t.slice(-20))),
        'no token in any span',
      );
    });

    it('follows a visitor publication to the reply and sends traceparent to the webhook responder', async () => {
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'webhook',
        bot.url,
        'whk_trace-key',
      );
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      bot.handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.end(`${JSON.stringify({ delta: 'Traced.' })}\n`);
      };
      const { c } = await connectToNewConversation(server, newVisitor(companyId));
      try {
        await sendMessage(c.sub, 'trace me');
        await c.log.waitFor((e) => replies(e).length === 1);
      } finally {
        c.close();
      }
      const sent = TRACEPARENT.exec(bot.requests.at(-1)!.traceparent ?? '');
      assert.ok(sent, `traceparent sent to the responder: ${bot.requests.at(-1)!.traceparent}`);
      const [, traceId, parentId] = sent;
      const outbound = await waitForSpan('the outbound span', (s) => s.spanId === parentId);
      assert.equal(outbound.traceId, traceId);
      assert.equal(outbound.kind, CLIENT);
      assert.equal(outbound.name, 'POST');
      assert.equal(outbound.attributes['server.address'], '127.0.0.1');
      assert.equal(Number(outbound.attributes['http.response.status_code']), 200);
      const reply = await waitForSpan('the reply span', (s) => s.spanId === outbound.parentSpanId);
      assert.equal(reply.name, 'webchat.reply');
      const publish = await waitForSpan('the publication span', (s) => s.name === 'realtime.publish');
      // One trace from the visitor's publication to the responder call: publish → reply → outbound POST.
      assert.equal(publish.kind, SERVER);
      assert.equal(reply.traceId, publish.traceId);
      assert.equal(reply.parentSpanId, publish.spanId);
    });
  });
}

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let bot: TestBot;
  let server: TestServer;
  before(async () => {
    bot = await TestBot.start();
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
    await bot.close();
  });

  it('sends no traceparent and installs nothing', async () => {
    assert.equal(server.ctx.tracing.enabled, false);
    const { companyId, employee } = await createCompanyWithConnector(
      server,
      'webhook',
      bot.url,
      'whk_untraced',
    );
    await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
    bot.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"delta":"x"}\n');
    const { c } = await connectToNewConversation(server, newVisitor(companyId));
    try {
      await sendMessage(c.sub, 'hello');
      await c.log.waitFor((e) => replies(e).length === 1);
    } finally {
      c.close();
    }
    assert.equal(bot.requests.at(-1)!.traceparent, undefined);
  });
});
