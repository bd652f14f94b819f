// The builtin digital employee answering from knowledge, timed as a visitor's client sees it: from publishing a
// question on the conversation's channel to the first envelope of the reply, and to the first envelope that holds
// the answer's text (docs/knowledge.md "Measuring it"). The help centre of corpus/ plus filler up to 10,000
// passages (scale.ts) is the company's knowledge, on SQLite and on PostgreSQL. Both times include the loopback
// round trip and the realtime hop, so they bound the server's own time from above. Goal: 50 ms.
//
// Peer, in the same run: the same server answering "hi" (small talk: the builtin's keyword answer, no search), the
// floor of a reply on this machine. BENCH_KNOWLEDGE_PASSAGES (10000) changes the size.
import { loadavg } from 'node:os';
import { TEST_DATABASES, type TestDatabase } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { connectToNewConversation, newVisitor, sendMessage } from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from '@parley/webchat-protocol';
import { percentile } from '../lib/stats.ts';
import { readCorpus, readQuestions } from './data.ts';
import { fillCompany } from './fill.ts';

// The tests' PostgreSQL (scripts/test.mjs sets it for `npm test`); the bench's own default otherwise.
process.env.PARLEY_TEST_DATABASE_URL ??=
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET_PASSAGES = Number(process.env.BENCH_KNOWLEDGE_PASSAGES ?? 10_000);
const GOAL_MS = 50;
/** Every SAMPLE-th question is asked (a reply is timed over a real connection: the whole set would take long). */
const SAMPLE = 3;
const WARM_UP = 5;

interface Timing {
  first: number;
  text: number;
}

const isReply = (e: MessageEnvelope) => e.message_snapshot.role === 'digital_employee';
const hasText = (e: MessageEnvelope) =>
  e.message_snapshot.blocks.some((b) => b.type === 'markdown' && b.content.trim() !== '');

/**
 * Asks each question in a conversation of its own, one at a time, timing its reply's first envelope and first text.
 * The rest of the reply streams on unobserved (the builtin paces its words), so the next question does not wait.
 */
async function ask(server: TestServer, companyId: string, questions: readonly string[]): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const question of questions) {
    const { c } = await connectToNewConversation(server, newVisitor(companyId));
    try {
      const started = performance.now();
      await sendMessage(c.sub, question);
      await c.log.waitFor((e) => e.some(isReply), 15_000, 'the reply');
      const first = performance.now() - started;
      await c.log.waitFor((e) => e.some((x) => isReply(x) && hasText(x)), 15_000, 'the reply text');
      timings.push({ first, text: performance.now() - started });
    } finally {
      c.close();
    }
  }
  return timings.slice(WARM_UP);
}

const row = (label: string, values: number[]) =>
  `${label.padEnd(44)}${String(values.length).padStart(6)}${[50, 99, 100]
    .map((p) => percentile(values, p).toFixed(1).padStart(9))
    .join('')}`;

async function measure(database: TestDatabase): Promise<number> {
  const server = await startTestServer({ database });
  try {
    const company = (await server.ctx.companies.create('Fernhill Coffee Co.')).id;
    const passages = await fillCompany(server.ctx.knowledge, company, TARGET_PASSAGES);
    // No ANALYZE here: the service analyses (PostgreSQL) or optimizes (SQLite) the index itself after bulk
    // indexing (packages/server/src/knowledge/knowledge.service.ts afterIndexing).
    const questions = readQuestions(readCorpus());
    // Every answerable question and every out-of-scope one that is not small talk: answers and refusals alike.
    const asked = questions
      .filter((q, i) => q.style !== 'small-talk' && i % SAMPLE === 0)
      .map((q) => q.query);
    const answers = await ask(server, company, asked);
    const floor = await ask(
      server,
      company,
      Array.from({ length: 40 }, () => 'hi'),
    );
    console.log(
      `\n${database}: ${passages} passages, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `${'ms from the question sent'.padEnd(44)}${'n'.padStart(6)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`,
    );
    console.log(
      row(
        'knowledge answer: first envelope',
        answers.map((t) => t.first),
      ),
    );
    console.log(
      row(
        'knowledge answer: first text',
        answers.map((t) => t.text),
      ),
    );
    console.log(
      row(
        'floor, small talk "hi": first envelope',
        floor.map((t) => t.first),
      ),
    );
    console.log(
      row(
        'floor, small talk "hi": first text',
        floor.map((t) => t.text),
      ),
    );
    return percentile(
      answers.map((t) => t.text),
      99,
    );
  } finally {
    await server.close();
  }
}

const verdicts: string[] = [];
for (const database of TEST_DATABASES) {
  const p99 = await measure(database);
  verdicts.push(
    `${database}: first text p99 ${p99.toFixed(1)} ms ≤ ${GOAL_MS} ms ${p99 <= GOAL_MS ? 'met' : 'NOT met'}`,
  );
}
console.log(`\ngoal, a builtin knowledge answer's first envelope with text: ${verdicts.join('; ')}`);
process.exit(0);
