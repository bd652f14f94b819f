import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  listMessages,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { startWebhookSink, type WebhookSink, api as webhookApi } from '@parley/testing/webhooks/webhook-sink';
import { inboxChannelOf } from '@parley/webchat-protocol';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';

const NOTE = 'Customer is a reseller; check the contract before refunding (internal).';

// Notes (docs/design.md "Internal notes"): stored in the conversation, read by agents, never delivered to the
// visitor — not over REST, not live on the conversation channel, not in its history, not as `message.created`.
for (const database of TEST_DATABASES) {
  for (const redis of [false, true]) {
    describe(`internal notes (${database}, ${redis ? 'Redis' : 'in-memory'} broker)`, () => {
      let server: TestServer;
      let sink: WebhookSink;
      before(async () => {
        server = await startTestServer({ database, redis });
        sink = await startWebhookSink();
      });
      after(async () => {
        await server.close();
        await sink.close();
      });

      it('reach agents (platform read, inbox channel, note.created) and never the visitor', async () => {
        const company = await server.ctx.companies.create(`Notes ${randomUUID()}`);
        const agent = await server.ctx.users.create({
          companyId: company.id,
          email: `dana-${randomUUID()}@example.com`,
          password: 'correct horse battery staple',
          role: 'agent',
          name: 'Dana',
        });
        const token = await fetchPlatformToken(server, company.id, [
          'conversations:read',
          'conversations:write',
          'webhooks:write',
        ]);
        const hook = await webhookApi(server, { authorization: `Bearer ${token}` }, 'POST', '', {
          url: sink.url,
          events: ['message.created', 'note.created'],
        });
        assert.equal(hook.status, 201, hook.text);

        const v = newVisitor(company.id);
        const conversation = await createConversation(server, v);
        const live = await connectVisitor(server, v, conversation);
        const away = await connectVisitor(server, v, conversation);
        const inbox = await followInbox(server, company.id, agent.id);
        try {
          away.client.disconnect();
          const created = await http(
            `${server.baseUrl}/platform/v1/conversations/${conversation.id}/notes`,
            bearer(token, { text: NOTE, mentions: [agent.id], author: { name: 'Sam' } }),
          );
          assert.equal(created.status, 201, created.text);
          assert.equal(created.body.role, 'note');
          assert.equal(created.body.text, NOTE);
          assert.deepEqual(created.body.mentions, [agent.id]);
          assert.equal(created.body.author.type, 'agent');
          assert.equal(created.body.author.name, 'Sam');
          assert.ok(created.body.id && created.body.created_at);

          // Something the visitor does receive, after the note: once it has arrived, the note would have too.
          const post = await http(
            `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
            bearer(token, { blocks: [{ type: 'markdown', content: 'Hi, Sam here.' }] }),
          );
          assert.equal(post.status, 201, post.text);
          await live.log.waitFor((e) => e.some((x) => x.message_snapshot.id === post.body.id));

          const resubscribed = new Promise<{ recovered: boolean }>((resolve) =>
            away.sub.once('subscribed', resolve),
          );
          away.client.connect();
          assert.equal((await resubscribed).recovered, true, 'caught up from the channel history');
          await away.log.waitFor((e) => e.some((x) => x.message_snapshot.id === post.body.id));

          for (const [who, log] of [
            ['live', live.log],
            ['recovered', away.log],
          ] as const) {
            assert.ok(
              log.envelopes.every((e) => e.message_snapshot.role !== 'note'),
              `${who}: no note envelope`,
            );
            assert.ok(!JSON.stringify(log.envelopes).includes(NOTE), `${who}: the note's text never arrives`);
            assert.ok(!JSON.stringify(log.envelopes).includes(created.body.id), `${who}: nor its id`);
          }
          const subscribeData = JSON.stringify([live.subscribedData, away.subscribedData, live.readEvents]);
          assert.ok(
            !subscribeData.includes(created.body.id),
            'subscribe results and read events never name it',
          );

          const sdk = await listMessages(server, v, conversation.id, '?limit=200');
          assert.equal(sdk.status, 200);
          assert.ok(!sdk.text.includes(NOTE), 'SDK read leaves the note out');
          assert.ok(sdk.body.messages.every((m: { role: string }) => m.role !== 'note'));
          const cursorAtNote = await listMessages(server, v, conversation.id, `?before=${created.body.id}`);
          assert.equal(cursorAtNote.status, 400, 'a note is not a cursor the visitor can use');

          const platform = await http(
            `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
            bearer(token),
          );
          const roles = platform.body.messages.map((m: { role: string }) => m.role);
          const note = platform.body.messages.find((m: { role: string }) => m.role === 'note');
          assert.ok(note, `platform read shows the note (${roles})`);
          assert.equal(note.id, created.body.id);
          assert.equal(note.blocks[0].content, NOTE);
          assert.deepEqual(note.mentions, [agent.id]);
          assert.ok(
            roles.indexOf('note') < roles.lastIndexOf('agent'),
            'in the transcript where it was written, before the later agent message',
          );

          await waitFor('the note on the inbox channel', () => inbox.notes.length > 0);
          assert.equal(inbox.notes[0]!.note.id, created.body.id);

          await waitFor(
            'the webhook deliveries',
            () =>
              sink.events('note.created').length > 0 &&
              sink.events('message.created').some((e) => JSON.stringify(e.data).includes(post.body.id)),
          );
          const noteEvent = sink.events('note.created')[0]!;
          assert.equal((noteEvent.data.note as { id: string }).id, created.body.id);
          for (const e of sink.events('message.created')) {
            assert.notEqual((e.data.message as { role: string }).role, 'note');
            assert.ok(!JSON.stringify(e.data).includes(NOTE), 'message.created never carries a note');
          }
        } finally {
          live.close();
          away.close();
          inbox.close();
        }
      });

      it('refuses an empty text, a mention of someone outside the company and another company’s conversation', async () => {
        const company = await server.ctx.companies.create(`Notes ${randomUUID()}`);
        const other = await server.ctx.companies.create(`Other ${randomUUID()}`);
        const outsider = await server.ctx.users.create({
          companyId: other.id,
          email: `eve-${randomUUID()}@example.com`,
          password: 'correct horse battery staple',
          role: 'agent',
        });
        const token = await fetchPlatformToken(server, company.id, ['conversations:write']);
        const readOnly = await fetchPlatformToken(server, company.id, ['conversations:read']);
        const conversation = await createConversation(server, newVisitor(company.id));
        const foreign = await createConversation(server, newVisitor(other.id));
        const notes = (id: string) => `${server.baseUrl}/platform/v1/conversations/${id}/notes`;

        const empty = await http(notes(conversation.id), bearer(token, { text: '   ' }));
        assert.equal(empty.status, 400);
        assert.equal(empty.body.code, 'validation_failed');
        const stranger = await http(
          notes(conversation.id),
          bearer(token, { text: 'ping', mentions: [outsider.id] }),
        );
        assert.equal(stranger.status, 400);
        assert.equal(stranger.body.code, 'validation_failed');
        const elsewhere = await http(notes(foreign.id), bearer(token, { text: 'hello' }));
        assert.equal(elsewhere.status, 404);
        assert.equal(elsewhere.body.code, 'conversation_not_found');
        const scope = await http(notes(conversation.id), bearer(readOnly, { text: 'hello' }));
        assert.equal(scope.status, 403);
      });

      it('addNote from other code: a system note by the digital employee, visible to agents only', async () => {
        const company = await server.ctx.companies.create(`Notes ${randomUUID()}`);
        const v = newVisitor(company.id);
        const conversation = await createConversation(server, v);
        const view = await server.ctx.webchat.notes.addNote(company.id, conversation.id, {
          text: 'Summary: asked about shipping to Norway.',
          author: { type: 'digital_employee', id: 'de-1', name: 'Ava' },
        });
        assert.equal(view.author.type, 'digital_employee');
        const sdk = await listMessages(server, v, conversation.id);
        assert.ok(!sdk.text.includes('Norway'));
        const token = await fetchPlatformToken(server, company.id, ['conversations:read']);
        const platform = await http(
          `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
          bearer(token),
        );
        assert.ok(platform.text.includes('Norway'));
        assert.equal(
          platform.body.messages.find((m: { id: string }) => m.id === view.id).author.type,
          'digital_employee',
        );
      });
    });
  }
}

/** The company's inbox channel as the portal follows it (server-signed subscription, like the portal's grant). */
async function followInbox(server: TestServer, companyId: string, userId: string) {
  const signer = server.ctx.webchat.signer;
  const sub = `portal-user:${userId}`;
  const channel = inboxChannelOf(companyId);
  const client = new Centrifuge(`${server.baseUrl.replace('http', 'ws')}/connection/websocket`, {
    websocket: WebSocket,
    token: signer.connectionToken(sub, { company_id: companyId, channel_id: null }),
    timeout: 10_000,
  });
  const notes: Array<{ note: { id: string } }> = [];
  const subscription = client.newSubscription(channel, { token: signer.subscriptionToken(sub, channel) });
  subscription.on('publication', (ctx) => {
    if ((ctx.data as { event?: string }).event === 'note') notes.push(ctx.data as { note: { id: string } });
  });
  client.connect();
  subscription.subscribe();
  await subscription.ready(10_000);
  return { notes, close: () => client.disconnect() };
}
