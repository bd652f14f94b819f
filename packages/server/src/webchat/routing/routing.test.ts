import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { createUsers, type PortalTestClient, signInClient } from '@parley/testing/portal/portal-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  connectVisitor,
  createChannelWithEmployee,
  createConversation,
  fetchPlatformToken,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { runCli } from '../../cli/main.ts';

// Routing (docs/routing.md): request_human queues, round-robin among available agents under capacity, take,
// reassign, hand back, business hours, on both stores.
for (const database of TEST_DATABASES) {
  describe(`routing (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let admin: PortalTestClient;
    let ann: PortalTestClient;
    let bob: PortalTestClient;
    const ids: Record<string, string> = {};
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Routing Co')).id;
      await createUsers(server, companyId, {
        'admin@routing.test': 'admin',
        'ann@routing.test': 'agent',
        'bob@routing.test': 'agent',
      });
      [admin, ann, bob] = await Promise.all(
        ['admin', 'ann', 'bob'].map((n) => signInClient(server, `${n}@routing.test`)),
      );
      for (const a of (await admin.get('/inbox/agents')).body.agents) ids[a.name] = a.id;
    });
    after(() => server.close());

    const newQueued = async (): Promise<{ v: Visitor; id: string; body: Record<string, unknown> }> => {
      const v = newVisitor(companyId);
      const { id } = await createConversation(server, v);
      const res = await sdkPost(server, v, `/conversations/${id}/request-human`);
      assert.equal(res.status, 200, res.text);
      return { v, id, body: res.body };
    };
    const assigneeOf = async (id: string) =>
      (await admin.get(`/inbox/conversations/${id}`)).body.conversation.assignee_id;

    it('queues a request for a person while nobody is available, and the digital employee keeps the floor', async () => {
      const { v, id, body } = await newQueued();
      assert.ok(body.queued_at);
      assert.equal(body.handled_by, 'digital_employee');
      assert.deepEqual(body.business_hours, { open: true, next_open_at: null, time_zone: null });
      const again = await sdkPost(server, v, `/conversations/${id}/request-human`);
      assert.equal(again.body.queued_at, body.queued_at, 'asking twice keeps the place in the queue');
      const queue = await ann.get('/inbox/queue');
      assert.deepEqual(
        queue.body.items.map((c: { id: string }) => c.id),
        [id],
      );
      const messages = (await sdkGet(server, v, `/conversations/${id}/messages`)).body.messages;
      assert.match(messages.at(-1).blocks[0].content, /someone from our team will join shortly/);
      // Another visitor's conversation is not theirs to queue.
      const other = await sdkPost(server, newVisitor(companyId), `/conversations/${id}/request-human`);
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'conversation_not_found');
    });

    it('assigns round-robin across available agents, least recently assigned first, within capacity', async () => {
      const waiting = (await ann.get('/inbox/queue')).body.items[0].id;
      assert.equal((await admin.put('/company/routing', { agent_capacity: 2 })).status, 200);
      // Ann becomes available and gets what waited at once.
      const me = await ann.put('/inbox/availability', { availability: 'available' });
      assert.equal(me.status, 200);
      assert.equal(me.body.availability, 'available');
      assert.equal(await assigneeOf(waiting), ids.ann);
      assert.equal((await bob.put('/inbox/availability', { availability: 'available' })).status, 200);

      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { id, body } = await newQueued();
        assert.equal(body.handled_by, 'agent', 'assigned on the spot');
        assert.equal(body.queued_at, null);
        order.push((await assigneeOf(id)) === ids.ann ? 'ann' : 'bob');
      }
      // Bob had never been assigned, then Ann (least recent), then Bob; now both hold 2 = capacity.
      assert.deepEqual(order, ['bob', 'ann', 'bob']);
      const full = await newQueued();
      assert.equal(full.body.handled_by, 'digital_employee', 'everyone is at capacity: it waits');
      assert.ok(full.body.queued_at);

      const agents = (await admin.get('/inbox/agents')).body.agents;
      const load = Object.fromEntries(
        agents.map((a: { name: string; open_conversations: number }) => [a.name, a.open_conversations]),
      );
      assert.deepEqual(load, { admin: 0, ann: 2, bob: 2 });

      // Closing one of Bob's frees a place: the waiting conversation goes to him.
      const bobs = (await admin.get('/inbox/conversations?status=open')).body.items.find(
        (c: { assignee_id: string; id: string }) => c.assignee_id === ids.bob && c.id !== full.id,
      );
      assert.equal((await bob.post(`/inbox/conversations/${bobs.id}/close`, {})).status, 200);
      assert.equal(await assigneeOf(full.id), ids.bob);
      const transcript = (await sdkGet(server, full.v, `/conversations/${full.id}/messages`)).body.messages;
      assert.match(transcript.at(-1).blocks[0].content, /bob \(a human agent\) joined/);
    });

    it('never assigns one conversation twice when routing runs concurrently', async () => {
      await admin.put('/company/routing', { agent_capacity: 10 });
      const queued: string[] = [];
      await ann.put('/inbox/availability', { availability: 'away' });
      await bob.put('/inbox/availability', { availability: 'away' });
      for (let i = 0; i < 4; i++) queued.push((await newQueued()).id);
      await server.ctx.webchat.routing.setAvailability({ id: ids.ann!, companyId }, 'available');
      await server.ctx.webchat.routing.setAvailability({ id: ids.bob!, companyId }, 'available');
      const passes = await Promise.all(
        [1, 2, 3].map(() => server.ctx.webchat.commands.routeQueue(companyId)),
      );
      assert.equal(
        passes.reduce((a, b) => a + b, 0),
        4,
        `each assigned once: ${passes}`,
      );
      const audit = await server.ctx.audit.list({ companyId });
      for (const id of queued) {
        assert.equal(audit.filter((e) => e.subject === id && e.type === 'conversation.assigned').length, 1);
      }
    });

    it('lets an agent take, an admin reassign, and hands back to the digital employee', async () => {
      await ann.put('/inbox/availability', { availability: 'away' });
      await bob.put('/inbox/availability', { availability: 'away' });
      const { id } = await newQueued();
      const taken = await ann.post(`/inbox/conversations/${id}/take`, {});
      assert.equal(taken.status, 200);
      assert.equal(taken.body.assignee_id, ids.ann);
      assert.equal(taken.body.agent_name, 'ann');
      // Agents reassign as admins do (the workspace's one ownership action, docs/design.md "Agent workspace").
      const byAgent = await ann.post(`/inbox/conversations/${id}/assign`, { user_id: ids.bob });
      assert.equal(byAgent.status, 200, byAgent.text);
      assert.equal(byAgent.body.assignee_id, ids.bob);
      const toAnn = await admin.post(`/inbox/conversations/${id}/assign`, { user_id: ids.ann });
      assert.equal(toAnn.body.assignee_id, ids.ann);
      const moved = await admin.post(`/inbox/conversations/${id}/assign`, { user_id: ids.bob });
      assert.equal(moved.body.assignee_id, ids.bob);
      const stranger = await admin.post(`/inbox/conversations/${id}/assign`, { user_id: 'nobody' });
      assert.equal(stranger.status, 404);
      assert.equal(stranger.body.code, 'agent_not_found');
      const back = await bob.post(`/inbox/conversations/${id}/handback`, {});
      assert.equal(back.body.handled_by, 'digital_employee');
      assert.equal(back.body.assignee_id, null);
      const types = (await server.ctx.audit.list({ companyId, subject: id })).map((e) => e.type);
      for (const t of ['conversation.human_requested', 'conversation.assigned', 'conversation.handed_back'])
        assert.ok(types.includes(t), `${t} in ${types}`);
    });

    it('assigns over the platform API and the CLI', async () => {
      const token = await fetchPlatformToken(server, companyId, [
        'conversations:write',
        'conversations:read',
      ]);
      const { id } = await newQueued();
      const queue = await fetch(`${server.baseUrl}/platform/v1/conversations/queue`, bearer(token));
      assert.ok(
        ((await queue.json()) as { conversations: { id: string }[] }).conversations.some((c) => c.id === id),
      );
      const res = await fetch(
        `${server.baseUrl}/platform/v1/conversations/${id}/assign`,
        bearer(token, { user_id: ids.ann }),
      );
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { assignee_id: string }).assignee_id, ids.ann);

      if (database !== 'sqlite') return; // the CLI opens the same SQLite file; on PostgreSQL it needs the schema
      const lines: string[] = [];
      const code = await runCli(
        [
          'conversations',
          'assign',
          '--company',
          companyId,
          '--conversation',
          id,
          '--user',
          ids.bob!,
          '--json',
        ],
        (line) => lines.push(line),
        { env: { ...process.env, PARLEY_DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' } },
      );
      assert.equal(code, 0, lines.join('\n'));
      assert.equal(JSON.parse(lines.at(-1)!).assignee_id, ids.bob);
    });

    it('queues when a webhook bot answers with "handover": true (JSON and NDJSON)', async () => {
      const bot = await TestBot.start();
      try {
        const { companyId: botCompany, employee } = await createCompanyWithConnector(
          server,
          'webhook',
          bot.url,
          'k',
        );
        const channelId = await createChannelWithEmployee(server, botCompany, employee.id);
        for (const [type, body] of [
          ['application/json', '{"reply":"Let me find a colleague.","handover":true}'],
          ['application/x-ndjson', '{"delta":"Let me find "}\n{"delta":"a colleague."}\n{"handover":true}\n'],
        ] as const) {
          bot.handler = (_req, res) => res.writeHead(200, { 'content-type': type }).end(body);
          const v = newVisitor(botCompany, { channelId });
          const conversation = await createConversation(server, v);
          const guest = await connectVisitor(server, v, conversation);
          try {
            await sendMessage(guest.sub, 'I want a human');
            // The audit event is recorded after the notice: once it is there, so is everything before it.
            const requested = await waitFor(`${type}: human requested`, async () =>
              (await server.ctx.audit.list({ companyId: botCompany, subject: conversation.id })).find(
                (e) => e.type === 'conversation.human_requested',
              ),
            );
            assert.equal(requested.actor, `digital_employee:${employee.id}`);
            assert.ok((await server.ctx.webchat.conversations.find(conversation.id))?.queuedAt);
            const texts = (
              await sdkGet(server, v, `/conversations/${conversation.id}/messages`)
            ).body.messages.map((m: { blocks: { content?: string }[] }) =>
              m.blocks.map((b) => b.content ?? '').join(''),
            );
            assert.deepEqual(texts.slice(-2), [
              'Let me find a colleague.',
              'You asked for a person: someone from our team will join shortly.',
            ]);
          } finally {
            guest.close();
          }
        }
      } finally {
        await bot.close();
      }
    });

    it('outside business hours still queues, says when agents are back, and the SDK config tells the widget', async () => {
      const bad = await admin.put('/company/routing', {
        business_hours: {
          time_zone: 'Mars/Olympus',
          weekly: { mon: [{ from: '10:00', to: '09:00' }] },
          holidays: [],
        },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'invalid_business_hours');
      assert.deepEqual(
        bad.body.errors.map((e: { field: string }) => e.field),
        ['business_hours.time_zone', 'business_hours.weekly.mon[0]'],
      );
      // Open one minute a week, on a day that is not today: closed now.
      const tomorrow = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(new Date().getUTCDay() + 2) % 7]!;
      const set = await admin.put('/company/routing', {
        business_hours: {
          time_zone: 'UTC',
          weekly: { [tomorrow]: [{ from: '09:00', to: '09:01' }] },
          holidays: [],
        },
      });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.opening.open, false);
      const { v, id, body } = await newQueued();
      assert.ok(body.queued_at);
      assert.equal((body.business_hours as { open: boolean }).open, false);
      const config = await sdkGet(server, v, '/config');
      assert.equal(config.body.business_hours.open, false);
      assert.equal(new Date(config.body.business_hours.next_open_at).getUTCHours(), 9);
      const notice = (await sdkGet(server, v, `/conversations/${id}/messages`)).body.messages.at(-1);
      assert.match(notice.blocks[0].content, /away right now and back .*09:00/);
      await admin.put('/company/routing', { business_hours: null });
    });
  });
}
