// Replies streaming while PostgreSQL is away: the contract is that each keeps streaming to its visitor and is stored
// complete, with its full text, once the database is back; none ends with `reply_interrupted` (or any error), and no
// client is ever shown words that the final text then takes back. Used by the pg-stop-*-streaming scenarios.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CentrifugeVisitor } from './centrifuge-visitor.ts';
import type { ViewedMessage } from './client-view.ts';
import type { ScenarioContext } from './scenario.ts';
import { STORY_WORDS, storyText } from './seed.ts';

/** Visitors who ask for the long story (≈ 7 s of streaming) right before the database stops. */
const STORYTELLERS = 4;
/**
 * Words each story must have streamed before the stop: mid-stream when the database goes, and with the rest
 * (≈ 3 s) ending while it is still away, so each completion must wait for it.
 */
const WORDS_BEFORE_STOP = 70;
/** When, into the outage, the stories must be seen to have grown. */
const GROWN_AFTER_MS = 2_000;

const wordsOf = (m: ViewedMessage | undefined) => (m?.text ? m.text.split(' ').length : 0);
const storyOf = (visitor: CentrifugeVisitor) =>
  [...visitor.view.messages.values()].find((m) => m.role === 'digital_employee');

/**
 * Starts STORYTELLERS stories, stops PostgreSQL (fast shutdown) once every one of them streams, keeps it stopped for
 * `outageMs`, starts it again and measures "answers again". Adds the scenario's goals: every story ends complete with
 * its full text, 0 replies with an error block, 0 words taken back, and each story kept streaming while the
 * database was stopped.
 */
export async function storiesThroughPgStop(ctx: ScenarioContext, outageMs: number): Promise<void> {
  const tellers = await Promise.all(
    Array.from({ length: STORYTELLERS }, (_, i) => ctx.addCentrifugeVisitor(`story-${i + 1}`)),
  );
  for (const teller of tellers) void teller.send('tell me a story');
  const streaming = await Promise.all(
    tellers.map((t) =>
      t.view.holdsWithin((v) => {
        const story = [...v.messages.values()].find((m) => m.role === 'digital_employee');
        return story?.status === 'partial' && wordsOf(story) >= WORDS_BEFORE_STOP;
      }, 20_000),
    ),
  );
  if (streaming.some((s) => !s)) throw new Error('the stories did not start streaming within 20 s');

  await ctx.cluster.pg.stop('fast');
  const atStop = tellers.map((t) => wordsOf(storyOf(t)));
  ctx.log(`PostgreSQL stopped while ${STORYTELLERS} stories streamed (words shown: ${atStop.join(', ')})`);
  // Every story must have grown since: the visitors keep reading while the database is away.
  await sleep(GROWN_AFTER_MS);
  const duringOutage = tellers.map((t) => wordsOf(storyOf(t)));
  ctx.log(`${GROWN_AFTER_MS / 1000} s into the outage, words shown: ${duringOutage.join(', ')}`);
  for (const [i, teller] of tellers.entries())
    if (duringOutage[i]! <= atStop[i]!)
      ctx.problem(`${teller.label}: its story did not stream while PostgreSQL was stopped`);
  await sleep(Math.max(0, outageMs - GROWN_AFTER_MS));
  await ctx.cluster.pg.start();
  const t0 = Date.now();
  ctx.log('PostgreSQL started again');
  await ctx.measureAnswersAgain(t0);

  ctx.goal(() => {
    const broken = tellers.filter((t) => {
      const story = storyOf(t);
      return (
        story?.status !== 'complete' ||
        story.text !== storyText() ||
        story.errorCodes.length > 0 ||
        story.takenBack
      );
    });
    if (broken.length === 0) return undefined;
    const how = broken.map((t) => {
      const story = storyOf(t);
      return `${t.label}: ${story?.status ?? 'none'}, ${wordsOf(story)}/${STORY_WORDS} words${story?.errorCodes.length ? `, ${story.errorCodes.join(',')}` : ''}${story?.takenBack ? ', words taken back' : ''}`;
    });
    return `${broken.length} stor(ies) streamed through the outage did not end complete with their full text (${how.join('; ')})`;
  });
  ctx.goal((f) => (f.errored > 0 ? `${f.errored} reply(ies) ended with an error block` : undefined));
  ctx.goal((f) =>
    f.takenBack > 0 ? `${f.takenBack} message(s) took back words their client had been shown` : undefined,
  );
}
