import { type Kysely, sql, type Transaction } from 'kysely';
import { compileOnce } from '../../storage/compiled.ts';
import type { Dialect, Store } from '../../storage/database.ts';
import { clockMs } from '../../storage/db-clock.ts';
import type { GroupCommit } from '../../storage/group-commit.ts';
import type { Database } from '../../storage/schema.ts';

/** A user message whose reply this node now owns. */
export interface ReplyJob {
  messageId: string;
  conversationId: string;
  position: number;
  /** Set when the job was taken over from a node whose lease lapsed after it had started the reply. */
  replyMessageId: string | null;
  /** Taken over from a node that stopped renewing its lease (it died, or lost the store for too long). */
  takenOver: boolean;
}

/** This node no longer owns the job (its lease lapsed and another node took it): stop without writing. */
export class LeaseLost extends Error {
  constructor(messageId: string) {
    super(`the reply job of message ${messageId} belongs to another node now`);
  }
}

export interface ReplyQueueOptions {
  /** This node's id (random per process): the owner of the jobs it runs. */
  nodeId: string;
  /** How long a claim lasts without renewal: another node takes the job over once it lapses. */
  leaseMs: number;
  /** A queued job older than this with nothing running in its conversation counts as stalled (swept). */
  stallMs: number;
}

type JobRow = Database['reply_jobs'] & { now: number };

/**
 * The durable line of user messages waiting for a digital-employee reply, shared by every node through the store.
 * A job is written in the same transaction as its user message (`enqueue`), so an acknowledged message always
 * has its place, whatever happens to the node that stored it. One job per conversation runs at a time, in
 * position order: `claimNext` takes the head of the line under the conversation's row lock. The running node
 * renews its lease every few seconds; when it stops (crash, `kill -9`, lost network), the lease lapses and any
 * node's `claimNext` takes the job over — seconds after the death, not after the responder timeout.
 */
export class ReplyQueue {
  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  /** Claims share commits with the other writes of their event-loop turn on SQLite (storage/group-commit.ts). */
  private readonly writes: GroupCommit;

  constructor(
    store: Pick<Store, 'db' | 'dialect' | 'writes'>,
    private readonly options: ReplyQueueOptions,
  ) {
    this.db = store.db;
    this.dialect = store.dialect;
    this.writes = store.writes;
    this.setReplyMessage = compileOnce<{ reply_message_id: string; message_id: string; node_id: string }>(
      (arg) =>
        this.db
          .updateTable('reply_jobs')
          .set({ reply_message_id: arg('reply_message_id') })
          .where('message_id', '=', arg('message_id'))
          .where('node_id', '=', arg('node_id'))
          .where('state', '=', 'running'),
    );
    this.lockConversation = compileOnce<{ id: string }>((arg) =>
      this.db.selectFrom('conversations').select('id').where('id', '=', arg('id')).forUpdate(),
    );
    this.jobsOf = compileOnce<{ conversation_id: string; now_ms: number }>((arg) =>
      this.db
        .selectFrom('reply_jobs')
        .selectAll()
        // The database's clock on PostgreSQL (part of the SQL); this process's on SQLite, bound per call.
        .select(
          (this.dialect === 'postgres' ? clockMs(this.dialect) : sql<number>`${arg('now_ms')}`).as('now'),
        )
        .where('conversation_id', '=', arg('conversation_id'))
        .orderBy('position')
        .limit(50),
    );
    this.takeJob = compileOnce<{ message_id: string; lease_expires_at: number }>((arg) =>
      this.db
        .updateTable('reply_jobs')
        .set({ state: 'running', node_id: this.options.nodeId, lease_expires_at: arg('lease_expires_at') })
        .where('message_id', '=', arg('message_id')),
    );
    this.insertClaimedIfFree = this.compileClaimIfFree();
    this.insertQueued = this.compileInsert();
    this.deleteFinished = compileOnce<{ message_id: string; node_id: string }>((arg) =>
      this.db
        .deleteFrom('reply_jobs')
        .where('message_id', '=', arg('message_id'))
        .where('node_id', '=', arg('node_id')),
    );
  }

  // Statements of every visitor message, compiled once (storage/compiled.ts).
  private readonly lockConversation;
  private readonly jobsOf;
  private readonly takeJob;
  private readonly setReplyMessage;
  private readonly insertClaimedIfFree;
  private readonly insertQueued;
  private readonly deleteFinished;

  /**
   * The clock of the inserts: the database's on PostgreSQL (part of the SQL, as `clockMs` gives it) and this
   * process's on SQLite (bound per call: `now_ms`).
   */
  private clockOf(nowMs: number, offsetMs: number) {
    return this.dialect === 'postgres'
      ? clockMs(this.dialect, offsetMs)
      : sql<number>`${nowMs} + ${offsetMs}`;
  }

