import type { MessageSnapshot, ReplyBlockInput, SourcesBlock } from '@parley/webchat-protocol';
import { plainText } from './chunking.ts';
import type { KnowledgePassage, KnowledgeSearch } from './knowledge-search.ts';
import { queryTerms } from './ranking.ts';

/**
 * How digital employees answer from knowledge (docs/knowledge.md "Cited answers"): the guardrails live here, in
 * code, so no prompt can talk around them — no relevant passage and not small talk → "I don't know, shall I get a
 * person?" with the `handover` option, no model call, no `sources`; a `sources` block lists only what the answer
 * used. The responders call this module in a line or two.
 */

/** A piece of a reply, as the responders yield it (digital-employees/responders/responder.ts `ReplyChunk`). */
/** A reply's pieces: text, blocks, or the visitor-facing status of an action that runs (null clears it). */
export type GroundedChunk = string | { blocks: ReplyBlockInput[] } | { status: string | null };

/** The option id whose postback hands the conversation to a person, like `request_human`. */
export const HANDOVER_OPTION_ID = 'handover';
export const HANDOVER_OFFER: ReplyBlockInput = {
  type: 'quick_replies',
  options: [{ id: HANDOVER_OPTION_ID, label: 'Talk to a person' }],
};
export const DONT_KNOW =
  "I'm sorry, I don't know the answer to that. Shall I get a person from the team for you?";
export const HANDING_OVER = "Of course, I'm getting a person from the team for you.";

/** Passages given to a model and searched for an answer. */
export const PASSAGES_FOR_MODEL = 5;
/** A builtin answer quotes at most about this many characters of its passage (whole paragraphs). */
const ANSWER_MAX_CHARS = 1200;

/** Whether the visitor's message is the postback of the `handover` option. */
export function isHandoverPostback(message: Pick<MessageSnapshot, 'blocks'>): boolean {
  return message.blocks.some(
    (b) => b.type === 'postback' && 'option_id' in b && b.option_id === HANDOVER_OPTION_ID,
  );
}

/** Small talk has no content words at all ("hi!", "who are you?", "thanks"): it never needs knowledge. */
export function isSmallTalk(text: string): boolean {
  return queryTerms(text).length === 0;
}

/**
 * The passages to answer a question from, best first: none unless the best one reaches the knowledge's relevance
 * threshold; then every passage of the first `limit` that scores at least half the threshold — a question about two
 * things is covered by no single passage, and the model needs both (it cites what it used).
 */
export async function relevantPassages(
  knowledge: KnowledgeSearch,
  companyId: string,
  question: string,
  limit = PASSAGES_FOR_MODEL,
): Promise<KnowledgePassage[]> {
  if (isSmallTalk(question)) return [];
  const passages = await knowledge.search(companyId, question, { limit });
  const threshold = knowledge.relevanceThreshold;
  if ((passages[0]?.score ?? -1) < threshold) return [];
  return passages.filter((p) => p.score >= threshold / 2);
}

/** The `sources` block for passages in the order given, each source once (its first passage's snippet). */
export function sourcesBlock(passages: readonly KnowledgePassage[]): Omit<SourcesBlock, 'id'> {
  const seen = new Set<string>();
  const sources: SourcesBlock['sources'] = [];
  for (const p of passages) {
    if (seen.has(p.sourceId)) continue;
    seen.add(p.sourceId);
    sources.push({
      source_id: p.sourceId,
      title: p.title,
      ...(p.url ? { url: p.url } : {}),
      snippet: p.snippet,
    });
  }
  return { type: 'sources', sources };
}

/**
 * The builtin employee's answer from a passage: the passage's own text (whole paragraphs, up to ANSWER_MAX_CHARS),
 * headed by where it comes from. Never anything the source does not say.
 */
export function answerFrom(passage: KnowledgePassage): string {
  const paragraphs = passage.text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  let answer = '';
  for (const paragraph of paragraphs) {
    if (answer && answer.length + paragraph.length > ANSWER_MAX_CHARS) break;
    answer = answer ? `${answer}\n\n${paragraph}` : paragraph;
  }
  if (answer.length > ANSWER_MAX_CHARS * 2) answer = `${plainText(answer).slice(0, ANSWER_MAX_CHARS)}…`;
  return `From **${plainText(passage.title)}**:\n\n${answer}`;
}

/** The numbered passages for the model (`[n]` refers to passage n), sent as a system message. */
export function groundingPrompt(passages: readonly KnowledgePassage[]): string {
  const numbered = passages.map((p, i) => `[${i + 1}] ${p.title}\n${p.text}`).join('\n\n');
  return (
    "Answer the visitor's question using only the numbered passages from the company's knowledge below. Cite " +
    'each passage you use with its number in square brackets, like [1]. If the passages do not answer the ' +
    'question, say that you do not know and offer to get a person.\n\n' +
    numbered
  );
}

/** The passages a model's text cites as `[n]`, in order of first citation, each passage once; unknown numbers ignored. */
export function citedPassages(text: string, passages: readonly KnowledgePassage[]): KnowledgePassage[] {
  const cited: KnowledgePassage[] = [];
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    const passage = passages[Number(match[1]) - 1];
    if (passage && !cited.includes(passage)) cited.push(passage);
  }
  return cited;
}

export interface GroundedInput {
  companyId: string;
  message: MessageSnapshot;
  question: string;
  requestHuman?: () => void;
}

/**
 * A model's reply grounded in knowledge: `generate` is the model call, given the grounding prompt (or undefined for
 * small talk). A `handover` postback hands over without the model; a question no passage is relevant to gets the
 * "I don't know" answer and the handover offer, without the model; otherwise the model's text streams through and a
 * `sources` block lists the passages it cited, in order of first citation.
 */
export async function* groundedModelReply(
  knowledge: KnowledgeSearch | undefined,
  input: GroundedInput,
  generate: (grounding: string | undefined) => AsyncIterable<GroundedChunk>,
): AsyncIterable<GroundedChunk> {
  if (isHandoverPostback(input.message)) {
    input.requestHuman?.();
    yield HANDING_OVER;
    return;
  }
  // A company that has no knowledge at all keeps its model as it was configured, and is never searched.
  if (!knowledge || isSmallTalk(input.question) || !(await knowledge.hasSources(input.companyId))) {
    yield* generate(undefined);
    return;
  }
  const passages = await relevantPassages(knowledge, input.companyId, input.question);
  if (passages.length === 0) {
    yield DONT_KNOW;
    yield { blocks: [HANDOVER_OFFER] };
    return;
  }
  let text = '';
  for await (const chunk of generate(groundingPrompt(passages))) {
    if (typeof chunk === 'string') text += chunk;
    yield chunk;
  }
  const cited = citedPassages(text, passages);
  if (cited.length > 0) yield { blocks: [sourcesBlock(cited)] };
}
