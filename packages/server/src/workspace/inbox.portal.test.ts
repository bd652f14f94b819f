import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  EnvelopeLog,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import type { MessageEnvelope } from '../webchat/messages/message.ts';

const markdown = (e: MessageEnvelope) =>
  e.message_snapshot.blocks.map((b) => ('content' in b ? b.content : '')).join('');

for (const database of TEST_DATABASES) {
  describe(`portal agent inbox (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let agent: PortalTestClient;
    let globex: PortalTestClient;
    let conversation: { id: string; channel: string };
    let guest: ConnectedVisitor;
    before(async () => {
      ({ server, acmeId, agent, globex } = await startPortalWorld(database, {
        agentEmail: 'kim@acme.test',
        config: { webchat: { streamFlushIntervalMs: 0 } },
      }));
      const v = newVisitor(acmeId);
      conversation = await createConversation(server, v);
      guest = await connectVisitor(server, v, conversation);
      await sendMessage(guest.sub, 'hello there');
      await guest.log.waitFor(
        (es) => es.some((e) => e.operation === 'complete' && e.message_snapshot.role === 'digital_employee'),
        20_000,
        'bot reply',
      );
    });
    after(async () => {
      guest?.close();
      await server.close();
    });

    it('lists the company’s conversations and shows a transcript to an agent', async () => {
      const list = await agent.get('/inbox/conversations?status=open');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((c: { id: string }) => c.id),
        [conversation.id],
      );
      assert.equal(list.body.items[0].handled_by, 'digital_employee');
      const detail = await agent.get(`/inbox/conversations/${conversation.id}`);
      const roles = detail.body.messages.map((m: { role: string }) => m.role);
      assert.ok(roles.includes('user') && roles.includes('digital_employee'), roles.join());
    });

    it('takes over, replies live to the visitor, and hands back to the digital employee', async () => {
      // The agent watches the conversation over the realtime engine with tokens from the portal.
      const tokens = await agent.post(`/inbox/conversations/${conversation.id}/realtime`);
      assert.equal(tokens.status, 200);
      const watcher = new Centrifuge(tokens.body.websocket_url, {
        websocket: WebSocket,
        token: tokens.body.connection_token,
        timeout: 10_000,
      });
      const watched = new EnvelopeLog();
      const sub = watcher.newSubscription(tokens.body.channel, { token: tokens.body.subscription_token });
      sub.on('publication', (ctx) => watched.push(ctx.data as MessageEnvelope));
      watcher.connect();
      sub.subscribe();
      try {
        await waitForSettled(sub.ready(), 15_000, 'agent subscribe');
        // The agent's browser cannot speak as the visitor.
        await assert.rejects(sendMessage(sub, 'spoofed'));

        const taken = await agent.post(`/inbox/conversations/${conversation.id}/handover`);
        assert.equal(taken.body.handled_by, 'agent');
        assert.equal(taken.body.agent_name, 'kim');
        const sent = await agent.post(`/inbox/conversations/${conversation.id}/messages`, {
          content: 'Hi, Kim here.',
        });
        assert.equal(sent.status, 201);
        assert.equal(sent.body.role, 'agent');
        assert.equal(sent.body.author.name, 'kim');
        for (const log of [guest.log, watched]) {
          await log.waitFor(
            (es) => es.some((e) => e.message_snapshot.role === 'agent' && markdown(e) === 'Hi, Kim here.'),
            15_000,
            'agent message',
          );
        }
        // While the agent handles it, the digital employee stays silent.
        const botRepliesBefore = guest.log.completed('digital_employee').length;
        await sendMessage(guest.sub, 'are you human?');
        const asked = (
          await watched.waitFor(
            (es) => es.some((e) => e.message_snapshot.role === 'user' && markdown(e) === 'are you human?'),
            15_000,
            'user message seen by agent',
          )
        ).find((e) => e.message_snapshot.role === 'user' && markdown(e) === 'are you human?')!;
        // A reply is queued in the same transaction as the message it answers
        // (webchat/conversations/conversation-engine.ts), so none queued now means none will come.
        const jobs = await server.ctx.store.db
          .selectFrom('reply_jobs')
          .select('message_id')
          .where('message_id', '=', asked.message_snapshot.id)
          .execute();
        assert.deepEqual(jobs, [], 'no reply queued while the agent handles the conversation');
        assert.equal(guest.log.completed('digital_employee').length, botRepliesBefore);

        const back = await agent.post(`/inbox/conversations/${conversation.id}/handback`);
        assert.equal(back.body.handled_by, 'digital_employee');
        await sendMessage(guest.sub, 'thanks');
        await guest.log.waitFor(
          (es) =>
            es.filter((e) => e.operation === 'complete' && e.message_snapshot.role === 'digital_employee')
              .length > botRepliesBefore,
          20_000,
          'bot answers again',
        );
        const types = (await server.ctx.audit.list({ subject: conversation.id })).map((e) => e.type);
        for (const t of [
          'conversation.handed_over',
          'conversation.agent_message_posted',
          'conversation.handed_back',
        ])
          assert.ok(types.includes(t), t);
      } finally {
        watcher.disconnect();
      }
    });

    it('validates replies and refuses forged ones', async () => {
      const empty = await agent.post(`/inbox/conversations/${conversation.id}/messages`, { content: '   ' });
      assert.equal(empty.status, 400);
      assert.equal(empty.body.errors[0].field, 'content');
      const forged = await agent.post(
        `/inbox/conversations/${conversation.id}/messages`,
        { content: 'forged' },
        { csrf: null },
      );
      assert.equal(forged.body.code, 'csrf_failed');
    });

    it('keeps other companies out', async () => {
      assert.equal((await globex.get('/inbox/conversations')).body.items.length, 0);
      for (const res of [
        await globex.get(`/inbox/conversations/${conversation.id}`),
        await globex.post(`/inbox/conversations/${conversation.id}/handover`),
        await globex.post(`/inbox/conversations/${conversation.id}/messages`, { content: 'intruder' }),
        await globex.post(`/inbox/conversations/${conversation.id}/realtime`),
      ]) {
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'conversation_not_found');
      }
      assert.equal(
        (
          await server.ctx.store.db
            .selectFrom('conversations')
            .select('handled_by')
            .where('id', '=', conversation.id)
            .executeTakeFirstOrThrow()
        ).handled_by,
        'digital_employee',
      );
    });
  });
}
