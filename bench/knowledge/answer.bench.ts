// The builtin digital employee answering from knowledge, timed as a visitor's client sees it: from publishing a
// question on the conversation's channel to the first envelope of the reply, and to the first envelope that holds
// the answer's text (docs/knowledge.md "Measuring it"). The help centre of corpus/ plus filler up to 10,000
// passages (scale.ts) is the company's knowledge, on SQLite and on PostgreSQL. Both times include the loopback
// round trip and the realtime hop, so they bound the server's own time from above. Goal: 50 ms.
//
// Peer, in the same run: the same server answering "hi" (small talk: the builtin's keyword answer, no search), the
// floor of a reply on this machine. BENCH_KNOWLEDGE_PASSAGES (10000) changes the size; `--sqlite` or `--postgres` runs
// one store.
//
// BENCH_COMPARE_ROOT=<another checkout> runs that checkout's server beside this one's, in the same process, each on
// its own company of the same passages, the questions asked of each in turn (which goes first alternates), so both
// see the same load: e.g. `git archive` of main into /tmp, its node_modules linked to this one's but for @parley.
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
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
 * Asks one question in a conversation of its own, timing its reply's first envelope and first text. The rest of the
 * reply streams on unobserved (the builtin paces its words), so the next question does not wait.
 */
async function askOne(server: TestServer, companyId: string, question: string): Promise<Timing> {
  const { c } = await connectToNewConversation(server, newVisitor(companyId));
  try {
    const started = performance.now();
    await sendMessage(c.sub, question);
    await c.log.waitFor((e) => e.some(isReply), 15_000, 'the reply');
    const first = performance.now() - started;
    await c.log.waitFor((e) => e.some((x) => isReply(x) && hasText(x)), 15_000, 'the reply text');
    return { first, text: performance.now() - started };
  } finally {
    c.close();
  }
}

/** A checkout's server with its company filled: this checkout's, or BENCH_COMPARE_ROOT's. */
interface Side {
  label: string;
  server: TestServer;
  company: string;
  answers: Timing[];
  floor: Timing[];
}

/** Each question asked of every side in turn, the first side alternating; the first WARM_UP of each left out. */
async function ask(sides: Side[], questions: readonly string[], into: 'answers' | 'floor'): Promise<void> {
  for (const [i, question] of questions.entries()) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const timing = await askOne(side.server, side.company, question);
      if (i >= WARM_UP) side[into].push(timing);
    }
  }
}

const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT;
type Start = typeof startTestServer;
const starts: Array<[string, Start]> = [['this checkout', startTestServer]];
if (COMPARE_ROOT) {
  // The other checkout's own packages (its node_modules/@parley links point into it), in this same process.
  const other = (await import(pathToFileURL(`${COMPARE_ROOT}/packages/testing/src/test-server.ts`).href)) as {
    startTestServer: Start;
  };
  starts.push(['@compare', other.startTestServer]);
}

/** Wide enough for a row's label with its checkout's (BENCH_COMPARE_ROOT). */
const LABEL_WIDTH = 64;
const row = (label: string, values: number[]) =>
  `${label.padEnd(LABEL_WIDTH)}${String(values.length).padStart(6)}${[50, 99, 100]
    .map((p) => percentile(values, p).toFixed(1).padStart(9))
    .join('')}`;

async function measure(database: TestDatabase): Promise<number> {
  const sides: Side[] = [];
  try {
    let passages = 0;
    for (const [label, start] of starts) {
      const server = await start({ database });
      const company = (await server.ctx.companies.create('Fernhill Coffee Co.')).id;
      sides.push({ label, server, company, answers: [], floor: [] });
      passages = await fillCompany(server.ctx.knowledge, company, TARGET_PASSAGES);
    }
    // No ANALYZE here: the service analyses (PostgreSQL) or optimizes (SQLite) the index itself after bulk
    // indexing (packages/server/src/knowledge/knowledge.service.ts afterIndexing).
    const questions = readQuestions(readCorpus());
    // Every answerable question and every out-of-scope one that is not small talk: answers and refusals alike.
    const asked = questions
      .filter((q, i) => q.style !== 'small-talk' && i % SAMPLE === 0)
      .map((q) => q.query);
    const loadBefore = loadavg()[0]!.toFixed(1);
    await ask(sides, asked, 'answers');
    await ask(
      sides,
      Array.from({ length: 40 }, () => 'hi'),
      'floor',
    );
    console.log(
      `\n${database}: ${passages} passages, load ${loadBefore} before the questions, ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')} after`,
    );
    console.log(
      `${'ms from the question sent'.padEnd(LABEL_WIDTH)}${'n'.padStart(6)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`,
    );
    for (const side of sides) {
      const at = sides.length > 1 ? ` (${side.label})` : '';
      console.log(
        row(
          `knowledge answer: first envelope${at}`,
          side.answers.map((t) => t.first),
        ),
      );
      console.log(
        row(
          `knowledge answer: first text${at}`,
          side.answers.map((t) => t.text),
        ),
      );
      // The server's part after the typing envelope: the look-up and search the text waits for.
      console.log(
        row(
          `knowledge answer: first text after first envelope${at}`,
          side.answers.map((t) => t.text - t.first),
        ),
      );
      console.log(
        row(
          `floor, small talk "hi": first envelope${at}`,
          side.floor.map((t) => t.first),
        ),
      );
      console.log(
        row(
          `floor, small talk "hi": first text${at}`,
          side.floor.map((t) => t.text),
        ),
      );
    }
    return percentile(
      sides[0]!.answers.map((t) => t.text),
      99,
    );
  } finally {
    for (const side of sides) await side.server.close();
  }
}

const verdicts: string[] = [];
// `--sqlite` or `--postgres` measures that store alone.
const only = TEST_DATABASES.find((d) => process.argv.includes(`--${d}`));
for (const database of only ? [only] : TEST_DATABASES) {
  const p99 = await measure(database);
  verdicts.push(
    `${database}: first text p99 ${p99.toFixed(1)} ms ≤ ${GOAL_MS} ms ${p99 <= GOAL_MS ? 'met' : 'NOT met'}`,
  );
}
console.log(`\ngoal, a builtin knowledge answer's first envelope with text: ${verdicts.join('; ')}`);
process.exit(0);
