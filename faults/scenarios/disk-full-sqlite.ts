// The disk fills up under a node on SQLite (the default store): its data folder is on a 32 MiB tmpfs the suite
// mounts, and a filler file takes every byte left for 10 s while visitors chat and replies stream, then is removed.
// Goals: every write refused meanwhile is answered 503 `store_unavailable` with Retry-After (REST) or publish error
// 503 temporary (realtime) — never a 500 or error 100 —, nothing acknowledged is lost, replies streaming when the disk
// filled are stored complete once there is space again (0 error blocks, 0 words taken back), the node stays up and
// answers again within 15 s of the space coming back.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CentrifugeVisitor } from '../lib/centrifuge-visitor.ts';
import { cleanupAll, installCleanupHandlers } from '../lib/cleanup.ts';
import { answersAgain } from '../lib/probe.ts';
import { verdictLines } from '../lib/report.ts';
import { ANSWERS_AGAIN_GOAL_MS, figureNotes, nodeProblems, nodesAlive } from '../lib/scenario.ts';
import { SdkVisitor } from '../lib/sdk-visitor.ts';
import { STORY_WORDS, storyText } from '../lib/seed.ts';
import { saveRecordsFrom, settleFrom } from '../lib/settle.ts';
import { startSqliteNode } from '../lib/sqlite-node.ts';
import { Traffic } from '../lib/traffic.ts';

const NAME = 'disk-full-sqlite';
const FULL_FOR_MS = 10_000;
const ANSWERS_AGAIN_BOUND_MS = 30_000;

installCleanupHandlers();
const started = Date.now();
const log = (text: string) =>
  process.stderr.write(`[${NAME} ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}\n`);
const limit = setTimeout(() => {
  process.stdout.write(`${NAME}: ERROR still running after 240 s FAIL\n`);
  void cleanupAll().finally(() => process.exit(1));
}, 240_000);
limit.unref();

