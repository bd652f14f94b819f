import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl, testRedisUrl } from '../testing/databases.ts';
import { type ServerProcess, startServerProcess } from '../testing/process.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import {
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
} from '../testing/webchat/webchat-fixtures.ts';
import type { MessageEnvelope } from './messages/message.ts';

const LEASE_MS = 1_500;

// A node that dies mid-reply (kill -9: no shutdown, no goodbye) does not strand its conversation: once its lease
// lapses another node completes the interrupted message above every sequence already published, and answers the
// messages that queued behind it.
describe('webchat: a node killed mid-reply (PostgreSQL + Redis)', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  let survivor: TestServer;
  let doomed: ServerProcess;
  before(async () => {
    survivor = await startTestServer({
      database: 'postgres',
      redis: true,
      config: {
        webchat: { realtimeRedisPrefix: `${prefix}:rt`, replyLeaseMs: LEASE_MS },
        rateLimit: { keyPrefix: `${prefix}:rl:` },
      },
    });
    // The same database schema, Redis prefix, token secret and master keys (the shared data folder): one cluster.
    const database = new URL(testPostgresUrl());
    database.searchParams.set('options', `-c search_path=${survivor.schema}`);
    doomed = await startServerProcess({
      DATABASE_URL: database.toString(),
      REDIS_URL: testRedisUrl(),
      PARLEY_DATA_DIR: survivor.dataDir,
      PARLEY_REALTIME_REDIS_PREFIX: `${prefix}:rt`,
      PARLEY_RATE_LIMIT_PREFIX: `${prefix}:rl:`,
      PARLEY_WEBCHAT_REPLY_LEASE_MS: String(LEASE_MS),
      LOG_LEVEL: 'warn',
    });
  });
  after(async () => {
    await doomed.stop('SIGKILL');
    await survivor.close();
  });

  it('the interrupted reply ends above every published sequence, and the queued message is answered', async () => {
    const { company } = await createCompanyWithSlowEmployee(survivor, 'Takeover Co', {
      words: 40,
      delayMs: 100,
    });
    const v = newVisitor(company.id);
    const conversation = await createConversation(survivor, v);
    // The visitor publishes through the doomed node (which therefore streams the reply); a second tab watches
    // through the survivor.
    const onDoomed = await connectVisitor({ ...survivor, baseUrl: doomed.baseUrl }, v, conversation);
    const watcher = await connectVisitor(survivor, v, conversation);
    try {
      await sendMessage(onDoomed.sub, 'first');
      const streaming = await watcher.log.waitFor((e) => e.some((x) => isReply(x) && x.sequence >= 4));
      const replyId = streaming.find(isReply)!.message_snapshot.id;
      await sendMessage(onDoomed.sub, 'second');
      await watcher.log.waitFor((e) => e.filter((x) => x.message_snapshot.role === 'user').length >= 2);

      await doomed.stop('SIGKILL');
      const killedAt = Date.now();
      const seenBefore = Math.max(...watcher.log.of(replyId).map((x) => x.sequence));

      const ended = await watcher.log.waitFor(
        (e) => e.some((x) => x.message_snapshot.id === replyId && x.operation === 'complete'),
        15_000,
        'the interrupted reply to be completed by the survivor',
      );
      const complete = ended.find((x) => x.message_snapshot.id === replyId && x.operation === 'complete')!;
      assert.ok(
        complete.sequence > seenBefore,
        `complete ${complete.sequence} above published ${seenBefore}`,
      );
      const error = complete.message_snapshot.blocks.at(-1) as { type: string; code: string };
      assert.deepEqual([error.type, error.code], ['error', 'reply_interrupted']);

      const answered = await watcher.log.waitFor(
        (e) => e.some((x) => isReply(x) && x.operation === 'complete' && x.message_snapshot.id !== replyId),
        15_000 - (Date.now() - killedAt),
        'the queued message to be answered',
      );
      const second = answered.find(
        (x) => isReply(x) && x.operation === 'complete' && x.message_snapshot.id !== replyId,
      )!;
      assert.equal(second.message_snapshot.blocks.at(-1)!.type, 'markdown', 'a real answer, not an error');
      assert.ok(Date.now() - killedAt < 15_000, 'answers again within 15 s');

      const partial = await survivor.ctx.store.db
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', '=', conversation.id)
        .where('status', '=', 'partial')
        .execute();
      assert.deepEqual(partial, [], 'nothing left partial');
    } finally {
      onDoomed.close();
      watcher.close();
    }
  });
});

const isReply = (x: MessageEnvelope) => x.message_snapshot.role === 'digital_employee';
