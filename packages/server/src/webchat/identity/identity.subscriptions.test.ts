import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { TestDatabase } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  createIdentityChannel,
  newIdentifiedVisitor,
  signVisitorToken,
} from '@parley/testing/webchat/identity-fixtures';
import {
  connectVisitor,
  createConversation,
  newCentrifugeClient,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Centrifuge, Subscription } from 'centrifuge';

/**
 * docs/design.md "Who may read a conversation channel": the attack of an anonymous session that keeps reading a
 * conversation after it became an identified visitor's — through its live subscription, or through the 24-hour
 * subscription token it kept (a fresh subscribe, a recovery from its old position). On both stores and both
 * brokers; with Redis the anonymous tab is on another node than the request that identifies.
 */
const SETUPS: Array<{ database: TestDatabase; redis: boolean }> = [
  { database: 'sqlite', redis: false },
  { database: 'postgres', redis: false },
  { database: 'sqlite', redis: true },
  { database: 'postgres', redis: true },
];

for (const { database, redis } of SETUPS) {
  describe(`a conversation channel admits only its owner at subscribe time (${database}, ${redis ? 'Redis, two nodes' : 'memory broker'})`, () => {
    let nodeA: TestServer;
    let nodeB: TestServer;
    before(async () => {
      const prefix = `t${randomBytes(5).toString('hex')}`;
      const config = redis
        ? { webchat: { realtimeRedisPrefix: `${prefix}:rt` }, rateLimit: { keyPrefix: `${prefix}:rl:` } }
        : {};
      nodeA = await startTestServer({ database, redis, config });
      nodeB = redis ? await startTestServer({ database, redis, config, shareWith: nodeA }) : nodeA;
    });
    after(async () => {
      if (nodeB !== nodeA) await nodeB.close();
      await nodeA.close();
    });

    it('identifying ends the anonymous session’s live subscription, and its old token no longer subscribes or recovers', async () => {
      const company = await nodeA.ctx.companies.create('Identity Leak Co');
      const { channelId, secret } = await createIdentityChannel(nodeA, company.id, 'optional');
      const browser = newVisitor(company.id, { channelId });
      const conversation = await createConversation(nodeB, browser);
      // The anonymous tab, live on node B; the session keeps its subscription token (valid 24 h).
      const anonymousTab = await connectVisitor(nodeB, browser, conversation);
      const oldToken = await subscriptionToken(nodeB, browser, conversation.id);
      const ended = new Promise<{ code: number; reason: string }>((resolve) =>
        anonymousTab.sub.on('unsubscribed', (ctx) => resolve({ code: ctx.code, reason: ctx.reason })),
      );
      await sendMessage(anonymousTab.sub, 'before signing in');
      await anonymousTab.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'));
      const position = { ...anonymousTab.position };

      // The same session identifies as alice through node A: the conversation becomes hers.
      const token = await signVisitorToken(secret, 'alice');
      const identified = { ...browser, headers: { ...browser.headers, 'x-visitor-token': token } };
      const listed = await sdkGet(nodeA, identified, '/conversations');
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.conversations.map((c: { id: string }) => c.id),
        [conversation.id],
      );

      // The anonymous tab's subscription ends at once, on its own node: a server unsubscribe (2000), terminal.
      const end = await waitForSettled(ended, 10_000, 'the anonymous subscription to end');
      assert.equal(end.code, 2000);
      assert.equal(anonymousTab.sub.state, 'unsubscribed');
      anonymousTab.close();

      // Alice writes from her own device; then the attacker tries the anonymous session's tokens again.
      const alice = newIdentifiedVisitor(company.id, channelId, token);
      const aliceTab = await connectVisitor(nodeA, alice, conversation);
      try {
        await sendMessage(aliceTab.sub, 'my card ends in 4242');
        await aliceTab.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'));

        // A fresh anonymous connect token is still issued to the session (it is a session like any other) …
        const connect = await sdkPost(nodeB, browser, '/auth/connect-token');
        assert.equal(connect.status, 200);
        // … but no new subscription token for the conversation (REST answers 404 to the anonymous session) …
        assert.equal(
          (await sdkPost(nodeB, browser, '/auth/subscribe-token', { conversation_id: conversation.id }))
            .status,
          404,
        );
        // … and the old one neither subscribes nor recovers from the position it held: 103, nothing delivered.
        for (const recover of [false, true]) {
          const attempt = await subscribeWithToken(
            newCentrifugeClient(nodeB, connect.body.connection_token),
            conversation.channel,
            oldToken,
            recover ? position : undefined,
          );
          try {
            assert.equal(attempt.outcome.code, 103, `recover: ${recover}`);
            assert.equal(attempt.publications.length, 0, 'no message of alice reaches the anonymous session');
          } finally {
            attempt.client.disconnect();
          }
        }
      } finally {
        aliceTab.close();
      }
    });

    it('another anonymous session is refused even with a token signed for its own subject; the owner subscribes again', async () => {
      const company = await nodeA.ctx.companies.create('Owner Co');
      const owner = newVisitor(company.id);
      const conversation = await createConversation(nodeA, owner);
      const tab = await connectVisitor(nodeB, owner, conversation);
      tab.close();
      // A token signed for a stranger's own subject and this channel (as if the signer had been fooled): the
      // engine's `sub` check passes, ownership does not.
      const stranger = newVisitor(company.id);
      const strangerToken = nodeA.ctx.webchat.signer.subscriptionToken(
        stranger.sessionId,
        conversation.channel,
      );
      const connect = await sdkPost(nodeA, stranger, '/auth/connect-token');
      const attempt = await subscribeWithToken(
        newCentrifugeClient(nodeA, connect.body.connection_token),
        conversation.channel,
        strangerToken,
      );
      attempt.client.disconnect();
      assert.equal(attempt.outcome.code, 103);
      // The owner comes back: subscribed again.
      const again = await connectVisitor(nodeA, owner, conversation);
      again.close();
    });
  });
}

async function subscriptionToken(server: TestServer, v: Visitor, conversationId: string): Promise<string> {
  const res = await sdkPost(server, v, '/auth/subscribe-token', { conversation_id: conversationId });
  assert.equal(res.status, 200);
  return res.body.subscription_token;
}

/** Subscribes `client` with a fixed token (optionally recovering from `since`); resolves with how it ended. */
async function subscribeWithToken(
  client: Centrifuge,
  channel: string,
  token: string,
  since?: { offset: number; epoch: string },
): Promise<{ client: Centrifuge; outcome: { code: number }; publications: unknown[] }> {
  const sub: Subscription = client.newSubscription(channel, {
    token,
    ...(since ? { since, recoverable: true } : {}),
  });
  const publications: unknown[] = [];
  sub.on('publication', (ctx) => publications.push(ctx.data));
  const outcome = new Promise<{ code: number }>((resolve) => {
    sub.on('subscribed', () => resolve({ code: 0 }));
    sub.on('unsubscribed', (ctx) => resolve({ code: ctx.code }));
  });
  client.connect();
  sub.subscribe();
  const result = await waitForSettled(outcome, 10_000, 'the subscribe outcome');
  // Anything a wrongly admitted subscription recovers is in its subscribe reply, and centrifuge-js hands those
  // publications out in the same call that emits `subscribed`, so `publications` already holds them here.
  return { client, outcome: result, publications };
}
