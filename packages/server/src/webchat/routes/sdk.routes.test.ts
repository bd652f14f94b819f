import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http, json } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { createConversation, newVisitor, sdkGet, sdkPost } from '@parley/testing/webchat/webchat-fixtures';
import { channelCommands } from '../channels.cli.ts';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
const [createChannel, listChannels] = channelCommands;

for (const database of TEST_DATABASES) {
  describe(`webchat SDK REST (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        database,
        config: { webchat: { conversationsPerMinutePerSession: 3, conversationsPerMinutePerIp: 1000 } },
      });
    });
    after(() => server.close());
    // What the channel commands use, as the CLI picks it (packages/server/src/cli/commands.ts).
    const channelDeps = () => ({
      channels: server.ctx.webchat.channels,
      identity: server.ctx.webchat.identity,
      audit: server.ctx.audit,
    });

    const newChannel = async (companyId: string, origins?: string) => {
      const employee = await server.ctx.digitalEmployees.getDefault(companyId);
      return createChannel!.run(
        {
          company: companyId,
          name: 'Shop widget',
          'digital-employee': employee.id,
          'allowed-origins': origins,
        },
        channelDeps(),
      ) as Promise<{
        id: string;
      }>;
    };

    it('creates a conversation routed to the default digital employee, greeting first', async () => {
      const company = await server.ctx.companies.create('Acme');
      const v = newVisitor(company.id);
      const res = await sdkPost(server, v, '/conversations');
      assert.equal(res.status, 201);
      const employee = await server.ctx.digitalEmployees.getDefault(company.id);
      assert.equal(res.body.digital_employee_id, employee.id);
      assert.equal(res.body.channel_id, null);
      assert.equal(res.body.status, 'open');
      assert.equal(res.body.channel, `messages:companies.${company.id}.conversations.${res.body.id}`);
      assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
      const messages = await sdkGet(server, v, `/conversations/${res.body.id}/messages`);
      assert.equal(messages.status, 200);
      assert.equal(messages.body.messages.length, 1);
      assert.equal(messages.body.messages[0].role, 'digital_employee');
      assert.equal(messages.body.messages[0].status, 'complete');
    });

    it('refuses missing or malformed session headers and unknown companies or channels with clear problems', async () => {
      const company = await server.ctx.companies.create('Headers Co');
      const other = await server.ctx.companies.create('Other Co');
      const otherChannel = await newChannel(other.id);
      const cases: Array<[Record<string, string>, number, string]> = [
        [{ 'x-company': company.id }, 400, 'missing_header'],
        [{ 'x-session-id': 'nope', 'x-company': company.id }, 400, 'invalid_header'],
        [{ 'x-session-id': randomUUID() }, 400, 'missing_header'],
        [{ 'x-session-id': randomUUID(), 'x-company': 'acme' }, 400, 'invalid_header'],
        [{ 'x-session-id': randomUUID(), 'x-company': randomUUID() }, 404, 'company_not_found'],
        [
          { 'x-session-id': randomUUID(), 'x-company': company.id, 'x-channel-id': 'x' },
          400,
          'invalid_header',
        ],
        [
          { 'x-session-id': randomUUID(), 'x-company': company.id, 'x-channel-id': otherChannel.id },
          404,
          'channel_not_found',
        ],
      ];
      for (const [headers, status, code] of cases) {
        for (const res of [
          await http(`${server.baseUrl}/sdk/v1/conversations`, json({}, headers)),
          await http(`${server.baseUrl}/sdk/v1/conversations`, { headers }),
          await http(`${server.baseUrl}/sdk/v1/auth/connect-token`, json({}, headers)),
        ]) {
          assert.equal(res.status, status, JSON.stringify(headers));
          assert.equal(res.body.code, code);
          assert.match(res.headers.get('content-type')!, /application\/problem\+json/);
        }
      }
      const v = newVisitor(company.id);
      // No body at all (a server-side SDK) is fine; a body that is not an object is not.
      assert.equal(
        (await http(`${server.baseUrl}/sdk/v1/conversations`, { method: 'POST', headers: v.headers })).status,
        201,
      );
      const notObject = await http(`${server.baseUrl}/sdk/v1/conversations`, json([], v.headers));
      assert.equal(notObject.status, 400);
      assert.equal(notObject.body.code, 'validation_failed');
      const bad = await sdkPost(server, v, '/auth/subscribe-token', { conversation_id: 'x' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'validation_failed');
      assert.equal((await sdkGet(server, v, '/conversations/not-a-uuid/messages')).status, 404);
      assert.equal(
        (await sdkGet(server, v, `/conversations/${randomUUID()}/messages?before=${randomUUID()}`)).status,
        404,
      );
    });

    it('issues connection and subscription tokens bound to the session and conversation', async () => {
      const company = await server.ctx.companies.create('Tokens Co');
      const v = newVisitor(company.id);
      const conversation = await createConversation(server, v);
      const connect = await sdkPost(server, v, '/auth/connect-token');
      assert.equal(connect.status, 200);
      assert.equal(connect.body.expires_in, 900);
      assert.equal(connect.headers.get('cache-control'), 'no-store');
      const cc = claimsOf(connect.body.connection_token);
      assert.equal(cc.sub, v.sessionId);
      assert.equal(cc.exp - cc.iat, 900);
      const sub = await sdkPost(server, v, '/auth/subscribe-token', { conversation_id: conversation.id });
      assert.equal(sub.status, 200);
      assert.equal(sub.body.expires_in, 86400);
      const sc = claimsOf(sub.body.subscription_token);
      assert.equal(sc.sub, v.sessionId);
      assert.equal(sc.channel, conversation.channel);
      assert.equal(sc.exp - sc.iat, 86400);
      const config = await sdkGet(server, v, '/config');
      assert.equal(config.body.realtime_url, server.baseUrl.replace('http', 'ws'));
    });

    it('with realtime_tokens: true, a new conversation carries both tokens; without, none', async () => {
      const company = await server.ctx.companies.create('One Call Co');
      const plain = await sdkPost(server, newVisitor(company.id), '/conversations', {});
      assert.equal(plain.status, 201);
      assert.equal(plain.body.realtime_tokens, undefined);
      assert.equal(plain.headers.get('cache-control'), null);
      const v = newVisitor(company.id);
      const res = await sdkPost(server, v, '/conversations', { realtime_tokens: true });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const { realtime_tokens: tokens, ...conversation } = res.body;
      assert.deepEqual(Object.keys(conversation).sort(), Object.keys(plain.body).sort());
      assert.equal(tokens.connection_expires_in, 900);
      assert.equal(tokens.subscription_expires_in, 86400);
      const cc = claimsOf(tokens.connection_token);
      assert.equal(cc.sub, v.sessionId);
      assert.equal(cc.exp - cc.iat, 900);
      const sc = claimsOf(tokens.subscription_token);
      assert.equal(sc.sub, v.sessionId);
      assert.equal(sc.channel, conversation.channel);
      assert.equal(sc.exp - sc.iat, 86400);
      // The separate calls still answer as before for the same conversation.
      const sub = await sdkPost(server, v, '/auth/subscribe-token', { conversation_id: conversation.id });
      assert.equal(sub.status, 200);
      assert.equal(claimsOf(sub.body.subscription_token).channel, conversation.channel);
    });

    it('limits conversations to those of the session and, with X-Channel-Id, of that channel', async () => {
      const company = await server.ctx.companies.create('Channels Co');
      const ch1 = await newChannel(company.id);
      const ch2 = await newChannel(company.id);
      const sessionId = randomUUID();
      const onCh1 = newVisitor(company.id, { sessionId, channelId: ch1.id });
      const onCh2 = newVisitor(company.id, { sessionId, channelId: ch2.id });
      const plain = newVisitor(company.id, { sessionId });
      const c1 = await createConversation(server, onCh1);
      const c2 = await createConversation(server, onCh2);
      assert.deepEqual(
        (await sdkGet(server, onCh1, '/conversations')).body.conversations.map((c: { id: string }) => c.id),
        [c1.id],
      );
      assert.deepEqual(
        (await sdkGet(server, onCh2, '/conversations')).body.conversations.map((c: { id: string }) => c.id),
        [c2.id],
      );
      assert.equal((await sdkGet(server, plain, '/conversations')).body.conversations.length, 2);
      assert.equal((await sdkGet(server, onCh2, `/conversations/${c1.id}/messages`)).status, 404);
      assert.equal(
        (await sdkPost(server, onCh2, '/auth/subscribe-token', { conversation_id: c1.id })).status,
        404,
      );
      const listed = (await listChannels!.run({ company: company.id }, channelDeps())) as {
        channels: Array<{ id: string }>;
      };
      assert.deepEqual(listed.channels.map((c) => c.id).sort(), [ch1.id, ch2.id].sort());
    });

    it("answers browsers only from the channel's or company's allowed origins, preflight included", async () => {
      const company = await server.ctx.companies.create('Cors Co');
      await server.ctx.companies.setAllowedOrigins(company.id, ['https://company.example']);
      const channel = await newChannel(company.id, 'https://shop.example https://m.shop.example');
      const preflight = await http(`${server.baseUrl}/sdk/v1/conversations`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-session-id, x-company, content-type',
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
      assert.match(preflight.headers.get('access-control-allow-headers')!, /X-Session-Id/);
      const evil = await http(`${server.baseUrl}/sdk/v1/conversations`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(evil.status, 403);
      assert.equal(evil.headers.get('access-control-allow-origin'), null);

      const onChannel = newVisitor(company.id, { channelId: channel.id, origin: 'https://shop.example' });
      const ok = await sdkPost(server, onChannel, '/conversations');
      assert.equal(ok.status, 201);
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.example');
      // The channel's list replaces the company's.
      const companyOriginOnChannel = newVisitor(company.id, {
        channelId: channel.id,
        origin: 'https://company.example',
      });
      const refused = await sdkPost(server, companyOriginOnChannel, '/conversations');
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'origin_not_allowed');
      assert.equal(refused.headers.get('access-control-allow-origin'), null);
      assert.equal(
        (
          await sdkPost(
            server,
            newVisitor(company.id, { origin: 'https://company.example' }),
            '/conversations',
          )
        ).status,
        201,
      );
      assert.equal(
        (
          await sdkPost(
            server,
            newVisitor(company.id, { origin: 'https://evil.example' }),
            '/auth/connect-token',
          )
        ).status,
        403,
      );
      // No Origin: a server-side SDK, allowed.
      assert.equal((await sdkPost(server, newVisitor(company.id), '/conversations')).status, 201);
    });

    it('lets a browser read an error when some company or channel admits its origin, and no other', async () => {
      const company = await server.ctx.companies.create('Cors Errors Co');
      await newChannel(company.id, 'https://errors.example');
      // A header the session resolution refuses: the browser on an admitted origin can read why.
      const badSession = (origin: string) =>
        http(`${server.baseUrl}/sdk/v1/conversations`, {
          method: 'POST',
          headers: { origin, 'x-session-id': 'not-a-uuid', 'x-company': company.id },
        });
      const known = await badSession('https://errors.example');
      assert.equal(known.status, 400);
      assert.equal(known.headers.get('access-control-allow-origin'), 'https://errors.example');
      const unknown = await badSession('https://nowhere.example');
      assert.equal(unknown.status, 400);
      assert.equal(unknown.headers.get('access-control-allow-origin'), null);
    });

    it('rate-limits conversation creation per session with 429 and Retry-After', async () => {
      const company = await server.ctx.companies.create('Limits Co');
      const v = newVisitor(company.id);
      for (let i = 0; i < 3; i++) assert.equal((await sdkPost(server, v, '/conversations')).status, 201);
      const limited = await sdkPost(server, v, '/conversations');
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      // Another session is not affected.
      assert.equal((await sdkPost(server, newVisitor(company.id), '/conversations')).status, 201);
    });
  });
}
