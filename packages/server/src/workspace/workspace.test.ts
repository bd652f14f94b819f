import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createIdentityChannel, signVisitorToken } from '@parley/testing/webchat/identity-fixtures';
import {
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { startWebhookSink, type WebhookSink, api as webhookApi } from '@parley/testing/webhooks/webhook-sink';
import { SnoozeWakeJob } from './snooze-wake.job.ts';

const HOUR = 3600_000;

// The agent workspace (docs/design.md "Agent workspace"): statuses, snooze, labels, visitor attributes, the
// portal inbox list and visitor panel, notes with mentions — on both stores.
for (const database of TEST_DATABASES) {
  describe(`agent workspace (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let agent: PortalTestClient;
    let globex: PortalTestClient;
    let sink: WebhookSink;
    let token: string;
    const platform = (path: string, method: string, body?: unknown) =>
      http(`${server.baseUrl}/platform/v1/conversations${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const audited = async (type: string, subject: string) =>
      (await server.ctx.audit.list({ companyId: acmeId, type, subject })).map((e) => ({
        actor: e.actor,
        details: e.details,
      }));

    before(async () => {
      ({ server, acmeId, acme, agent, globex } = await startPortalWorld(database, {
        agentEmail: 'kim@acme.test',
      }));
      sink = await startWebhookSink();
      token = await fetchPlatformToken(server, acmeId, [
        'conversations:read',
        'conversations:write',
        'webhooks:write',
      ]);
      const hook = await webhookApi(server, { authorization: `Bearer ${token}` }, 'POST', '', {
        url: sink.url,
        events: ['conversation.status_changed', 'conversation.labels_changed'],
      });
      assert.equal(hook.status, 201, hook.text);
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    it('pending reopens when the visitor writes; audited and sent to webhooks', async () => {
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const pending = await platform(`/${conversation.id}/status`, 'PUT', { status: 'pending' });
      assert.equal(pending.status, 200, pending.text);
      assert.deepEqual(pending.body, { id: conversation.id, status: 'pending', snoozed_until: null });
      const read = await platform(`/${conversation.id}`, 'GET');
      assert.equal(read.body.workspace_status, 'pending');
      assert.equal(read.body.status, 'open', 'the lifecycle status stays open');

      const guest = await connectVisitor(server, v, conversation);
      try {
        await sendMessage(guest.sub, 'any news?');
        await waitFor(
          'reopened by the visitor',
          async () => (await platform(`/${conversation.id}`, 'GET')).body.workspace_status === 'open',
          10_000,
        );
      } finally {
        guest.close();
      }
      const summary = await agent.post(`/inbox/conversations/${conversation.id}/summarise`);
      assert.equal(summary.status, 200, summary.text);
      assert.match(summary.body.summary, /^Visitor: any news\?/m);
      const audit = await audited('conversation.status_changed', conversation.id);
      assert.deepEqual(audit.map((e) => e.details.status).sort(), ['open', 'pending']);
      assert.ok(
        audit.some((e) => e.actor === 'visitor'),
        'reopened by the visitor',
      );
      assert.ok(
        audit.some((e) => String(e.actor).startsWith('client:')),
        'set by the API client',
      );
      await waitFor(
        'two status webhooks',
        () =>
          sink.events('conversation.status_changed').filter((e) => e.data.conversation_id === conversation.id)
            .length === 2,
        10_000,
      );
      const events = sink
        .events('conversation.status_changed')
        .filter((e) => e.data.conversation_id === conversation.id)
        .map((e) => `${e.data.previous_status}→${e.data.status}`);
      // Webhook deliveries run concurrently and are not ordered (docs/webhooks.md "Deliveries"); each change arrives once.
      assert.deepEqual(events.sort(), ['open→pending', 'pending→open']);
    });

    it('snoozes until a time and the wake-up job reopens it then (injected clock)', async () => {
      const conversation = await createConversation(server, newVisitor(acmeId));
      const until = new Date(Date.now() + 2 * HOUR).toISOString();
      const snoozed = await agent.put(`/inbox/conversations/${conversation.id}/status`, {
        status: 'snoozed',
        snoozed_until: until,
      });
      assert.equal(snoozed.status, 200, snoozed.text);
      assert.equal(snoozed.body.snoozed_until, until);
      const job = new SnoozeWakeJob(server.ctx.workspace.service);
      // An hour from now it still sleeps; three hours from now it is open again.
      await job.runBatch(Date.now() + HOUR);
      let detail = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.equal(detail.body.status, 'snoozed');
      assert.equal(detail.body.snoozed_until, until);
      await job.runBatch(Date.now() + 3 * HOUR);
      detail = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.equal(detail.body.status, 'open');
      assert.equal(detail.body.snoozed_until, null);
      const audit = await audited('conversation.status_changed', conversation.id);
      assert.deepEqual(
        audit.map((e) => [e.actor, e.details.status]),
        [
          ['jobs:snooze-wake', 'open'],
          [audit[1]!.actor, 'snoozed'],
        ],
      );
      assert.match(String(audit[1]!.actor), /^user:/);
    });

    it('refuses bad statuses with validation_failed, and closed conversations with 409', async () => {
      const conversation = await createConversation(server, newVisitor(acmeId));
      const cases: unknown[] = [
        { status: 'snoozed' },
        { status: 'snoozed', snoozed_until: new Date(Date.now() - HOUR).toISOString() },
        { status: 'snoozed', snoozed_until: 'tomorrow' },
        { status: 'pending', snoozed_until: new Date(Date.now() + HOUR).toISOString() },
        { status: 'resolved' },
        { status: 'open', extra: 1 },
      ];
      for (const body of cases) {
        const res = await platform(`/${conversation.id}/status`, 'PUT', body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.code, 'validation_failed');
      }
      await platform(`/${conversation.id}/close`, 'POST', {});
      const closed = await platform(`/${conversation.id}/status`, 'PUT', { status: 'pending' });
      assert.equal(closed.status, 409);
      assert.equal(closed.body.code, 'conversation_closed');
      const other = await globex.put(`/inbox/conversations/${conversation.id}/status`, { status: 'pending' });
      assert.equal(other.status, 404, 'another company sees no such conversation');
    });

    it('sets labels (trimmed, de-duplicated, limited), lists and filters by them', async () => {
      const conversation = await createConversation(server, newVisitor(acmeId));
      const set = await platform(`/${conversation.id}/labels`, 'PUT', {
        labels: [' vip ', 'billing', 'vip'],
      });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body, { id: conversation.id, labels: ['billing', 'vip'] });
      const tooMany = await platform(`/${conversation.id}/labels`, 'PUT', {
        labels: Array.from({ length: 21 }, (_, i) => `l${i}`),
      });
      assert.equal(tooMany.status, 400);
      assert.equal(tooMany.body.code, 'validation_failed');
      const tooLong = await agent.put(`/inbox/conversations/${conversation.id}/labels`, {
        labels: ['x'.repeat(51)],
      });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.code, 'validation_failed');
      const blank = await agent.put(`/inbox/conversations/${conversation.id}/labels`, { labels: ['   '] });
      assert.equal(blank.status, 400);

      const portal = await agent.put(`/inbox/conversations/${conversation.id}/labels`, { labels: ['vip'] });
      assert.deepEqual(portal.body.labels, ['vip']);
      const labels = await agent.get('/labels');
      assert.deepEqual(
        labels.body.labels.find((l: { label: string }) => l.label === 'vip'),
        { label: 'vip', conversations: 1 },
      );
      const listed = await agent.get('/inbox/conversations?label=vip');
      assert.deepEqual(
        listed.body.items.map((c: { id: string; labels: string[] }) => [c.id, c.labels]),
        [[conversation.id, ['vip']]],
      );
      assert.deepEqual((await agent.get('/inbox/conversations?label=billing')).body.items, []);
      assert.deepEqual((await platform(`/${conversation.id}`, 'GET')).body.labels, ['vip']);

      await waitFor(
        'two label webhooks',
        () =>
          sink.events('conversation.labels_changed').filter((e) => e.data.conversation_id === conversation.id)
            .length === 2,
        10_000,
      );
      const changes = sink
        .events('conversation.labels_changed')
        .filter((e) => e.data.conversation_id === conversation.id)
        .map((e) => e.data);
      // Deliveries are not ordered (docs/webhooks.md "Deliveries"): find the second change by what it did.
      assert.deepEqual(
        changes.find((c) => (c.removed as string[]).length > 0),
        { conversation_id: conversation.id, labels: ['vip'], added: [], removed: ['billing'] },
      );
      const audit = await audited('conversation.labels_changed', conversation.id);
      assert.equal(audit.length, 2);
    });

    it('keeps visitor attributes from the SDK and the visitor token, validated, and filters by them', async () => {
      const anonymous = newVisitor(acmeId);
      const created = await sdkPost(server, anonymous, '/conversations', {
        attributes: { plan: 'gold', orders: 3, vip: true },
        page_url: 'https://shop.example/checkout',
      });
      assert.equal(created.status, 201, created.text);
      const detail = await agent.get(`/inbox/conversations/${created.body.id}`);
      assert.equal(detail.status, 200, detail.text);
      assert.equal(detail.body.visitor.anonymous, true);
      assert.equal(detail.body.visitor.sub, null);
      assert.deepEqual(detail.body.visitor.attributes, { plan: 'gold', orders: 3, vip: true });
      assert.equal(detail.body.visitor.page_url, 'https://shop.example/checkout');
      assert.deepEqual(detail.body.visitor.previous_conversations, []);
      assert.deepEqual(detail.body.visitor.files, []);
      assert.equal(detail.body.summary, null);

      const gold = await agent.get('/inbox/conversations?attr.plan=gold&attr.vip=true');
      assert.deepEqual(
        gold.body.items.map((c: { id: string }) => c.id),
        [created.body.id],
      );
      assert.deepEqual((await agent.get('/inbox/conversations?attr.plan=silver')).body.items, []);

      for (const attributes of [
        Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
        { ['k'.repeat(65)]: 1 },
        { plan: 'x'.repeat(257) },
        { nested: { a: 1 } },
        ['a'],
      ]) {
        const refused = await sdkPost(server, newVisitor(acmeId), '/conversations', { attributes });
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.body.code, 'validation_failed');
      }

      const { channelId, secret } = await createIdentityChannel(server, acmeId, 'optional');
      const signed = await signVisitorToken(secret, 'user-42', {
        claims: { name: 'Ada', attributes: { plan: 'platinum', seats: 12 } },
      });
      const identified = newVisitor(acmeId, { channelId });
      identified.headers['x-visitor-token'] = signed;
      const mine = await sdkPost(server, identified, '/conversations', { attributes: { plan: 'free' } });
      assert.equal(mine.status, 201, mine.text);
      const read = await platform(`/${mine.body.id}`, 'GET');
      assert.deepEqual(read.body.visitor, {
        id: 'user-42',
        name: 'Ada',
        email: null,
        attributes: { plan: 'platinum', seats: 12 },
      });
      const panel = (await agent.get(`/inbox/conversations/${mine.body.id}`)).body.visitor;
      assert.equal(panel.sub, 'user-42');
      assert.equal(panel.anonymous, false);
      assert.equal(panel.channel.id, channelId);

      const badToken = await signVisitorToken(secret, 'user-43', {
        claims: { attributes: { plan: 'y'.repeat(300) } },
      });
      const refused = newVisitor(acmeId, { channelId });
      refused.headers['x-visitor-token'] = badToken;
      const answer = await sdkGet(server, refused, '/conversations');
      assert.ok(answer.status === 401 || answer.status === 400, answer.text);
      assert.doesNotMatch(answer.text, /yyyy/, 'the refusal never echoes a value');
    });

    it('lists by view with unread first, the assignee, and reassigns', async () => {
      const me = (await agent.get('/session')).body.user;
      const first = await createConversation(server, newVisitor(acmeId));
      const second = await createConversation(server, newVisitor(acmeId));
      const assigned = await agent.post(`/inbox/conversations/${first.id}/assign`, { user_id: me.id });
      assert.equal(assigned.status, 200, assigned.text);
      const mine = await agent.get('/inbox/conversations?view=mine');
      assert.deepEqual(
        mine.body.items.map((c: { id: string }) => c.id),
        [first.id],
      );
      assert.deepEqual(mine.body.items[0].assignee, { id: me.id, name: 'kim' });
      assert.equal(mine.body.items[0].unread, false);
      const unassigned = await agent.get('/inbox/conversations?view=unassigned&status=open');
      const ids = unassigned.body.items.map((c: { id: string }) => c.id);
      assert.ok(ids.includes(second.id) && !ids.includes(first.id), ids.join());

      // A visitor message makes a conversation unread: it comes first, whatever was active since.
      const v = newVisitor(acmeId);
      const third = await createConversation(server, v);
      const guest = await connectVisitor(server, v, third);
      try {
        await sendMessage(guest.sub, 'hello?');
      } finally {
        guest.close();
      }
      await agent.put(`/inbox/conversations/${second.id}/labels`, { labels: ['later'] });
      const all = await agent.get('/inbox/conversations?view=all&limit=2');
      assert.equal(all.body.items[0].id, third.id);
      assert.equal(all.body.items[0].unread, true);
      const next = await agent.get(`/inbox/conversations?view=all&limit=2&cursor=${all.body.next_cursor}`);
      const seen = [...all.body.items, ...next.body.items].map((c: { id: string }) => c.id);
      assert.equal(new Set(seen).size, seen.length, 'pages never repeat a conversation');
      const forged = await agent.get('/inbox/conversations?cursor=nonsense');
      assert.equal(forged.body.code, 'invalid_cursor');
    });

    it('posts notes with mentions that notify the agent mentioned; the visitor never sees them', async () => {
      const me = (await agent.get('/session')).body.user;
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const note = await acme.post(`/inbox/conversations/${conversation.id}/notes`, {
        text: '@kim please check the refund',
        mentions: [me.id],
      });
      assert.equal(note.status, 201, note.text);
      assert.equal(note.body.role, 'note');
      const notifications = await agent.get('/notifications');
      assert.equal(notifications.body.unread, 1);
      assert.equal(notifications.body.notifications[0].conversation_id, conversation.id);
      assert.equal(notifications.body.notifications[0].message_id, note.body.id);
      assert.equal(notifications.body.notifications[0].preview, '@kim please check the refund');
      assert.equal((await acme.get('/notifications')).body.unread, 0, 'the author is not notified');
      const transcript = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.ok(transcript.body.messages.some((m: { id: string }) => m.id === note.body.id));
      const sdk = await sdkGet(server, v, `/conversations/${conversation.id}/messages`);
      assert.ok(!sdk.text.includes('refund'), 'the visitor never reads a note');

      const stranger = await acme.post(`/inbox/conversations/${conversation.id}/notes`, {
        text: 'hi',
        mentions: ['00000000-0000-4000-8000-000000000000'],
      });
      assert.equal(stranger.status, 400, stranger.text);

      const read = await agent.post('/notifications/read', {});
      assert.equal(read.body.marked, 1);
      assert.equal((await agent.get('/notifications')).body.unread, 0);
    });
  });
}
