import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testPostgresUrl, testRedisUrl } from '@parley/testing/databases';
import { type ServerProcess, startServerProcess } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
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
      // The store keeps only the reply's first snapshot: every word shown comes from the stream alone, so a takeover
      // that went by the store would take them back.
      PARLEY_WEBCHAT_STREAM_PERSIST_INTERVAL_MS: '600000',
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
      // Every text either tab was shown of the reply before (and after) the kill.
      const shownTexts = () =>
        [...watcher.log.of(replyId), ...onDoomed.log.of(replyId)]
          .filter((x) => x.operation !== 'complete')
          .map((x) => textOf(x));

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
      // DESIGN "Hostile input and faults": the final text begins with every text any client was shown.
      const finalText = textOf(complete);
      const shown = shownTexts();
      assert.ok(Math.max(...shown.map((t) => t.length)) > 0, 'words were shown before the kill');
      for (const text of shown)
        assert.ok(
          finalText.startsWith(text),
          `final ${JSON.stringify(finalText)} keeps ${JSON.stringify(text)}`,
        );
      const stored = await survivor.ctx.store.db
        .selectFrom('messages')
        .select('blocks')
        .where('id', '=', replyId)
        .executeTakeFirstOrThrow();
      assert.equal(textOf({ message_snapshot: { blocks: JSON.parse(stored.blocks) } }), finalText);

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

const textOf = (x: { message_snapshot: { blocks: readonly { type: string }[] } }) =>
  x.message_snapshot.blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => (b as unknown as { content: string }).content)
    .join('');