/** A REST write (a new conversation) during the outage, as an integrator's backend or a new visitor makes it. */
async function restWrite(url: string, companyId: string): Promise<string> {
  try {
    const res = await fetch(`${url}/sdk/v1/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': randomUUID(), 'x-company': companyId },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json().catch(() => ({}))) as { code?: string };
    const retryAfter = res.headers.get('retry-after');
    return `${res.status}${body.code ? ` ${body.code}` : ''}${res.status === 503 && !retryAfter ? ' (no Retry-After)' : ''}`;
  } catch (err) {
    return `no answer (${(err as Error).message})`;
  }
}

let exitCode = 1;
const visitors: Array<CentrifugeVisitor | SdkVisitor> = [];
try {
  const system = await startSqliteNode({ run: NAME, diskMiB: 32 });
  const { node, disk, seeded } = system;
  log(`node up on SQLite at ${node.url}, data folder on a tmpfs at ${disk.dir}`);
  const centrifuge = Array.from(
    { length: 4 },
    (_, i) => new CentrifugeVisitor(`cf-${i + 1}`, node.url, seeded.companyId),
  );
  visitors.push(
    ...centrifuge,
    ...Array.from({ length: 4 }, (_, i) => new SdkVisitor(`sdk-${i + 1}`, node.url, seeded.companyId)),
  );
  await Promise.all(visitors.map((v) => v.start()));
  const traffic = new Traffic(visitors, { minIntervalMs: 500, maxIntervalMs: 1_000, maxInFlight: 3 });
  traffic.start();
  await sleep(5_000);
  const probe = centrifuge[0]!;
  if ((await answersAgain(probe, Date.now(), ANSWERS_AGAIN_BOUND_MS)) === null)
    throw new Error('the node did not answer before the disk filled up');
  // A story streams when the disk fills: it must be stored complete once there is space again.
  const teller = new CentrifugeVisitor('story', node.url, seeded.companyId);
  visitors.push(teller);
  await teller.start();
  void teller.send('tell me a story');
  const storyOf = () => [...teller.view.messages.values()].find((m) => m.role === 'digital_employee');
  const streaming = await teller.view.holdsWithin(() => {
    const story = storyOf();
    return story?.status === 'partial' && story.text.split(' ').length >= 5;
  }, 20_000);
  if (!streaming) throw new Error('the story did not start streaming within 20 s');
  log(`${traffic.sent} messages sent in warm-up; filling the disk`);

  disk.fill();
  log('disk full');
  const rest: Record<string, number> = {};
  const fullUntil = Date.now() + FULL_FOR_MS;
  while (Date.now() < fullUntil) {
    const answer = await restWrite(node.url, seeded.companyId);
    rest[answer] = (rest[answer] ?? 0) + 1;
    await sleep(500);
  }
  disk.free();
  const t0 = Date.now();
  log('space freed');
  const answeredAfter = await answersAgain(probe, t0, ANSWERS_AGAIN_BOUND_MS, () => !node.running);
  log(answeredAfter === null ? 'no answer within 30 s' : `answers again after ${answeredAfter} ms`);

  await sleep(5_000);
  await traffic.stop(20_000);
  log(`traffic stopped after ${traffic.sent} messages; settling`);
  const figures = await settleFrom(system.readStored, visitors, 20_000);
  log(`measured; records in ${await saveRecordsFrom(system.readStored, system.artifacts, visitors)}`);

  const problems: string[] = [];
  const refusedRight = rest['503 store_unavailable'] ?? 0;
  const wrong = Object.keys(rest).filter((a) => a !== '503 store_unavailable' && a !== '201');
  if (refusedRight === 0)
    problems.push('no REST write was refused while the disk was full (did it fill up?)');
  if (wrong.length > 0)
    problems.push(`REST writes answered otherwise while the disk was full: ${wrong.join(', ')}`);
  const refusedPublishes = Object.entries(figures.retriedReasons)
    .filter(([reason]) => reason.startsWith('503'))
    .reduce((n, [, count]) => n + count, 0);
  const story = storyOf();
  if (story?.status !== 'complete' || story.text !== storyText() || story.errorCodes.length > 0)
    problems.push(
      `the story streaming when the disk filled ended ${story?.status ?? 'nowhere'} with ${story?.text.split(' ').length ?? 0}/${STORY_WORDS} words${story?.errorCodes.length ? ` and ${story.errorCodes.join(',')}` : ''}`,
    );
  if (figures.errored > 0) problems.push(`${figures.errored} reply(ies) ended with an error block`);
  if (figures.takenBack > 0)
    problems.push(`${figures.takenBack} message(s) took back words their client had been shown`);
  const alive = await nodesAlive({ nodes: [node] });
  const verdict = {
    figures,
    answersAgainMs: [answeredAfter],
    answersAgainBoundMs: ANSWERS_AGAIN_BOUND_MS,
    answersAgainGoalMs: ANSWERS_AGAIN_GOAL_MS,
    nodesAlive: alive.filter(Boolean).length,
    nodes: 1,
    problems: [...problems, ...nodeProblems({ nodes: [node] }, alive)],
    notes: [
      `REST writes while the disk was full: ${Object.entries(rest)
        .map(([answer, n]) => `${n}× ${answer}`)
        .join(', ')}`,
      `publishes refused 503 and retried: ${refusedPublishes}`,
      ...figureNotes(figures),
    ],
    artifacts: system.artifacts,
    passed: false,
  };
  for (const line of verdictLines(NAME, verdict)) process.stdout.write(`${line}\n`);
  exitCode = verdict.passed ? 0 : 1;
} catch (err) {
  process.stdout.write(`${NAME}: ERROR ${(err as Error).message.split('\n')[0]} FAIL\n`);
} finally {
  for (const visitor of visitors) visitor.close();
  await cleanupAll();
}
process.exit(exitCode);
