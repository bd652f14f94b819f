import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_DATABASES } from '@parley/testing/databases';
import { outageReadyDatabase, proxiedPostgres, type StoreOutage } from '@parley/testing/store-outage';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  type ConnectedVisitor,
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
  slowEmployeeText,
} from '@parley/testing/webchat/webchat-fixtures';
import { clockMs } from '../../storage/db-clock.ts';
import type { MessageEnvelope } from '../messages/message.ts';

/** Short leases, so that every lease lapses during the outages below (3–4 leases long). */
const LEASE_MS = 900;
const WORDS = 30;
const WORD_DELAY_MS = 100;

const isReply = (e: MessageEnvelope) => e.message_snapshot.role === 'digital_employee';
const textOf = (e: MessageEnvelope) =>
  e.message_snapshot.blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => (b as { content: string }).content)
    .join('');

/** Starts a reply and cuts the store once it streams; returns the reply's id, and when the cut began. */
async function cutWhileStreaming(c: ConnectedVisitor, outage: StoreOutage): Promise<string> {
  await sendMessage(c.sub, 'tell me everything');
  const streaming = await c.log.waitFor(
    (e) => e.some((x) => isReply(x) && textOf(x).split(' ').length >= 4),
    15_000,
    'the reply to stream',
  );
  await outage.cut();
  return streaming.find(isReply)!.message_snapshot.id;
}

/**
 * What the visitor saw of a reply that streamed through an outage: it kept growing while the store was away, ends
 * with one `complete` holding the full text and no error, above every sequence (the ordering rule drops nothing),
 * and that text begins with every text shown before.
 */
function assertStreamedThrough(c: ConnectedVisitor, replyId: string, shownAtCut: string): MessageEnvelope {
  const envelopes = c.log.of(replyId);
  const complete = envelopes.find((e) => e.operation === 'complete');
  assert.ok(complete, 'the reply ended complete');
  assert.equal(envelopes.at(-1), complete, 'nothing after the complete');
  const sequences = envelopes.map((e) => e.sequence);
  for (let i = 1; i < sequences.length; i++)
    assert.ok(sequences[i]! > sequences[i - 1]!, `sequences rise: ${sequences.join(',')}`);
  assert.equal(textOf(complete), slowEmployeeText(WORDS), 'the full text');
  assert.deepEqual(
    complete.message_snapshot.blocks.map((b) => b.type),
    ['markdown'],
    'no error block: nothing was interrupted',
  );
  for (const e of envelopes)
    assert.ok(textOf(complete).startsWith(textOf(e)), `"${textOf(e)}" was shown and is kept`);
  assert.ok(
    envelopes.some((e) => e.operation === 'replace' && textOf(e).length > shownAtCut.length),
    'the visitor kept reading while the store was away',
  );
  return complete;
}

async function storedReply(server: TestServer, replyId: string) {
  return server.ctx.store.db
    .selectFrom('messages')
    .select(['status', 'sequence', 'blocks'])
    .where('id', '=', replyId)
    .executeTakeFirstOrThrow();
}

for (const database of TEST_DATABASES) {
  describe(`a reply streaming through a store outage (${database})`, () => {
    let server: TestServer;
    let db: Awaited<ReturnType<typeof outageReadyDatabase>>;
    let outage: StoreOutage;
    before(async () => {
      db = await outageReadyDatabase(database);
      server = await startTestServer({
        database,
        config: { ...db.config, webchat: { replyLeaseMs: LEASE_MS } },
      });
      outage = db.outageOf(server.ctx.store.db);
    });
    after(async () => {
      await outage?.restore();
      await server?.close();
      await db?.close();
    });

    it('keeps streaming while the store is away for several leases, then is stored complete with its full text', async () => {
      const { company } = await createCompanyWithSlowEmployee(server, 'Outage Co', {
        words: WORDS,
        delayMs: WORD_DELAY_MS,
      });
      const v = newVisitor(company.id);
      const c = await connectVisitor(server, v, await createConversation(server, v));
      try {
        const replyId = await cutWhileStreaming(c, outage);
        const shownAtCut = textOf(c.log.of(replyId).at(-1)!);
        try {
          // The reply finishes while the store is still away (for several leases), and waits; every word is shown.
          await c.log.waitFor(
            () => textOf(c.log.of(replyId).at(-1)!) === slowEmployeeText(WORDS),
            15_000,
            'every word to be shown while the store is away',
          );
          // The outage's length is the input here (three leases with no store), as a dribbled body is elsewhere; the
          // reply ending before the store is back is a bounded absence check.
          await sleep(3 * LEASE_MS);
          assert.ok(
            !c.log.of(replyId).some((e) => e.operation === 'complete'),
            'not complete before it is stored',
          );
        } finally {
          await outage.restore();
        }
        await c.log.waitFor(
          (e) => e.some((x) => x.message_snapshot.id === replyId && x.operation === 'complete'),
          15_000,
          'the reply to be stored and announced complete',
        );
        const complete = assertStreamedThrough(c, replyId, shownAtCut);
        const row = await storedReply(server, replyId);
        assert.equal(row.status, 'complete');
        assert.equal(row.sequence, complete.sequence);
        assert.deepEqual(JSON.parse(row.blocks), complete.message_snapshot.blocks);
      } finally {
        c.close();
      }
    });
  });
}

