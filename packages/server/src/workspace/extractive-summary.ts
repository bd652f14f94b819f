import { textOf } from '@parley/webchat-protocol';
import type { MessageSnapshot } from '../webchat/messages/message.ts';

/** Sentences in a summary at most, and characters per sentence kept. */
const MAX_SENTENCES = 4;
const MAX_SENTENCE_CHARS = 240;
/** Words too common to say what a conversation is about (English; other languages just score flatter). */
const STOPWORDS = new Set(
  'a an and are as at be but by can could do does for from had has have hello hi how i if in is it its me my no not of on or our please so that the their them then there these they this to us was we were what when where which who why will with would you your yes ok okay thanks thank'.split(
    ' ',
  ),
);

const SPEAKER: Record<string, string> = {
  user: 'Visitor',
  digital_employee: 'Assistant',
  agent: 'Agent',
};

/**
 * An extractive summary of a conversation (docs/design.md "Agent workspace"): no model, so it works for every
 * company and never sends the transcript anywhere. The visitor's, digital employee's and agents' complete messages
 * are split into sentences; each sentence scores the frequency, over the whole conversation, of the content words
 * it holds (Luhn's method, 1958), averaged so long sentences do not win by length; the visitor's first question
 * always leads; the best others follow in the order they were said, each with its speaker. Notes and system notices
 * are left out. Empty conversations summarise to ''.
 */
export function extractiveSummary(messages: readonly MessageSnapshot[]): string {
  const sentences: Array<{ speaker: string; text: string; order: number; words: string[] }> = [];
  for (const message of messages) {
    const speaker = SPEAKER[message.role];
    if (!speaker || message.status !== 'complete') continue;
    for (const text of splitSentences(textOf(message))) {
      sentences.push({ speaker, text, order: sentences.length, words: contentWords(text) });
    }
  }
  if (sentences.length === 0) return '';
  const frequency = new Map<string, number>();
  for (const s of sentences) for (const w of s.words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const score = (s: (typeof sentences)[number]) =>
    s.words.length === 0
      ? 0
      : s.words.reduce((sum, w) => sum + (frequency.get(w) ?? 0), 0) / Math.sqrt(s.words.length);
  const first = sentences.find((s) => s.speaker === 'Visitor') ?? sentences[0]!;
  const rest = sentences
    .filter((s) => s !== first && s.words.length > 0)
    .sort((a, b) => score(b) - score(a) || a.order - b.order)
    .slice(0, MAX_SENTENCES - 1);
  return [first, ...rest]
    .sort((a, b) => a.order - b.order)
    .map((s) => `${s.speaker}: ${clip(s.text)}`)
    .join('\n');
}

function splitSentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2 && !STOPWORDS.has(w));
}

const clip = (text: string) =>
  text.length > MAX_SENTENCE_CHARS ? `${text.slice(0, MAX_SENTENCE_CHARS - 1)}…` : text;
