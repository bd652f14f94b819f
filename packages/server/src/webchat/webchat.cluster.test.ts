import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import type { MessageEnvelope } from './messages/message.ts';
import { assertStreamedReply, markdownOf } from './testing/stream-assertions.ts';
import {
  centrifugeClient,
  connectVisitor,
  digitalEmployeeCompletes as deComplete,
  listMessages,
  openConversation,
  replyIsStreaming,
  sdkPost,
  sendMessage,
  sleep,
  slowEmployee,
  slowEmployeeText,
  visitor,
  withTimeout,
} from './testing/webchat-fixtures.ts';

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
    const v = visitor(company.id);
    const { conversation, c: tabA } = await openConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    try {
      await sendMessage(tabA.sub, 'Who are you?');
      await tabB.log.until((e) => deComplete(e).length === 1);
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
    const v = visitor(company.id);
    const { conversation, c: tabA } = await openConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    try {
      const id = randomUUID();
      await sendMessage(tabA.sub, 'thanks', id);
      await sendMessage(tabB.sub, 'thanks', id);
      await tabA.log.until((e) => deComplete(e).length === 1);
      await sleep(300);
      assert.equal(tabA.log.completed('user').length, 1);
      const res = await listMessages(nodeB, v, conversation.id);
      assert.equal(res.body.messages.filter((m: { role: string }) => m.role === 'user').length, 1);
    } finally {
      tabA.close();
      tabB.close();
    }
  });

  it('recovers every completed message when a client reconnects to the other node mid-stream', async () => {
    const company = await nodeA.ctx.companies.create('Failover Co');
    const employee = await slowEmployee(nodeA, company.id, { words: 20, delayMs: 60 });
    await nodeA.ctx.digitalEmployees.setDefault(company.id, employee.id);
    const v = visitor(company.id);
    const { conversation, c: onA } = await openConversation(nodeA, v);
    await sendMessage(onA.sub, 'first');
    const seen = await onA.log.until(replyIsStreaming);
    const replyId = seen.find((x) => x.message_snapshot.role === 'digital_employee')!.message_snapshot.id;
    // Node A's client goes away; the same visitor comes back through node B with the position it had.
    const { offset: lastOffset, epoch: lastEpoch } = onA.position;
    assert.ok(lastOffset > 0 && lastEpoch.length > 0);
    onA.close();
    for (let i = 0; i < 150; i++) {
      const res = await listMessages(nodeB, v, conversation.id);
      if (res.body.messages.find((m: { id: string }) => m.id === replyId)?.status === 'complete') break;
      await sleep(100);
    }
    const token = (await sdkPost(nodeB, v, '/auth/connect-token')).body.connection_token;
    const client = centrifugeClient(nodeB, token);
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
      const ctx = await withTimeout(subscribed, 15_000, 'subscribe on node B');
      assert.equal(ctx.recovered, true);
      const final = got.find((x) => x.message_snapshot.id === replyId && x.operation === 'complete');
      assert.ok(final, 'the completed reply is recovered');
      assert.equal(markdownOf(final), slowEmployeeText(20));
    } finally {
      client.disconnect();
    }
  });
});
