import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { type PortalWorld, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import {
  bearer,
  connectToNewConversation,
  createConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { OUTCOME_QUERIES } from './outcomes.ts';

const DOC = new URL('../../../../docs/outcomes.md', import.meta.url);

const put = (server: TestServer, v: Visitor, path: string, body: unknown) =>
  http(`${server.baseUrl}/sdk/v1${path}`, {
    method: 'PUT',
    headers: { ...v.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('docs/outcomes.md', () => {
  it('prints every query the routes run, word for word', () => {
    const doc = readFileSync(DOC, 'utf8');
    for (const [name, text] of Object.entries(OUTCOME_QUERIES)) {
      assert.ok(doc.includes(`## ${name}\n`), `docs/outcomes.md has a section for ${name}`);
      assert.ok(
        doc.includes(`\`\`\`sql\n${text}\n\`\`\``),
        `docs/outcomes.md prints the ${name} query as run`,
      );
    }
  });
});

// Real conversations through the SDK, the realtime connection and the platform routes; the outcomes are then read
// through the portal and the platform routes, which must agree and count exactly.
for (const database of TEST_DATABASES) {
  describe(`outcomes per digital employee (${database})`, () => {
    let world: PortalWorld;
    let server: TestServer;
    let employeeId: string;
    let platform: string;
    before(async () => {
      world = await startPortalWorld(database);
      server = world.server;
      employeeId = (await server.ctx.digitalEmployees.getDefault(world.acmeId)).id;
      platform = await fetchPlatformToken(server, world.acmeId, [
        'conversations:read',
        'conversations:write',
        'digital_employees:read',
      ]);
      await server.ctx.knowledge.create(
        world.acmeId,
        {
          kind: 'text',
          title: 'Returns and refunds',
          content: RETURNS_ARTICLE,
          url: 'https://help.example/returns',
        },
        { actor: 'test' },
      );
    });
    after(() => server.close());

    const platformPost = (path: string, body: unknown = {}) =>
      http(`${server.baseUrl}/platform/v1${path}`, bearer(platform, body));
    const greetingOf = async (v: Visitor, id: string) => (await listMessages(server, v, id)).body.messages[0];

    it('counts conversations, cited answers, hand-overs, resolutions, feedback and CSAT', async () => {
      const empty = await world.acme.get(`/digital-employees/${employeeId}/outcomes`);
      assert.equal(empty.status, 200);
      assert.equal(empty.body.conversations, 0);
      assert.equal(empty.body.csat_average, null);

      // A: answered from knowledge, closed by the employee's side with no person → resolved without a person.
      const a = newVisitor(world.acmeId);
      const { conversation: convA, c } = await connectToNewConversation(server, a);
      let answerId: string;
      try {
        await sendMessage(c.sub, 'How many days do I have to return a book?');
        const [answer] = await c.log
          .waitFor((e) => digitalEmployeeCompletes(e).length > 0)
          .then(digitalEmployeeCompletes);
        assert.deepEqual(
          answer!.message_snapshot.blocks.map((b) => b.type),
          ['markdown', 'sources'],
        );
        answerId = answer!.message_snapshot.id;
      } finally {
        c.close();
      }
      assert.equal(
        (await put(server, a, `/conversations/${convA.id}/messages/${answerId}/feedback`, { rating: 'up' }))
          .status,
        200,
      );
      assert.equal((await platformPost(`/conversations/${convA.id}/close`)).status, 200);
      assert.equal((await put(server, a, `/conversations/${convA.id}/csat`, { score: 5 })).status, 200);

      // B: handed over to a person who answers, then closed; its greeting got a thumbs down.
      const b = newVisitor(world.acmeId);
      const convB = await createConversation(server, b);
      const greetingB = await greetingOf(b, convB.id);
      await put(server, b, `/conversations/${convB.id}/messages/${greetingB.id}/feedback`, {
        rating: 'down',
      });
      assert.equal(
        (await platformPost(`/conversations/${convB.id}/handover`, { author: { name: 'Kim' } })).status,
        200,
      );
      const posted = await platformPost(`/conversations/${convB.id}/messages`, {
        blocks: [{ type: 'markdown', content: 'Kim here.' }],
        author: { name: 'Kim' },
      });
      assert.equal(posted.status, 201);
      assert.equal((await platformPost(`/conversations/${convB.id}/close`)).status, 200);
      assert.equal((await put(server, b, `/conversations/${convB.id}/csat`, { score: 2 })).status, 200);

      // C: still open, its greeting liked.
      const cv = newVisitor(world.acmeId);
      const convC = await createConversation(server, cv);
      const greetingC = await greetingOf(cv, convC.id);
      await put(server, cv, `/conversations/${convC.id}/messages/${greetingC.id}/feedback`, { rating: 'up' });

      // D: 40 days old (started before the window of 30 days, inside one of 60), closed without a person.
      const d = newVisitor(world.acmeId);
      const convD = await createConversation(server, d);
      assert.equal((await platformPost(`/conversations/${convD.id}/close`)).status, 200);
      await server.ctx.store.db
        .updateTable('conversations')
        .set({ created_at: new Date(Date.now() - 40 * 24 * 3600 * 1000).toISOString() })
        .where('id', '=', convD.id)
        .execute();

      // Another company's conversation never counts.
      await createConversation(server, newVisitor(world.globexId));

      const expected = {
        digital_employee_id: employeeId,
        days: 30,
        conversations: 3,
        replies: 4, // three greetings and the cited answer
        answered_from_knowledge: 1,
        handed_over: 1,
        resolved_without_person: 1,
        thumbs_up: 2,
        thumbs_down: 1,
        csat_count: 2,
        csat_average: 3.5,
      };
      const portal = await world.acme.get(`/digital-employees/${employeeId}/outcomes?days=30`);
      assert.equal(portal.status, 200, JSON.stringify(portal.body));
      const { since, ...portalRest } = portal.body;
      assert.match(since, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual(portalRest, expected);

      const viaPlatform = await http(
        `${server.baseUrl}/platform/v1/digital-employees/${employeeId}/outcomes`,
        bearer(platform),
      );
      assert.equal(viaPlatform.status, 200);
      const { since: _s, ...platformRest } = viaPlatform.body;
      assert.deepEqual(platformRest, expected, 'days defaults to 30 and both routes run the same queries');

      const wider = await world.acme.get(`/digital-employees/${employeeId}/outcomes?days=60`);
      assert.equal(wider.body.conversations, 4);
      assert.equal(wider.body.resolved_without_person, 2);
      assert.equal(wider.body.replies, 5);
    });

    it('refuses another tenant, unknown employees, bad windows and missing scopes', async () => {
      const other = await world.globex.get(`/digital-employees/${employeeId}/outcomes`);
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'digital_employee_not_found');
      const unknown = await world.acme.get('/digital-employees/nope/outcomes');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'digital_employee_not_found');
      for (const days of ['0', '366', 'week']) {
        const bad = await world.acme.get(`/digital-employees/${employeeId}/outcomes?days=${days}`);
        assert.equal(bad.status, 400, days);
        assert.equal(bad.body.code, 'validation_failed');
      }
      const globexToken = await fetchPlatformToken(server, world.globexId, ['digital_employees:read']);
      const foreign = await http(
        `${server.baseUrl}/platform/v1/digital-employees/${employeeId}/outcomes`,
        bearer(globexToken),
      );
      assert.equal(foreign.status, 404);
      const narrow = await fetchPlatformToken(server, world.acmeId, ['conversations:read']);
      const refused = await http(
        `${server.baseUrl}/platform/v1/digital-employees/${employeeId}/outcomes`,
        bearer(narrow),
      );
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'insufficient_scope');
    });
  });
}
