import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from './messages/message.ts';

// SIGTERM on one node of a cluster: its clients move to another node, the reply it streams finishes (it is not
// cut off), and the messages queued behind it are answered by the node that stays.
describe('webchat: graceful drain of one node (PostgreSQL + Redis)', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const shared = {
    webchat: { realtimeRedisPrefix: `${prefix}:rt`, replyLeaseMs: 1_500 },
    rateLimit: { keyPrefix: `${prefix}:rl:` },
  };
  let leaving: TestServer;
  let staying: TestServer;
  before(async () => {
    staying = await startTestServer({ database: 'postgres', redis: true, config: shared });
    leaving = await startTestServer({
      database: 'postgres',
      redis: true,
      config: shared,
      shareWith: staying,
    });
  });
  after(async () => {
    await leaving.close();
    await staying.close();
  });

  it('finishes the reply it streams, tells its clients to reconnect, and hands the queued message over', async () => {
    const { company } = await createCompanyWithSlowEmployee(staying, 'Drain Co', {
      words: 20,
      delayMs: 100,
    });
    const v = newVisitor(company.id);
    const conversation = await createConversation(staying, v);
    const onLeaving = await connectVisitor(leaving, v, conversation);
    const watcher = await connectVisitor(staying, v, conversation);
    try {
      const reconnectCode = new Promise<number>((resolve) =>
        onLeaving.client.once('connecting', (ctx) => resolve(ctx.code)),
      );
      await sendMessage(onLeaving.sub, 'first');
      await watcher.log.waitFor((e) => e.some((x) => isReply(x) && x.sequence >= 2));
      await sendMessage(onLeaving.sub, 'second');
      await watcher.log.waitFor((e) => e.filter((x) => x.message_snapshot.role === 'user').length >= 2);

      const drained = leaving.drain(10_000);
      assert.equal(await waitForSettled(reconnectCode, 5_000, 'the reconnect advice'), 3001);
      await waitForSettled(drained, 10_000, 'the drain');

      const replies = await watcher.log.waitFor(
        (e) => e.filter((x) => isReply(x) && x.operation === 'complete').length >= 2,
        15_000,
        'both replies',
      );
      const completes = replies.filter((x) => isReply(x) && x.operation === 'complete');
      for (const reply of completes) {
        assert.equal(reply.message_snapshot.blocks.at(-1)!.type, 'markdown', 'finished, not interrupted');
      }
    } finally {
      onLeaving.close();
      watcher.close();
    }
  });
});

const isReply = (x: MessageEnvelope) => x.message_snapshot.role === 'digital_employee';