for (const database of TEST_DATABASES) {
  describe(`a reply whose store stays away longer than it waits (${database})`, () => {
    let server: TestServer;
    let db: Awaited<ReturnType<typeof outageReadyDatabase>>;
    let outage: StoreOutage;
    before(async () => {
      db = await outageReadyDatabase(database);
      server = await startTestServer({
        database,
        config: { ...db.config, webchat: { replyLeaseMs: LEASE_MS, replyStoreWaitMs: 500 } },
      });
      outage = db.outageOf(server.ctx.store.db);
    });
    after(async () => {
      await outage?.restore();
      await server?.close();
      await db?.close();
    });

    it('is left to a takeover once the store is back: it ends reply_interrupted, above every sequence shown', async () => {
      const { company } = await createCompanyWithSlowEmployee(server, 'Long Outage Co', {
        words: 10,
        delayMs: WORD_DELAY_MS,
      });
      const v = newVisitor(company.id);
      const c = await connectVisitor(server, v, await createConversation(server, v));
      try {
        const replyId = await cutWhileStreaming(c, outage);
        try {
          // The reply ends, waits 500 ms for the store, and gives up.
          await waitFor('the reply to give up on the store', () =>
            server.logs.some((line) => line.includes('gave up waiting for the store')),
          );
        } finally {
          await outage.restore();
        }
        const ended = await c.log.waitFor(
          (e) => e.some((x) => x.message_snapshot.id === replyId && x.operation === 'complete'),
          15_000,
          'a takeover to complete the reply',
        );
        const shown = c.log.of(replyId);
        const complete = ended.find((x) => x.message_snapshot.id === replyId && x.operation === 'complete')!;
        assert.ok(
          shown.every((e) => e === complete || e.sequence < complete.sequence),
          'the ordering rule accepts the complete',
        );
        const error = complete.message_snapshot.blocks.at(-1) as { type: string; code?: string };
        assert.deepEqual([error.type, error.code], ['error', 'reply_interrupted']);
        assert.equal((await storedReply(server, replyId)).status, 'complete');
      } finally {
        c.close();
      }
    });
  });
}

// One node loses the store while the other keeps it: the other sees the first node's lease lapse, but the first node
// still beats for its reply through Redis (reply-heartbeats.ts), so nobody takes the reply over and cuts it short.
describe('a reply streaming on a node cut off from the store while another node is not (PostgreSQL + Redis)', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  let cutOff: TestServer;
  let other: TestServer;
  let outage: StoreOutage & { close(): Promise<void> };
  before(async () => {
    const proxied = await proxiedPostgres();
    outage = proxied.outage;
    const config = {
      webchat: { realtimeRedisPrefix: `${prefix}:rt`, replyLeaseMs: LEASE_MS },
      rateLimit: { keyPrefix: `${prefix}:rl:` },
    };
    other = await startTestServer({ database: 'postgres', redis: true, config });
    cutOff = await startTestServer({
      database: 'postgres',
      redis: true,
      shareWith: other,
      config: { ...config, databaseUrl: proxied.url },
    });
  });
  after(async () => {
    await outage?.restore();
    await cutOff?.close();
    await other?.close();
    await outage?.close();
  });

  it('the other node does not take the reply over: it ends complete with its full text once the store is back', async () => {
    const { company } = await createCompanyWithSlowEmployee(other, 'Partition Co', {
      words: WORDS,
      delayMs: WORD_DELAY_MS,
    });
    const v = newVisitor(company.id);
    const conversation = await createConversation(other, v);
    // The visitor publishes through the node that will be cut off, which therefore streams the reply; a second tab
    // watches through the other node.
    const onCutOff = await connectVisitor(cutOff, v, conversation);
    const watcher = await connectVisitor(other, v, conversation);
    try {
      const replyId = await cutWhileStreaming(onCutOff, outage);
      const shownAtCut = textOf(watcher.log.of(replyId).at(-1) ?? onCutOff.log.of(replyId).at(-1)!);
      try {
        // The reply finishes while its node is cut off, then waits through several leases and sweeps of the other.
        await watcher.log.waitFor(
          () => textOf(watcher.log.of(replyId).at(-1)!) === slowEmployeeText(WORDS),
          15_000,
          'every word to be shown while the store is away',
        );
        // The other node keeps the store: wait by the store's clock (storage/db-clock.ts) until the job's lease has
        // lapsed and two more leases passed, its sweeps (every LEASE_MS / 3) finding the job but its node beating.
        await waitFor(
          'two leases past the lapse of the job’s lease, by the store’s clock',
          async () => {
            const row = await other.ctx.store.db
              .selectFrom('reply_jobs')
              .select(['lease_expires_at', clockMs(other.ctx.store.dialect).as('now')])
              .where('reply_message_id', '=', replyId)
              .executeTakeFirstOrThrow();
            return Number(row.now) > Number(row.lease_expires_at) + 2 * LEASE_MS;
          },
          15_000,
        );
      } finally {
        await outage.restore();
      }
      await watcher.log.waitFor(
        (e) => e.some((x) => x.message_snapshot.id === replyId && x.operation === 'complete'),
        15_000,
        'the reply to be stored and announced complete',
      );
      const complete = assertStreamedThrough(watcher, replyId, shownAtCut);
      assert.equal((await storedReply(other, replyId)).sequence, complete.sequence);
    } finally {
      onCutOff.close();
      watcher.close();
    }
  });
});