  /** The insert of a queued job. */
  private compileInsert() {
    return compileOnce<{ message_id: string; conversation_id: string; position: number; now_ms: number }>(
      (arg) =>
        this.db.insertInto('reply_jobs').values({
          message_id: arg('message_id'),
          conversation_id: arg('conversation_id'),
          position: arg('position'),
          state: 'queued',
          node_id: null,
          reply_message_id: null,
          lease_expires_at: null,
          queued_at: this.clockOf(arg('now_ms'), 0),
        }),
    );
  }

  /**
   * The insert of a job that this node claims, with the reply it will stream, when the conversation's line is empty,
   * and that queues otherwise: one statement (it returns the state it got) where looking at the line first took two
   * round trips of the visitor message's transaction. The values are cast where PostgreSQL would take a parameter of
   * INSERT … SELECT as text.
   */
  private compileClaimIfFree() {
    type Args = {
      message_id: string;
      conversation_id: string;
      position: number;
      now_ms: number;
      reply_message_id: string | null;
    };
    return compileOnce<Args>((arg) => {
      const free = sql`not exists (select 1 from reply_jobs where conversation_id = ${arg('conversation_id')})`;
      const ifFree = (value: unknown) => sql`case when ${free} then ${value} else null end`;
      return this.db
        .insertInto('reply_jobs')
        .columns([
          'message_id',
          'conversation_id',
          'position',
          'state',
          'node_id',
          'reply_message_id',
          'lease_expires_at',
          'queued_at',
        ])
        .expression(
          sql`select ${arg('message_id')}, ${arg('conversation_id')}, cast(${arg('position')} as integer),
            case when ${free} then 'running' else 'queued' end, ${ifFree(this.options.nodeId)},
            ${ifFree(arg('reply_message_id'))}, ${ifFree(this.clockOf(arg('now_ms'), this.options.leaseMs))},
            ${this.clockOf(arg('now_ms'), 0)}`,
        )
        .returning('state');
    });
  }

