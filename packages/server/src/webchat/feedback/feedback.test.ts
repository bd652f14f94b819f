import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  bearer,
  connectVisitor,
  createConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';

const put = (server: TestServer, v: Visitor, path: string, body: unknown) =>
  http(`${server.baseUrl}/sdk/v1${path}`, {
    method: 'PUT',
    headers: { ...v.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

interface Snapshot {
  id: string;
  role: string;
  status: string;
  feedback?: { rating: string; comment: string | null };
}

for (const database of TEST_DATABASES) {
  describe(`message feedback and CSAT (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let token: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Feedback Co')).id;
      token = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
    });
    after(() => server.close());

    /** A conversation holding a greeting, a visitor message, its reply, then an agent message and its notice. */
    async function ratedWorld() {
      const v = newVisitor(companyId);
      const conversation = await createConversation(server, v);
      const live = await connectVisitor(server, v, conversation);
      try {
        await sendMessage(live.sub, 'hello');
        await live.log.waitFor((es) => digitalEmployeeCompletes(es).length > 0);
      } finally {
        live.close();
      }
      const posted = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token, { blocks: [{ type: 'markdown', content: 'Agent here.' }], author: { name: 'Kim' } }),
      );
      assert.equal(posted.status, 201);
      const messages: Snapshot[] = (await listMessages(server, v, conversation.id)).body.messages;
      const of = (role: string) => messages.filter((m) => m.role === role);
      return { v, conversation, messages, of };
    }

    it('rates digital-employee and agent messages; reads then show the rating; rating again replaces it', async () => {
      const { v, conversation, of } = await ratedWorld();
      const reply = of('digital_employee').at(-1)!;
      const path = `/conversations/${conversation.id}/messages/${reply.id}/feedback`;
      const res = await put(server, v, path, { rating: 'up', comment: '  Spot on!  ' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['comment', 'message_id', 'rating', 'updated_at']);
      assert.equal(res.body.message_id, reply.id);
      assert.equal(res.body.rating, 'up');
      assert.equal(res.body.comment, 'Spot on!');
      assert.ok(!Number.isNaN(Date.parse(res.body.updated_at)));

      const changed = await put(server, v, path, { rating: 'down' });
      assert.equal(changed.status, 200);
      assert.deepEqual([changed.body.rating, changed.body.comment], ['down', null]);
      const agent = of('agent')[0]!;
      assert.equal(
        (
          await put(server, v, `/conversations/${conversation.id}/messages/${agent.id}/feedback`, {
            rating: 'up',
          })
        ).status,
        200,
      );

      const read: Snapshot[] = (await listMessages(server, v, conversation.id)).body.messages;
      assert.deepEqual(read.find((m) => m.id === reply.id)!.feedback, { rating: 'down', comment: null });
      assert.deepEqual(read.find((m) => m.id === agent.id)!.feedback, { rating: 'up', comment: null });
      assert.equal(read.find((m) => m.role === 'user')!.feedback, undefined, 'unrated messages carry none');
      // Agents see the same on the platform API.
      const platform = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token),
      );
      assert.deepEqual(platform.body.messages.find((m: Snapshot) => m.id === reply.id).feedback, {
        rating: 'down',
        comment: null,
      });
    });

    it('refuses feedback on user and system messages (409), unknown messages and other visitors’ conversations (404)', async () => {
      const { v, conversation, of } = await ratedWorld();
      for (const role of ['user', 'system']) {
        const message = of(role)[0]!;
        const res = await put(
          server,
          v,
          `/conversations/${conversation.id}/messages/${message.id}/feedback`,
          {
            rating: 'up',
          },
        );
        assert.equal(res.status, 409, role);
        assert.equal(res.body.code, 'feedback_not_allowed');
      }
      for (const messageId of [randomUUID(), 'not-a-uuid']) {
        const res = await put(server, v, `/conversations/${conversation.id}/messages/${messageId}/feedback`, {
          rating: 'up',
        });
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'message_not_found');
      }
      // A message of another conversation of the same visitor is not this conversation's.
      const second = await createConversation(server, v);
      const greeting = of('digital_employee')[0]!;
      const cross = await put(server, v, `/conversations/${second.id}/messages/${greeting.id}/feedback`, {
        rating: 'up',
      });
      assert.equal(cross.body.code, 'message_not_found');
      const stranger = newVisitor(companyId);
      const res = await put(
        server,
        stranger,
        `/conversations/${conversation.id}/messages/${greeting.id}/feedback`,
        {
          rating: 'up',
        },
      );
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'conversation_not_found');
    });

    it('validates the bodies: rating, score, comment length and unknown fields', async () => {
      const { v, conversation, of } = await ratedWorld();
      const path = `/conversations/${conversation.id}/messages/${of('agent')[0]!.id}/feedback`;
      for (const body of [
        {},
        { rating: 'meh' },
        { rating: 'up', comment: 'x'.repeat(2001) },
        { rating: 'up', extra: true },
        { rating: 'up', comment: 5 },
      ]) {
        const res = await put(server, v, path, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'validation_failed');
      }
      const csat = `/conversations/${conversation.id}/csat`;
      for (const body of [
        {},
        { score: 0 },
        { score: 6 },
        { score: 4.5 },
        { score: '5' },
        { score: 5, x: 1 },
      ]) {
        const res = await put(server, v, csat, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'validation_failed');
      }
    });

    it('takes CSAT only once the conversation is closed, and lets the visitor change it', async () => {
      const v = newVisitor(companyId);
      const conversation = await createConversation(server, v);
      const path = `/conversations/${conversation.id}/csat`;
      const early = await put(server, v, path, { score: 5 });
      assert.equal(early.status, 409);
      assert.equal(early.body.code, 'conversation_open');

      const closed = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/close`,
        bearer(token, {}),
      );
      assert.equal(closed.status, 200);
      assert.equal(closed.body.status, 'closed');
      const res = await put(server, v, path, { score: 4, comment: 'Quick and kind' });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['comment', 'conversation_id', 'score', 'updated_at']);
      assert.deepEqual(
        [res.body.conversation_id, res.body.score, res.body.comment],
        [conversation.id, 4, 'Quick and kind'],
      );
      const again = await put(server, v, path, { score: 5, comment: null });
      assert.deepEqual([again.body.score, again.body.comment], [5, null]);
      const listed = await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}`, {
        headers: v.headers,
      });
      assert.deepEqual(listed.body.csat, { score: 5, comment: null });
      const stranger = await put(server, newVisitor(companyId), path, { score: 1 });
      assert.equal(stranger.status, 404);
    });

    it('sums up per digital employee: share of thumbs up and CSAT average', async () => {
      const company = await server.ctx.companies.create('Stats Co');
      const employee = await server.ctx.digitalEmployees.getDefault(company.id);
      const platform = await fetchPlatformToken(server, company.id, ['conversations:write']);
      const ratings: Array<['up' | 'down', number]> = [
        ['up', 5],
        ['up', 4],
        ['down', 2],
      ];
      for (const [rating, score] of ratings) {
        const v = newVisitor(company.id);
        const conversation = await createConversation(server, v);
        const greeting = (await listMessages(server, v, conversation.id)).body.messages[0];
        await put(server, v, `/conversations/${conversation.id}/messages/${greeting.id}/feedback`, {
          rating,
        });
        await http(
          `${server.baseUrl}/platform/v1/conversations/${conversation.id}/close`,
          bearer(platform, {}),
        );
        await put(server, v, `/conversations/${conversation.id}/csat`, { score });
      }
      const stats = (await server.ctx.webchat.feedback.statsByEmployee(company.id)).get(employee.id)!;
      assert.deepEqual(stats, {
        digital_employee_id: employee.id,
        thumbs_up: 2,
        thumbs_down: 1,
        thumbs_up_share: 2 / 3,
        csat_count: 3,
        csat_average: 11 / 3,
      });
    });
  });
}
