import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES, testRedisUrl } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { clockMs } from '../../storage/db-clock.ts';
import { connectFailFastRedis } from '../../storage/redis-client.ts';
import { MessageStore } from '../messages/message-store.ts';
import { ConversationsService } from './conversations.service.ts';
import { RedisReplyHeartbeats } from './reply-heartbeats.ts';
import { LeaseLost, type ReplyJob, ReplyQueue } from './reply-queue.ts';

// The durable reply line is shared by every node through the store: the same rules on SQLite and PostgreSQL.
for (const database of TEST_DATABASES) {
  describe(`reply line in the store (${database})`, () => {
    let server: TestServer;
    let messages: MessageStore;
    let conversations: ConversationsService;
    /** Every statement the server's store runs, as its query hook sees them. */
    const statements: string[] = [];
    before(async () => {
      // The server's own reply scheduler works the same table: with a 10-minute lease it sweeps every ~3 minutes,
      // so it does not take over the jobs these tests leave lapsing on purpose.
      server = await startTestServer({ database, config: { webchat: { replyLeaseMs: 600_000 } } });
      messages = new MessageStore(server.ctx.store, server.ctx.events);
      conversations = new ConversationsService(server.ctx.store.db, server.ctx.events);
      const metrics = server.ctx.metrics;
      const observe = metrics.storeQuery.bind(metrics);
      // The statements on the reply line only: the server's background work (the webhook dispatcher's claims) runs
      // beside the test on the same store.
      metrics.storeQuery = (query) => {
        if (query.sql.includes('reply_jobs')) statements.push(query.sql);
        observe(query);
      };
    });
    after(() => server.close());

    const node = (leaseMs = 60_000, stallMs = 60_000) =>
      new ReplyQueue(server.ctx.store, {
        nodeId: randomUUID(),
        leaseMs,
        stallMs,
      });

    /** Whether the lease of `messageId`'s job has lapsed by the clock the queue compares it with (db-clock.ts). */
    async function leaseLapsed(messageId: string): Promise<boolean> {
      const row = await server.ctx.store.db
        .selectFrom('reply_jobs')
        .select(['lease_expires_at', clockMs(server.ctx.store.dialect).as('now')])
        .where('message_id', '=', messageId)
        .executeTakeFirstOrThrow();
      return Number(row.lease_expires_at ?? 0) < Number(row.now);
    }

    async function conversation(): Promise<string> {
      const company = await server.ctx.companies.create(`Line ${randomUUID().slice(0, 8)}`);
      const employee = (await server.ctx.digitalEmployees.list(company.id))[0]!;
      return (await conversations.create({ companyId: company.id, sessionId: randomUUID() }, employee.id)).id;
    }

    /** Stores a user message and, in the same transaction, its place in `queue`'s line. */
    async function userMessage(queue: ReplyQueue, conversationId: string): Promise<string> {
      return (await storeAndClaim(queue, conversationId, false)).messageId;
    }

    /** Stores a user message whose place in line `queue` may take at once (`claim`): what it got back. */
    async function storeAndClaim(queue: ReplyQueue, conversationId: string, claim = true) {
      let claimed: ReplyJob | undefined;
      const { snapshot } = await messages.insertAt(
        { conversationId, role: 'user', author: null, status: 'complete', blocks: [] },
        async (trx, at) => {
          const job = { messageId: at.id, conversationId, position: at.position };
          claimed = await queue.enqueue(trx, job, claim ? { replyMessageId: null } : undefined);
        },
      );
      return { messageId: snapshot.id, claimed };
    }

    it('hands out a conversation’s jobs one at a time, in position order, to whichever node asks', async () => {
      const a = node();
      const b = node();
      const c = await conversation();
      const first = await userMessage(a, c);
      const second = await userMessage(b, c);
      const claimed = await b.claimNext(c);
      assert.equal(claimed?.messageId, first, 'the head of the line, though another node stored it');
      assert.equal(claimed?.takenOver, false);
      assert.equal(await a.claimNext(c), undefined, 'nothing while a live node runs one');
      assert.equal(await b.claimNext(c), undefined, 'not even for the node that runs it');
      await b.finish(claimed!);
      const next = await a.claimNext(c);
      assert.equal(next?.messageId, second);
      await a.finish(next!);
      assert.equal(await a.claimNext(c), undefined, 'the line is empty');
    });

    it('a message stored into an empty line is claimed in its own transaction; behind another job it waits', async () => {
      const a = node();
      const b = node();
      const c = await conversation();
      const first = await storeAndClaim(a, c);
      assert.equal(first.claimed?.messageId, first.messageId, 'nothing ahead: taken at once');
      assert.equal(first.claimed?.takenOver, false);
      assert.equal(await b.claimNext(c), undefined, 'the claim holds a live lease like any other');
      const second = await storeAndClaim(b, c);
      assert.equal(second.claimed, undefined, 'a job is in line: this one queues behind it');
      assert.equal(await b.claimNext(c), undefined, 'the first is still running');
      // The first job leaves the line in the transaction that claims the next one.
      const next = await a.claimNext(c, first.claimed);
      assert.equal(next?.messageId, second.messageId);
      assert.equal(await a.claimNext(c, next), undefined, 'the line is empty');
      const rows = await server.ctx.store.db
        .selectFrom('reply_jobs')
        .select('message_id')
        .where('conversation_id', '=', c)
        .execute();
      assert.deepEqual(rows, [], 'both jobs left the line');
    });

    it('a claim into an empty line, with the reply it will stream, is one statement; behind a job it queues', async () => {
      const a = node();
      const c = await conversation();
      const reply = randomUUID();
      const enqueued: Array<{ claimed: ReplyJob | undefined; statements: number }> = [];
      const store = () =>
        messages.insertAt(
          { conversationId: c, role: 'user', author: null, status: 'complete', blocks: [] },
          async (trx, at) => {
            const before = statements.length;
            const job = { messageId: at.id, conversationId: c, position: at.position };
            const claimed = await a.enqueue(trx, job, { replyMessageId: reply });
            enqueued.push({ claimed, statements: statements.length - before });
          },
        );
      const first = await store();
      const second = await store();
      assert.equal(enqueued[0]?.claimed?.messageId, first.snapshot.id, 'the line was empty: claimed');
      assert.equal(enqueued[1]?.claimed, undefined, 'a job is in line: queued');
      assert.deepEqual(
        enqueued.map((e) => e.statements),
        [1, 1],
        'deciding and inserting is one statement',
      );
      const rows = await server.ctx.store.db
        .selectFrom('reply_jobs')
        .select(['message_id', 'state', 'reply_message_id'])
        .where('conversation_id', '=', c)
        .orderBy('position')
        .execute();
      assert.deepEqual(rows, [
        { message_id: first.snapshot.id, state: 'running', reply_message_id: reply },
        { message_id: second.snapshot.id, state: 'queued', reply_message_id: null },
      ]);
      const head = await a.claimNext(c, enqueued[0]!.claimed);
      assert.equal(head?.messageId, second.snapshot.id, 'the queued job is next');
      await a.finish(head!);
    });

    it('never leaves a stored message without its place: a failed transaction takes both back', async () => {
      const a = node();
      const c = await conversation();
      await assert.rejects(
        messages.insertAt(
          { conversationId: c, role: 'user', author: null, status: 'complete', blocks: [] },
          async (trx, at) => {
            await a.enqueue(trx, { messageId: at.id, conversationId: c, position: at.position });
            throw new Error('refused after the line was written');
          },
        ),
        /refused/,
      );
      assert.equal((await messages.page(c, {})).messages.length, 0);
      assert.equal(await a.claimNext(c), undefined);
    });

    it('a job whose lease lapsed is taken over with the reply it had started; the old owner is locked out', async () => {
      const dying = node(300);
      const survivor = node(300);
      const c = await conversation();
      const asked = await userMessage(dying, c);
      const job = (await dying.claimNext(c))!;
      const { snapshot: reply } = await messages.insertAt(
        { conversationId: c, role: 'digital_employee', author: null, status: 'partial', blocks: [] },
        (trx, at) => dying.attachReply(trx, job, at.id),
      );
      assert.equal(await survivor.claimNext(c), undefined, 'the lease is still live');
      // Leases run on the database's clock (shared by the nodes), which a test cannot move: wait for the lapse.
      const takeover = await waitFor('the lapsed job taken over', () => survivor.claimNext(c), 10_000);
      assert.equal(takeover?.messageId, asked);
      assert.equal(takeover?.takenOver, true);
      assert.equal(takeover?.replyMessageId, reply.id);
      // The dead node's late writes change nothing: it no longer owns the job.
      await assert.rejects(
        messages.insertAt(
          { conversationId: c, role: 'digital_employee', author: null, status: 'partial', blocks: [] },
          (trx, at) => dying.attachReply(trx, job, at.id),
        ),
        LeaseLost,
      );
      assert.equal(await dying.renewLeases([job.messageId]), 0);
      await dying.finish(job);
      assert.equal(await survivor.claimNext(c), undefined, 'still running on the survivor');
      await survivor.finish(takeover!);
    });

    it('a lapsed job whose node still beats in the broker is not taken over; once the beats stop, it is', async () => {
      const { redis, ready } = connectFailFastRedis(testRedisUrl());
      await ready;
      const heartbeats = new RedisReplyHeartbeats(redis, { prefix: `t${randomUUID()}:`, leaseMs: 1_500 });
      const gone = async (job: ReplyJob) => !(await heartbeats.beating(job.messageId));
      try {
        const cutOff = node(300);
        const other = node(300);
        const c = await conversation();
        const asked = await userMessage(cutOff, c);
        const job = (await cutOff.claimNext(c))!;
        // The store is away for the node that runs the job: it cannot renew its lease, but it beats.
        await waitFor('the lease to lapse by the store’s clock', () => leaseLapsed(job.messageId), 10_000);
        await heartbeats.beat([job.messageId]);
        assert.equal(await other.claimNext(c, undefined, gone), undefined, 'lapsed, but its node is alive');
        // Back to the store: its renewal finds the job still its own.
        assert.equal(await cutOff.renewLeases([job.messageId]), 1);
        // Then it dies: no renewal, no beat. Once its lease and its last beat lapse, the other node takes over.
        const takeover = await waitFor(
          'the job taken over once lease and beats lapsed',
          () => other.claimNext(c, undefined, gone),
          10_000,
        );
        assert.equal(takeover?.messageId, asked);
        assert.equal(takeover?.takenOver, true);
        await other.finish(takeover!);
      } finally {
        redis.disconnect();
      }
    });

    it('renews only the leases of jobs still running here, so a job given up on lapses', async () => {
      const a = node(1_000);
      const other = node(1_000);
      const c1 = await conversation();
      const c2 = await conversation();
      await userMessage(a, c1);
      await userMessage(a, c2);
      const kept = (await a.claimNext(c1))!;
      const givenUp = (await a.claimNext(c2))!;
      // Renewing `kept` as the node's timer does, until the other node has taken over the job given up on.
      const takeover = await waitFor(
        'the job given up on taken over',
        async () => {
          assert.equal(await a.renewLeases([kept.messageId]), 1);
          return other.claimNext(c2);
        },
        15_000,
        100,
      );
      assert.equal(takeover.messageId, givenUp.messageId, 'not renewed: taken over');
      assert.equal(await a.renewLeases([kept.messageId]), 1);
      assert.equal(await other.claimNext(c1), undefined, 'renewed: still ours');
    });

    it('finds lines nobody works on: lapsed leases, and queued jobs with nothing running', async () => {
      const a = node(1_000, 1_000);
      const c1 = await conversation();
      const c2 = await conversation();
      const c3 = await conversation();
      await userMessage(a, c1);
      await userMessage(a, c2);
      await userMessage(a, c3);
      await a.claimNext(c1); // running, lease soon lapsed
      const live = (await a.claimNext(c3))!; // running, kept alive below
      await userMessage(a, c3); // queued behind a live job: not stalled
      const stalled = await waitFor(
        'the lapsed and the unclaimed lines found',
        async () => {
          await a.renewLeases([live.messageId]);
          const found = await a.stalledConversations();
          return found.includes(c1) && found.includes(c2) && found;
        },
        15_000,
        100,
      );
      assert.ok(stalled.includes(c1), 'lapsed lease');
      assert.ok(stalled.includes(c2), 'queued, nobody claimed it');
      assert.ok(!stalled.includes(c3), 'a live job runs there');
    });

    it('a draining node gives back a job it had not started; one it had started stays its own', async () => {
      const a = node();
      const b = node();
      const c = await conversation();
      const first = await userMessage(a, c);
      const job = (await a.claimNext(c))!;
      await a.release(job);
      const taken = (await b.claimNext(c))!;
      assert.equal(taken.messageId, first, 'back in line for anyone');
      await messages.insertAt(
        { conversationId: c, role: 'digital_employee', author: null, status: 'partial', blocks: [] },
        (trx, at) => b.attachReply(trx, taken, at.id),
      );
      await b.release(taken);
      assert.equal(
        await a.claimNext(c),
        undefined,
        'a started reply is not given back: its owner finishes it',
      );
    });
  });
}
