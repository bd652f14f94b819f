import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_DATABASES, testRedisUrl } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { PausableProxy } from '@parley/testing/pausable-proxy';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectToNewConversation,
  createCompanyWithSlowEmployee,
  digitalEmployeeCompletes,
  newVisitor,
  replyIsStreaming,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from './messages/message.ts';
import { MessageStore } from './messages/message-store.ts';

/** The contract answers within 2 s; the slack absorbs a loaded 2-core machine. */
const PROMPT_MS = 2_000 + 1_500;
/** A complete the broker could not take is retried after 250 ms, 1, 2, 4, 8 s… on a fixed schedule, at worst. */
const FIXED_RETRY_AT_MS = 7_250;

// One node whose Redis is behind a TCP proxy the tests pause: a partition (nothing crosses, nothing is closed),
// not a Redis that went down. docs/architecture.md "Broker outages".
for (const database of TEST_DATABASES) {
  describe(`webchat on a node cut off from Redis (${database})`, () => {
    let proxy: PausableProxy;
    let server: TestServer;
    before(async () => {
      proxy = new PausableProxy(Number(new URL(testRedisUrl()).port || 6379));
      await proxy.listen();
      const prefix = `t${randomBytes(5).toString('hex')}`;
      server = await startTestServer({
        database,
        config: {
          redisUrl: proxy.url,
          webchat: { realtimeRedisPrefix: `${prefix}:rt`, conversationsPerMinutePerSession: 2 },
          rateLimit: { keyPrefix: `${prefix}:rl:` },
        },
      });
    });
    after(async () => {
      proxy.resume();
      await server.close();
      await proxy.close();
    });

    const ready = async () => (await http(`${server.baseUrl}/readyz`)).status === 200;

    it('answers every publish within 2 s, limits per node, and delivers what it stored once the link is back', async () => {
      const { company } = await createCompanyWithSlowEmployee(server, 'Partitioned Co', { words: 3 });
      const v = newVisitor(company.id);
      const { c } = await connectToNewConversation(server, v);
      try {
        proxy.pause();
        // Four at once: the session handles its commands in order, so none may wait on Redis for long.
        const sentAt = Date.now();
        const texts = ['one', 'two', 'three', 'four'];
        const answers = await Promise.allSettled(texts.map((text) => sendMessage(c.sub, text)));
        const answeredAfter = Date.now() - sentAt;
        for (const answer of answers) {
          assert.equal(answer.status, 'rejected', 'the broker cannot broadcast it now');
          const error = (answer as PromiseRejectedResult).reason as { code?: number; temporary?: boolean };
          assert.deepEqual([error.code, error.temporary], [503, true]);
        }
        assert.ok(answeredAfter < PROMPT_MS, `four publishes answered after ${answeredAfter} ms`);

        // The session created one conversation before: Redis counted it. Cut off, this node counts alone,
        // and its limit (2 a minute) still holds. That first one is in the node's own count too when Redis did
        // not answer it within the limiter's budget (ratelimit/fallback-rate-limiter.ts; a loaded machine may
        // miss it), so the node allows one or two more, never three.
        const created = [];
        for (let i = 0; i < 3; i++) created.push(await sdkPost(server, v, '/conversations'));
        const statuses = created.map((r) => r.status);
        assert.equal(statuses[0], 201, statuses.join());
        assert.equal(statuses[2], 429, statuses.join());
        assert.ok(
          statuses.every((status) => status === 201 || status === 429),
          statuses.join(),
        );
        assert.ok(Number(created[2]!.headers.get('retry-after')) >= 1);

        proxy.resume();
        await waitFor('the node ready again', ready, 10_000);
        // Stored though refused: broadcast once the broker is back, without the visitor sending them again.
        await c.log.waitFor(
          (envelopes) => texts.every((text) => envelopes.some((e) => isUserComplete(e, text))),
          10_000,
          'the stored messages',
        );
      } finally {
        proxy.resume();
        c.close();
      }
    });

    it('brings a reply that finished during the partition to the client as soon as the link is back', async () => {
      const { company } = await createCompanyWithSlowEmployee(server, 'Streaming Co', {
        words: 12,
        delayMs: 100,
      });
      const v = newVisitor(company.id);
      const { conversation, c } = await connectToNewConversation(server, v);
      const messages = new MessageStore(server.ctx.store, server.ctx.events);
      try {
        await waitFor('the node ready', ready, 10_000);
        await sendMessage(c.sub, 'tell me');
        await c.log.waitFor(replyIsStreaming, 10_000, 'the reply streaming');
        proxy.pause();
        const completedAt = await waitFor(
          'the reply stored complete during the partition',
          async () => {
            const page = await messages.page(conversation.id, {});
            const reply = page.messages.find((m) => m.role === 'digital_employee');
            return reply?.status === 'complete' ? Date.now() : undefined;
          },
          10_000,
        );
        assert.equal(digitalEmployeeCompletes(c.log.envelopes).length, 0, 'not delivered while cut off');
        // The link comes back just after a fixed retry schedule would have tried: only noticing the broker's
        // return gets the reply out within the bound below.
        await sleep(Math.max(0, completedAt + FIXED_RETRY_AT_MS + 300 - Date.now()));
        proxy.resume();
        const healedAt = Date.now();
        await c.log.waitFor(
          (envelopes) => digitalEmployeeCompletes(envelopes).length === 1,
          PROMPT_MS,
          'the reply complete within 2 s of the link coming back',
        );
        assert.ok(Date.now() - healedAt < PROMPT_MS);
      } finally {
        proxy.resume();
        c.close();
      }
    });
  });
}

const isUserComplete = (e: MessageEnvelope, text: string): boolean =>
  e.operation === 'complete' &&
  e.message_snapshot.role === 'user' &&
  e.message_snapshot.blocks.some((b) => b.type === 'markdown' && b.content === text);
