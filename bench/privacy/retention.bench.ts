// The retention sweep (packages/server/src/privacy/retention.ts) deleting a 100,000-message data set — 1,000 resolved
// conversations of 100 messages, past the company's `resolved_conversation_days` — in its batches, while a chat
// goes on: a message stored and published every 20 ms into an open conversation. SQLite (the embedded default)
// unless BENCH_DATABASE_URL names a PostgreSQL database (a schema of its own, dropped after); the memory broker
// unless BENCH_REDIS_URL names a Redis server (the publishes then go through it, as in a cluster).
//
// Run twice in one process, on two companies with the same data set: unpaced (batches bounded by rows only, as
// before) and paced by time (RetentionSweeper's default `batchBudgetOf`). Reported for each: the sweep's batches
// (count, duration p50/p99/max), rows deleted by kind, the whole sweep's time, and the chat's publish latency (store
// insert + realtime publish) before any sweep, during each and after both (p50/p99/max): the floor measured at both
// ends of the run shows what the machine's load alone does.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../packages/server/src/context.ts';
import { RetentionSweeper } from '../../packages/server/src/privacy/retention.ts';
import type { MessagesTable } from '../../packages/server/src/webchat/webchat.tables.ts';
import { chat, chatAlone, fmt, openBenchContext } from './chat-load.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 1_000);
const MESSAGES_PER_CONVERSATION = Number(process.env.BENCH_MESSAGES_PER_CONVERSATION ?? 100);
const DAY_MS = 24 * 60 * 60 * 1000;

/** Inserts the resolved conversations and their messages directly, in transactions of 5,000 rows. */
async function seed(ctx: AppContext, companyId: string): Promise<void> {
  const employee = await ctx.webchat.conversations.defaultDigitalEmployee(companyId);
  const old = new Date(Date.now() - 400 * DAY_MS).toISOString();
  const ids: string[] = [];
  for (let i = 0; i < CONVERSATIONS; i++) {
    const conversation = await ctx.webchat.conversations.create(
      { companyId, sessionId: randomUUID() },
      employee.id,
    );
    ids.push(conversation.id);
  }
  let rows: MessagesTable[] = [];
  const flush = async () => {
    const batch = rows;
    rows = [];
    await ctx.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < batch.length; i += 500)
        await trx
          .insertInto('messages')
          .values(batch.slice(i, i + 500))
          .execute();
    });
  };
  for (const conversationId of ids) {
    for (let p = 1; p <= MESSAGES_PER_CONVERSATION; p++) {
      rows.push({
        id: randomUUID(),
        conversation_id: conversationId,
        position: p,
        role: p % 2 ? 'user' : 'digital_employee',
        author_id: null,
        author_name: null,
        status: 'complete',
        blocks: JSON.stringify([
          { id: randomUUID(), type: 'markdown', content: `message ${p} of an old chat, order ${p * 7}` },
        ]),
        client_message_id: null,
        sequence: p,
        created_at: old,
        updated_at: old,
        note_meta: null,
      });
      if (rows.length >= 5_000) await flush();
    }
  }
  await flush();
  await ctx.store.db
    .updateTable('conversations')
    .set({ status: 'closed', updated_at: old, last_position: MESSAGES_PER_CONVERSATION })
    .where('id', 'in', ids)
    .execute();
}

const bench = await openBenchContext('retention');
const { ctx, setup } = bench;
/** One sweep of `companyId`'s resolved conversations while the chat goes on; prints its figures, answers the left. */
async function sweep(
  label: string,
  companyId: string,
  live: { companyId: string; id: string },
  batchBudgetMs: number | undefined,
): Promise<number> {
  await ctx.privacy.retention.set(companyId, {
    resolved_conversation_days: 30,
    delivered_webhook_days: null,
    audit_days: null,
  });
  const deleted: Record<string, number> = {};
  const sweeper = new RetentionSweeper({
    db: ctx.store.db,
    dialect: ctx.store.dialect,
    privacy: ctx.privacy.service,
    ...(batchBudgetMs === undefined ? {} : { batchBudgetMs }),
    onDeleted: (kind, n) => {
      deleted[kind] = (deleted[kind] ?? 0) + n;
    },
  });
  const during = chat(ctx, live.companyId, live.id);
  const batches: number[] = [];
  const sweepStarted = performance.now();
  // Bounded: 100,000 messages take a few thousand batches at most (10 ms of SQLite work each).
  for (let i = 0; i < 100_000; i++) {
    const started = performance.now();
    const { more } = await sweeper.runBatch(Date.now());
    batches.push(performance.now() - started);
    if (!more) break;
    // The scheduler runs the next batch at once; here only an event-loop turn apart, the harshest case.
    await new Promise((r) => setImmediate(r));
  }
  const sweepMs = performance.now() - sweepStarted;
  await during.stop();
  const left = await ctx.store.db
    .selectFrom('messages')
    .innerJoin('conversations', 'conversations.id', 'messages.conversation_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('conversations.company_id', '=', companyId)
    .executeTakeFirstOrThrow();
  console.log(
    [
      `retention sweep, ${label} (${setup}):`,
      `  deleted                   ${Object.entries(deleted)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}; messages left ${left.n}`,
      `  whole sweep               ${(sweepMs / 1000).toFixed(1)} s in ${batches.length} batches`,
      `  batch duration            ${fmt(batches)}`,
      `  publish during the sweep  ${fmt(during.latencies)}`,
    ].join('\n'),
  );
  return Number(left.n);
}

try {
  await ctx.webchat.start();
  // Two companies with the same data set: one swept as before pacing (batches bounded by rows only), one paced by
  // time (the store's default), so the two figures come from the same process, store and machine load.
  const unpacedCompany = await ctx.companies.create('Bench retention, unpaced');
  const pacedCompany = await ctx.companies.create('Bench retention, paced');
  const chatCompany = await ctx.companies.create('Bench retention, chatting');
  const seeded = performance.now();
  await seed(ctx, unpacedCompany.id);
  await seed(ctx, pacedCompany.id);
  console.log(
    `seeded 2 × ${CONVERSATIONS} resolved conversations × ${MESSAGES_PER_CONVERSATION} messages (${setup}) in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
  );
  const employee = await ctx.webchat.conversations.defaultDigitalEmployee(chatCompany.id);
  const live = await ctx.webchat.conversations.create(
    { companyId: chatCompany.id, sessionId: randomUUID() },
    employee.id,
  );
  const liveRef = { companyId: chatCompany.id, id: live.id };

  console.log(`publish before any sweep  ${fmt(await chatAlone(ctx, liveRef, 5_000))}`);

  let left = await sweep('unpaced (rows only)', unpacedCompany.id, liveRef, Number.POSITIVE_INFINITY);
  left += await sweep('paced (default budget)', pacedCompany.id, liveRef, undefined);
  // The floor again, with no sweep: what the machine's load alone does to a publish by the end of the run.
  console.log(`publish after the sweeps  ${fmt(await chatAlone(ctx, liveRef, 5_000))}`);
  if (left !== 0) process.exitCode = 1;
} finally {
  await bench.close();
}