  /** Messages waiting for or getting a reply, every node's together (the queued-replies gauge). */
  async size(): Promise<number> {
    const row = await this.db
      .selectFrom('reply_jobs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Puts a just-stored user message in line, inside the transaction that stores it (which holds the conversation's
   * row lock, like `claimNext`). With `claim`, when nothing else is in the conversation's line, this node takes the
   * job at once, recording `claim.replyMessageId` as the reply it streams (the caller inserts that message in the
   * same transaction; null: none yet, `attachReply` records it later), and gets it back: the claim costs no transaction of its own, and no statement beyond the
   * insert.
   */
  async enqueue(
    trx: Transaction<Database>,
    job: { messageId: string; conversationId: string; position: number },
    claim?: { replyMessageId: string | null },
  ): Promise<ReplyJob | undefined> {
    const row = {
      message_id: job.messageId,
      conversation_id: job.conversationId,
      position: job.position,
      now_ms: Date.now(),
    };
    if (!claim) {
      await trx.executeQuery(this.insertQueued(row));
      return undefined;
    }
    const { rows } = await trx.executeQuery<{ state: string }>(
      this.insertClaimedIfFree({ ...row, reply_message_id: claim.replyMessageId }),
    );
    return rows[0]?.state === 'running' ? { ...job, replyMessageId: null, takenOver: false } : undefined;
  }

  /**
   * Takes the conversation's next job for this node, or `undefined` when its line is empty or a live node is
   * running one. A running job whose lease lapsed is taken over (`takenOver`): its node is gone — unless
   * `mayTakeOver` (asked outside the transaction, e.g. about a heartbeat in the broker: reply-heartbeats.ts) says its
   * node still runs it. `finished` is the job this node just ended: it leaves the line in the same transaction (see
   * `finish`).
   */
  async claimNext(
    conversationId: string,
    finished?: ReplyJob,
    mayTakeOver?: (job: ReplyJob) => Promise<boolean>,
  ): Promise<ReplyJob | undefined> {
    const claim = await this.claimIn(conversationId, finished, mayTakeOver ? 'ask' : 'take');
    if (claim?.lapsed !== true) return claim?.job;
    if (!(await mayTakeOver!(claim.job))) return undefined;
    // Asked outside any transaction: take it only if it is still the same lapsed job.
    return (await this.claimIn(conversationId, undefined, claim.job.messageId))?.job;
  }

  /**
   * One claim transaction. `lapsed`: a lapsed job found is taken (`take`), only reported (`ask`), or taken only if
   * it is the job with this message id.
   */
  private claimIn(
    conversationId: string,
    finished: ReplyJob | undefined,
    lapsed: 'take' | 'ask' | string,
  ): Promise<{ job: ReplyJob; lapsed?: true } | undefined> {
    return this.writes.run(async (trx) => {
      // Claims and message inserts of one conversation queue behind its row lock (SQLite: one writer anyway). Taken
      // first, as every claim does, so two claims never lock rows in opposite orders.
      if (this.dialect === 'postgres') {
        await trx.executeQuery(this.lockConversation({ id: conversationId }));
      }
      if (finished) await this.finishIn(trx, finished);
      const { rows } = await trx.executeQuery<JobRow>(
        this.jobsOf({ conversation_id: conversationId, now_ms: Date.now() }),
      );
      const running = rows.find((r) => r.state === 'running');
      if (running) {
        if ((running.lease_expires_at ?? 0) > running.now) return undefined;
        if (lapsed === 'ask') return { job: toJob(running, true), lapsed: true };
        if (lapsed !== 'take' && lapsed !== running.message_id) return undefined;
        await this.take(trx, running.message_id, running.now);
        return { job: toJob(running, true) };
      }
      const next = rows[0];
      if (!next) return undefined;
      await this.take(trx, next.message_id, next.now);
      return { job: toJob(next, false) };
    });
  }

  /** Records the reply message a job streams, with its insert; throws `LeaseLost` (rolling it back) if not ours. */
  async attachReply(trx: Transaction<Database>, job: ReplyJob, replyMessageId: string): Promise<void> {
    const result = await trx.executeQuery(
      this.setReplyMessage({
        reply_message_id: replyMessageId,
        message_id: job.messageId,
        node_id: this.options.nodeId,
      }),
    );
    if (Number(result.numAffectedRows ?? 0) === 0) throw new LeaseLost(job.messageId);
  }

  /** The job is done (answered, or nothing to answer): it leaves the line if this node still owns it. */
  async finish(job: ReplyJob): Promise<void> {
    await this.finishIn(this.db, job);
  }

  private async finishIn(db: Kysely<Database>, job: ReplyJob): Promise<void> {
    await db.executeQuery(this.deleteFinished({ message_id: job.messageId, node_id: this.options.nodeId }));
  }

  /** Lets every running job's lease lapse now: at the start of a lone node, whatever ran before belongs to no one. */
  async expireAllLeases(): Promise<void> {
    await this.db
      .updateTable('reply_jobs')
      .set({ lease_expires_at: 0 })
      .where('state', '=', 'running')
      .execute();
  }

  /** Gives a claimed job back to the line without having started it (the node is draining). */
  async release(job: ReplyJob): Promise<void> {
    await this.db
      .updateTable('reply_jobs')
      .set({ state: 'queued', node_id: null, lease_expires_at: null })
      .where('message_id', '=', job.messageId)
      .where('node_id', '=', this.options.nodeId)
      .where('reply_message_id', 'is', null)
      .execute();
  }

  /**
   * Extends the leases of the jobs this node is running now (`messageIds`); a job it gave up on is not among
   * them, so its lease lapses and another node takes it over. Returns how many this node still owns.
   */
  async renewLeases(messageIds: string[]): Promise<number> {
    if (messageIds.length === 0) return 0;
    const result = await this.db
      .updateTable('reply_jobs')
      .set({ lease_expires_at: clockMs(this.dialect, this.options.leaseMs) })
      .where('message_id', 'in', messageIds)
      .where('node_id', '=', this.options.nodeId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Conversations whose line nobody is working on: a running job with a lapsed lease (its node died), or a queued
   * job older than `stallMs` with nothing running (its node died before claiming it, or two nodes raced).
   */
  async stalledConversations(limit = 100): Promise<string[]> {
    const rows = await this.db
      .selectFrom('reply_jobs as j')
      .select('j.conversation_id')
      .distinct()
      .where(({ eb, and, or, not, exists, selectFrom }) =>
        or([
          and([eb('j.state', '=', 'running'), eb('j.lease_expires_at', '<', clockMs(this.dialect))]),
          and([
            eb('j.state', '=', 'queued'),
            eb('j.queued_at', '<', clockMs(this.dialect, -this.options.stallMs)),
            not(
              exists(
                selectFrom('reply_jobs as r')
                  .select('r.message_id')
                  .whereRef('r.conversation_id', '=', 'j.conversation_id')
                  .where('r.state', '=', 'running'),
              ),
            ),
          ]),
        ]),
      )
      .limit(limit)
      .execute();
    return rows.map((r) => r.conversation_id);
  }

  private async take(trx: Transaction<Database>, messageId: string, now: number): Promise<void> {
    await trx.executeQuery(
      this.takeJob({ message_id: messageId, lease_expires_at: now + this.options.leaseMs }),
    );
  }
}

function toJob(row: Database['reply_jobs'], takenOver: boolean): ReplyJob {
  return {
    messageId: row.message_id,
    conversationId: row.conversation_id,
    position: row.position,
    replyMessageId: row.reply_message_id,
    takenOver,
  };
}
