import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectToNewConversation,
  connectVisitor,
  digitalEmployeeCompletes,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { channelOf } from '@parley/webchat-protocol';

// An erasure asked of one node reaches every node (docs/privacy.md "Erase"): two servers sharing PostgreSQL and
// Redis, the visitor with a tab on each; the erasure through node B disconnects both tabs and leaves no history
// that either node could serve.
describe('privacy on PostgreSQL + Redis, two nodes', () => {
  let nodeA: TestServer;
  let nodeB: TestServer;
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const shared = {
    webchat: { realtimeRedisPrefix: `${prefix}:rt`, streamFlushIntervalMs: 0 },
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

  it('an erasure through node B disconnects the visitor on both nodes and empties the history both serve', async () => {
    const client = await createTestClient(nodeB.ctx, ['privacy:write']);
    const token = await fetchToken(nodeB, client);
    const canary = `canary-${randomUUID()}`;
    const v = newVisitor(client.companyId);
    const { conversation, c: tabA } = await connectToNewConversation(nodeA, v);
    const tabB = await connectVisitor(nodeB, v, conversation);
    const disconnected = { a: false, b: false };
    tabA.client.on('disconnected', () => {
      disconnected.a = true;
    });
    tabB.client.on('disconnected', () => {
      disconnected.b = true;
    });
    try {
      await sendMessage(tabA.sub, `my order ${canary}`);
      await tabB.log.waitFor((envelopes) => digitalEmployeeCompletes(envelopes).length >= 1);
      const channel = channelOf(client.companyId, conversation.id);
      for (const node of [nodeA, nodeB]) {
        const history = await node.ctx.webchat.realtime.history(channel, { limit: -1 });
        assert.ok(JSON.stringify(history.publications).includes(canary), 'in the history before');
      }

      const res = await http(`${nodeB.baseUrl}/platform/v1/privacy/erasures`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: v.sessionId }),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.erased.conversations, 1);

      await waitFor('both tabs disconnected', () => disconnected.a && disconnected.b);
      for (const node of [nodeA, nodeB]) {
        const history = await node.ctx.webchat.realtime.history(channel, { limit: -1 });
        assert.equal(history.publications.length, 0);
      }
    } finally {
      tabA.close();
      tabB.close();
    }
  });
});
