import type { SuggestedReplyView } from '@parley/wire-types';
import type { KnowledgePassage, KnowledgeSearch } from '../knowledge/knowledge-search.ts';
import { type MessageSnapshot, textOf } from '../webchat/messages/message.ts';

/** At most this many suggestions per conversation (the inbox shows them above the composer). */
export const MAX_SUGGESTIONS = 3;
/** A suggestion is a reply, not an article: whole sentences from the passage up to about this many characters. */
const REPLY_CHARS = 400;

/** A reply suggested to an agent, with the sources it came from (the portal API's shape). */
export type SuggestedReply = SuggestedReplyView;

/**
 * Suggested replies for an agent (docs/design.md "Agent workspace", AI help): the company's knowledge searched for
 * the visitor's last question, passages at or above the relevance threshold (the same bar the digital employees
 * answer from, knowledge/grounding.ts), best first, at most one suggestion per passage and never two alike. Nothing
 * is sent: the inbox inserts a suggestion into the composer when the agent clicks it.
 */
export async function suggestedReplies(
  knowledge: KnowledgeSearch,
  companyId: string,
  question: string | undefined,
): Promise<SuggestedReply[]> {
  if (!question?.trim()) return [];
  const passages = await knowledge.search(companyId, question, { limit: MAX_SUGGESTIONS * 2 });
  const suggestions: SuggestedReply[] = [];
  const seen = new Set<string>();
  for (const passage of passages) {
    if (passage.score < knowledge.relevanceThreshold) break;
    const text = replyFrom(passage);
    if (!text || seen.has(text)) continue;
    seen.add(text);
    suggestions.push({ text, sources: [sourceOf(passage)] });
    if (suggestions.length === MAX_SUGGESTIONS) break;
  }
  return suggestions;
}

const sourceOf = (p: KnowledgePassage): SuggestedReply['sources'][number] => ({
  source_id: p.sourceId,
  title: p.title,
  ...(p.url ? { url: p.url } : {}),
});

/**
 * The passage as a reply: heading lines dropped (the title is in the source), markdown emphasis and list markers
 * removed, whitespace folded, then whole sentences up to REPLY_CHARS (a first sentence longer than that is cut at a
 * word with an ellipsis).
 */
export function replyFrom(passage: Pick<KnowledgePassage, 'text'>): string {
  const prose = passage.text
    .split('\n')
    .filter((line) => !/^\s{0,3}#{1,6}\s/.test(line))
    .map((line) => line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ''))
    .join(' ')
    .replace(/[*_`]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (!prose) return '';
  const sentences = prose.match(/[^.!?]+(?:[.!?]+|$)/g) ?? [prose];
  let reply = '';
  for (const raw of sentences) {
    const sentence = raw.trim();
    if (!sentence) continue;
    const next = reply ? `${reply} ${sentence}` : sentence;
    if (next.length > REPLY_CHARS) break;
    reply = next;
  }
  if (reply) return reply;
  const cut = prose.slice(0, REPLY_CHARS - 1);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 0 ? cut.lastIndexOf(' ') : cut.length)}…`;
}

/** The text of the visitor's last complete message, the question suggestions answer (messages oldest first). */
export function lastVisitorQuestion(messages: readonly MessageSnapshot[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user' || m.status !== 'complete') continue;
    const text = textOf(m).trim();
    if (text) return text;
  }
  return undefined;
}
