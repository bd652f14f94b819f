import { textOf } from '@parley/webchat-protocol';
import {
  answerFrom,
  DONT_KNOW,
  HANDING_OVER,
  HANDOVER_OFFER,
  isHandoverPostback,
  relevantPassages,
  sourcesBlock,
} from '../../knowledge/grounding.ts';
import type { KnowledgeSearch } from '../../knowledge/knowledge-search.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import { type BuiltinAnswer, SETTINGS_DEFAULTS } from '../digital-employees.settings.ts';
import type { ReplyChunk, Responder, RespondInput } from './responder.ts';
import { ResponderAbortedError } from './responder-errors.ts';

/**
 * The bot that needs nothing outside Parley: keyword-matched answers with a fallback. Deterministic — the reply
 * depends only on the settings and the message text, never on randomness or the clock.
 */
export class BuiltinResponder implements Responder {
  /** Answers each message on its own. */
  readonly historyLimit = 0;

  constructor(
    private readonly employee: Pick<DigitalEmployee, 'settings'>,
    private readonly knowledge?: KnowledgeSearch,
  ) {}

  /**
   * Streams the answer word by word, then what it is based on and the quick replies it offers. The order of
   * preference (docs/knowledge.md "Cited answers"): a `handover` postback hands over; a relevant knowledge passage
   * is quoted with its source; a configured keyword answer (greetings, small talk) is given; else, when the company
   * has knowledge, "I don't know" with the `handover` option, and without knowledge the configured fallback.
   */
  async *respond(input: RespondInput): AsyncIterable<ReplyChunk> {
    const text = textOf(input.message);
    if (isHandoverPostback(input.message)) {
      input.requestHuman?.();
      yield* this.words(HANDING_OVER, input.signal);
      return;
    }
    // A company without a ready source is never searched: one indexed lookup instead of a search (its vocabulary
    // lookup, a typo lookup for every word its empty vocabulary lacks, a full-text query) on every visitor message.
    const knowledge =
      this.knowledge && (await this.knowledge.hasSources(input.companyId)) ? this.knowledge : undefined;
    const passages = knowledge ? await relevantPassages(knowledge, input.companyId, text, 3) : [];
    const best = passages[0];
    if (best) {
      yield* this.words(answerFrom(best), input.signal);
      yield { blocks: [sourcesBlock([best])] };
      return;
    }
    const answer = bestAnswer(this.employee.settings.answers ?? [], text);
    if (!answer && knowledge) {
      // The company has knowledge, and none of it answers: say so and offer a person, never guess.
      yield* this.words(DONT_KNOW, input.signal);
      yield { blocks: [HANDOVER_OFFER] };
      return;
    }
    yield* this.words(replyFor(this.employee, text), input.signal);
    if (answer?.quick_replies) yield { blocks: [{ type: 'quick_replies', options: answer.quick_replies }] };
  }

  private async *words(reply: string, signal: AbortSignal): AsyncIterable<string> {
    const delayMs = this.employee.settings.word_delay_ms ?? SETTINGS_DEFAULTS.wordDelayMs;
    const pauses = new Pauses(signal);
    try {
      for (const piece of wordPieces(reply)) {
        if (signal.aborted) throw new ResponderAbortedError();
        yield piece;
        if (delayMs > 0) await pauses.next(delayMs);
      }
    } finally {
      pauses.close();
    }
  }
}

/** The answer whose keywords best match the text, else the fallback. */
export function replyFor(employee: Pick<DigitalEmployee, 'settings'>, text: string): string {
  const answer = bestAnswer(employee.settings.answers ?? [], text);
  return answer?.answer ?? employee.settings.fallback ?? SETTINGS_DEFAULTS.fallback;
}

/**
 * Scores each answer by the words of its keywords found in the text (a matched phrase of three words counts three,
 * so specific phrases beat single words); the first answer wins a tie. Zero means no match.
 */
export function bestAnswer(answers: BuiltinAnswer[], text: string): BuiltinAnswer | undefined {
  const haystack = ` ${normalize(text)} `;
  let best: BuiltinAnswer | undefined;
  let bestScore = 0;
  for (const answer of answers) {
    let score = 0;
    for (const keyword of answer.keywords) {
      const needle = normalize(keyword);
      if (needle && haystack.includes(` ${needle} `)) score += needle.split(' ').length;
    }
    if (score > bestScore) {
      best = answer;
      bestScore = score;
    }
  }
  return best;
}

/** Lower case, letters and digits only, single spaces: "Who ARE you?!" → "who are you". */
function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Splits a reply into words that keep their following whitespace, so the pieces concatenate to the exact reply. */
export function wordPieces(reply: string): string[] {
  return reply.match(/\s*\S+\s*/g) ?? (reply ? [reply] : []);
}

/**
 * The pauses between the words of one reply, ended at once by the reply's signal. One abort listener serves the
 * whole reply rather than one per word: with a thousand replies streaming, adding and removing a listener for every
 * word was a noticeable share of the server's time.
 */
class Pauses {
  private pending: { timer: NodeJS.Timeout; reject: (error: Error) => void } | undefined;
  private readonly onAbort = () => {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.reject(new ResponderAbortedError());
  };

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  next(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.reject(new ResponderAbortedError());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        resolve();
      }, ms);
      this.pending = { timer, reject };
    });
  }

  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = undefined;
  }
}
