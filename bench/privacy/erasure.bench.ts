// Erasing one visitor with a long history (packages/server/src/privacy/privacy.service.ts) while a chat goes on: a
// conversation of BENCH_ERASE_MESSAGES messages (20,000 by default) erased through the service, beside the same
// deletion done as erasures did before (50-row statements one after another, never giving the event loop back), on
// two identical conversations in one process. SQLite (the embedded default) unless BENCH_DATABASE_URL names a
// PostgreSQL database; the memory broker unless BENCH_REDIS_URL names a Redis server. Reported: each deletion's
// time and the chat's publish latency (store insert + realtime publish) before, during each and after.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../packages/server/src/context.ts';
import type { MessagesTable } from '../../packages/server/src/webchat/webchat.tables.ts';
import { chat, chatAlone, fmt, openBenchContext } from './chat-load.ts';

const MESSAGES = Number(process.env.BENCH_ERASE_MESSAGES ?? 20_000);

/** One conversation of MESSAGES messages, written as rows in transactions of 500. */
async function seed(ctx: AppContext, companyId: string): Promise<string> {
  const employee = await ctx.webchat.conversations.defaultDigitalEmployee(companyId);
  const conversation = await ctx.webchat.conversations.create(
    { companyId, sessionId: randomUUID() },
    employee.id,
  );
  const at = new Date().toISOString();
  for (let from = 1; from <= MESSAGES; from += 500) {
    const rows: MessagesTable[] = [];
    for (let p = from; p < Math.min(from + 500, MESSAGES + 1); p++)
      rows.push({
        id: randomUUID(),
        conversation_id: conversation.id,
        position: p,
        role: p % 2 ? 'user' : 'digital_employee',
        author_id: null,
        author_name: null,
        status: 'complete',
        blocks: JSON.stringify([
          { id: randomUUID(), type: 'markdown', content: `message ${p}, order ${p * 7}` },
        ]),
        client_message_id: null,
        sequence: 1,
        created_at: at,
        updated_at: at,
        note_meta: null,
      });
    await ctx.store.db.insertInto('messages').values(rows).execute();
  }
  await ctx.store.db
    .updateTable('conversations')
    .set({ last_position: MESSAGES })
    .where('id', '=', conversation.id)
    .execute();
  return conversation.id;
}

/** The deletion erasures did before: 50 rows a statement, one statement after another. */
async function deleteUnyielding(ctx: AppContext, conversationId: string): Promise<void> {
  for (;;) {
    const batch = await ctx.store.db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', '=', conversationId)
      .limit(50)
      .execute();
    if (batch.length === 0) return;
    await ctx.store.db
      .deleteFrom('messages')
      .where(
        'id',
        'in',
        batch.map((row) => row.id),
      )
      .execute();
  }
}

const bench = await openBenchContext('erasure');
const { ctx, setup } = bench;

/** Runs `work` while the chat goes on; prints its time and the chat's latencies. */
async function during(label: string, live: { companyId: string; id: string }, work: () => Promise<unknown>) {
  const load = chat(ctx, live.companyId, live.id);
  const started = performance.now();
  await work();
  const took = performance.now() - started;
  await load.stop();
  console.log(`${label.padEnd(36)} ${(took / 1000).toFixed(1)} s; publish meanwhile ${fmt(load.latencies)}`);
}

try {
  await ctx.webchat.start();
  const company = await ctx.companies.create('Bench erasure');
  const chatting = await ctx.companies.create('Bench erasure, chatting');
  const unyielding = await seed(ctx, company.id);
  const erased = await seed(ctx, company.id);
  const employee = await ctx.webchat.conversations.defaultDigitalEmployee(chatting.id);
  const live = {
    companyId: chatting.id,
    id: (
      await ctx.webchat.conversations.create({ companyId: chatting.id, sessionId: randomUUID() }, employee.id)
    ).id,
  };
  console.log(`seeded 2 conversations × ${MESSAGES} messages (${setup})`);
  console.log(`${'publish before'.padEnd(36)} ${fmt(await chatAlone(ctx, live, 5_000))}`);
  await during('delete, 50-row statements, no yield', live, () => deleteUnyielding(ctx, unyielding));
  await during('erase (PrivacyService.erase)', live, () =>
    ctx.privacy.service.erase(company.id, { conversation_id: erased }, { actor: 'bench' }),
  );
  console.log(`${'publish after'.padEnd(36)} ${fmt(await chatAlone(ctx, live, 5_000))}`);
} finally {
  await bench.close();
}
