import type { ConversationSummaryView, SuggestedRepliesView, SuggestedReplyView } from '@parley/wire-types';
import { api } from '../../api.ts';
import { h, replaceChildren } from '../../dom.ts';
import { renderMarkdown } from './markdown.ts';

/**
 * A summary's content: a model's or the extractive one may hold markdown (lists, bold), rendered with the
 * transcript's renderer, which never hands text to an HTML parser (packages/portal/src/pages/inbox/markdown.ts).
 */
const summaryContent = (title: string, summary: string) => [
  h('h3', {}, title),
  h('div', { class: 'summary-text' }, renderMarkdown(document, summary)),
];

/** The hand-over summary (a digital employee's note when it handed the conversation to a person), if there is one. */
export function summaryBox(summary: string | null | undefined): HTMLElement {
  const box = h('section', { class: 'handover-summary', 'aria-label': 'Hand-over summary', hidden: true });
  if (summary) showHandoverSummary(box, summary);
  return box;
}

/** Puts a hand-over summary in the box (the one read with the conversation, or a newer one that arrived live). */
export function showHandoverSummary(box: HTMLElement, summary: string): void {
  replaceChildren(box, ...summaryContent('Hand-over summary', summary));
  box.setAttribute('aria-label', 'Hand-over summary');
  box.hidden = false;
}

/** "Summarise" on demand, shown only where the server answers it; the answer replaces the summary box's text. */
export function summariseButton(conversationId: string, box: HTMLElement): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary small' }, 'Summarise');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const { summary } = await api<ConversationSummaryView>(
        'POST',
        `/inbox/conversations/${conversationId}/summarise`,
      );
      replaceChildren(box, ...summaryContent('Summary', summary));
      box.setAttribute('aria-label', 'Summary');
      box.hidden = false;
    } catch {
      // No summariser here (404) or it failed: the button goes (hidden, so the header's re-render keeps it gone),
      // the conversation stays usable.
      button.hidden = true;
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

const sourceText = (s: SuggestedReplyView['sources'][number]) => s.title || s.url || s.source_id;

/**
 * Suggested replies from the company's knowledge with their sources: a click inserts the text into the composer for
 * the agent to read and send; nothing is ever sent by itself. Hidden when the server has no suggestions route or
 * none to offer.
 */
export async function suggestionsBox(
  conversationId: string,
  insert: (text: string) => void,
): Promise<HTMLElement | null> {
  let suggestions: SuggestedReplyView[];
  try {
    ({ suggestions } = await api<SuggestedRepliesView>(
      'GET',
      `/inbox/conversations/${conversationId}/suggestions`,
    ));
  } catch {
    return null;
  }
  if (!suggestions?.length) return null;
  return h(
    'section',
    { class: 'suggestions', 'aria-label': 'Suggested replies' },
    h('h3', {}, 'Suggested replies'),
    h(
      'ul',
      { class: 'plain-list' },
      ...suggestions
        .slice(0, 3)
        .map((s) =>
          h(
            'li',
            {},
            h('button', { type: 'button', class: 'suggestion', onclick: () => insert(s.text) }, s.text),
            s.sources.length
              ? h(
                  'span',
                  { class: 'muted sources' },
                  `Sources: ${s.sources.map(sourceText).filter(Boolean).join(' · ')}`,
                )
              : null,
          ),
        ),
    ),
  );
}
