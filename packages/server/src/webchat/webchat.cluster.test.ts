import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor, waitForSettled } from '@parley/testing/wait';
import { assertStreamedReply, markdownOf } from '@parley/testing/webchat/stream-assertions';
import {
  bearer,
  connectToNewConversation,
  connectVisitor,
  createCompanyWithSlowEmployee,
  digitalEmployeeCompletes as deComplete,
  fetchPlatformToken,
  listMessages,
  newCentrifugeClient,
  newVisitor,
  replyIsStreaming,
  sdkPost,
  sendMessage,
  slowEmployeeText,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from './messages/message.ts';

// The key flows on PostgreSQL + Redis, across two nodes sharing both.
describe('webchat on PostgreSQL + Redis, two nodes', () => {
  let nodeA: TestServer;
  let nodeB: TestServer;
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const shared = {
    webchat: { realtimeRedisPrefix: `${prefix}:rt` },
    rateLimit: { keyPrefix: `${prefix}:rl:` },
  };
  before(async () => {
    nodeA = await startTestServer({ database: 'postgres', redis: true, config: shared });
    nodeB = await startTestServer({ database: 'postgres', redis: true, config: shared, shareWith: nodeA });
  });
  after(async () => {
    await nodeB.close();
    await nodeA.close();
  });

  it('streams a reply published on node A to a tab on node B, and shows the user message there', async () => {
    const company = await nodeA.ctx.companies.create('Cluster Co');
    const v = newVisitor(company.id);
    const { conversation, c: tabA } = await connectToNewConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    try {
      await sendMessage(tabA.sub, 'Who are you?');
      await tabB.log.waitFor((e) => deComplete(e).length === 1);
      assert.equal(markdownOf(tabB.log.completed('user')[0]!), 'Who are you?');
      const replyId = deComplete(tabB.log.envelopes)[0]!.message_snapshot.id;
      assertStreamedReply(tabB.log.of(replyId));
    } finally {
      tabA.close();
      tabB.close();
    }
  });

  it('deduplicates a retry sent through the other node', async () => {
    const company = await nodeA.ctx.companies.create('Retry Cluster Co');
    const v = newVisitor(company.id);
    const { conversation, c: tabA } = await connectToNewConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    try {
      const id = randomUUID();
      await sendMessage(tabA.sub, 'thanks', id);
      await sendMessage(tabB.sub, 'thanks', id);
      await tabA.log.waitFor((e) => deComplete(e).length === 1);
      // A later message through the same node reaches tab A after any copy of the retry would have (one channel,
      // in order): then only the two distinct messages have been broadcast.
      await sendMessage(tabB.sub, 'one more');
      await tabA.log.waitFor((e) =>
        e.some((x) => x.operation === 'complete' && markdownOf(x) === 'one more'),
      );
      assert.deepEqual(tabA.log.completed('user').map(markdownOf), ['thanks', 'one more']);
      const res = await listMessages(nodeB, v, conversation.id);
      assert.equal(res.body.messages.filter((m: { role: string }) => m.role === 'user').length, 2);
    } finally {
      tabA.close();
      tabB.close();
    }
  });

  it('recovers every completed message when a client reconnects to the other node mid-stream', async () => {
    const { company } = await createCompanyWithSlowEmployee(nodeA, 'Failover Co', {
      words: 20,
      delayMs: 60,
    });
    const v = newVisitor(company.id);
    const { conversation, c: onA } = await connectToNewConversation(nodeA, v);
    await sendMessage(onA.sub, 'first');
    const seen = await onA.log.waitFor(replyIsStreaming);
    const replyId = seen.find((x) => x.message_snapshot.role === 'digital_employee')!.message_snapshot.id;
    // Node A's client goes away; the same visitor comes back through node B with the position it had.
    const { offset: lastOffset, epoch: lastEpoch } = onA.position;
    assert.ok(lastOffset > 0 && lastEpoch.length > 0);
    onA.close();
    await waitFor('the reply stored complete', async () => {
      const res = await listMessages(nodeB, v, conversation.id);
      return res.body.messages.find((m: { id: string }) => m.id === replyId)?.status === 'complete';
    });
    const token = (await sdkPost(nodeB, v, '/auth/connect-token')).body.connection_token;
    const client = newCentrifugeClient(nodeB, token);
    const got: MessageEnvelope[] = [];
    const sub = client.newSubscription(conversation.channel, {
      since: { offset: lastOffset, epoch: lastEpoch },
      getToken: async () =>
        (await sdkPost(nodeB, v, '/auth/subscribe-token', { conversation_id: conversation.id })).body
          .subscription_token,
    });
    sub.on('publication', (ctx) => got.push(ctx.data as MessageEnvelope));
    const subscribed = new Promise<{ recovered: boolean }>((resolve) => sub.once('subscribed', resolve));
    client.connect();
    sub.subscribe();
    try {
      const ctx = await waitForSettled(subscribed, 15_000, 'subscribe on node B');
      assert.equal(ctx.recovered, true);
      const final = got.find((x) => x.message_snapshot.id === replyId && x.operation === 'complete');
      assert.ok(final, 'the completed reply is recovered');
      assert.equal(markdownOf(final), slowEmployeeText(20));
    } finally {
      client.disconnect();
    }
  });
  it('answers messages sent through two nodes one at a time, in the order they were stored', async () => {
    const company = await nodeA.ctx.companies.create('Turns Co');
    const words = (label: string) => Array.from({ length: 8 }, (_, i) => `${label}${i + 1}`).join(' ');
    const employee = await nodeA.ctx.digitalEmployees.create({
      companyId: company.id,
      name: 'Turns',
      responder: 'builtin',
      settings: {
        greeting: null,
        word_delay_ms: 40,
        answers: [
          { question: 'Alpha?', keywords: ['alpha'], answer: words('a') },
          { question: 'Beta?', keywords: ['beta'], answer: words('b') },
        ],
      },
      isDefault: true,
    });
    assert.ok(employee.id);
    const v = newVisitor(company.id);
    const { conversation, c: tabA } = await connectToNewConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    try {
      // Two tabs of one visitor, two nodes, two messages at the same moment: each node would reply at once.
      await Promise.all([sendMessage(tabA.sub, 'alpha'), sendMessage(tabB.sub, 'beta')]);
      await tabA.log.waitFor((e) => deComplete(e).length === 2, 15_000, 'two replies');
      const replies = tabA.log.envelopes.filter((e) => e.message_snapshot.role === 'digital_employee');
      const firstId = replies[0]!.message_snapshot.id;
      const firstComplete = replies.findIndex(
        (e) => e.message_snapshot.id === firstId && e.operation === 'complete',
      );
      const secondStart = replies.findIndex((e) => e.message_snapshot.id !== firstId);
      assert.ok(secondStart > firstComplete, 'the second reply starts only after the first completed');
      const users = tabA.log.completed('user').map(markdownOf);
      const answers = deComplete(tabA.log.envelopes).map(markdownOf);
      // Whichever message was stored first is answered first.
      assert.deepEqual(
        answers,
        users.map((u) => (u === 'alpha' ? words('a') : words('b'))),
      );
    } finally {
      tabA.close();
      tabB.close();
    }
  });

  it('a handover through node B stops the reply node A is streaming', async () => {
    const { company } = await createCompanyWithSlowEmployee(nodeA, 'Cross Handover Co', {
      words: 40,
      delayMs: 100,
    });
    const v = newVisitor(company.id);
    const { conversation, c: onA } = await connectToNewConversation(nodeA, v);
    const token = await fetchPlatformToken(nodeB, company.id, ['conversations:write']);
    try {
      await sendMessage(onA.sub, 'tell me everything');
      await onA.log.waitFor(replyIsStreaming);
      const res = await http(
        `${nodeB.baseUrl}/platform/v1/conversations/${conversation.id}/handover`,
        bearer(token, { author: { name: 'Kim' } }),
      );
      assert.equal(res.status, 200);
      await onA.log.waitFor((e) => deComplete(e).length === 1, 10_000, 'the interrupted reply');
      const reply = deComplete(onA.log.envelopes)[0]!;
      assert.equal((reply.message_snapshot.blocks.at(-1) as { code: string }).code, 'reply_interrupted');
      assert.ok(!markdownOf(reply).includes('word40'), 'the reply stopped early');
    } finally {
      onA.close();
    }
  });
});
