import {
  type AttachmentBlock,
  type CardBlock,
  type ErrorBlock,
  type MarkdownBlock,
  type NoteView,
  type PostbackBlock,
  type QuickRepliesBlock,
  RASTER_IMAGE_TYPES,
  type ReceivedBlock,
  type ReceivedSnapshot,
  readActionCallNote,
  readHandoverSummaryNote,
  type SourcesBlock,
  type TypingBlock,
} from '@parley/webchat-protocol';
import { type Child, formatTime, h } from '../../dom.ts';
import { actionCallCard } from './action-call-card.ts';
import { renderMarkdown } from './markdown.ts';
import { firstUnreadIndex, initialsOf } from './model.ts';

/**
 * A message, or a private note between agents (DESIGN "Agent workspace", never a visitor's message) as the notes
 * route and the inbox channel send it; the detail's transcript carries notes as messages with role `note`.
 */
export type TranscriptItem = ReceivedSnapshot | NoteView;

const ROLE_LABEL: Record<string, string> = {
  user: 'Visitor',
  digital_employee: 'Digital employee',
  agent: 'Agent',
  system: 'System',
  note: 'Private note',
};

/** A note as the notes route answers it (text, no blocks); notes in message reads are snapshots with blocks. */
const isNote = (m: TranscriptItem): m is NoteView => m.role === 'note' && !('blocks' in m);

/**
 * The transcript list: one element per message id (a later snapshot of the same message replaces it), notes
 * among them, a "New messages" separator before the first unread visitor message, and an `open()` that shows the
 * newest message (or the separator) the way chat apps open a conversation.
 */
export class Transcript {
  // Focusable: a scrolling region must be reachable by keyboard (WCAG 2.1.1), arrow keys then scroll it.
  readonly el = h('ol', { class: 'transcript', 'aria-label': 'Transcript', tabindex: 0 });
  private readonly elements = new Map<string, HTMLElement>();
  private separator: HTMLElement | undefined;
  /** The newest hand-over summary note shown, the one the summary box above the transcript holds. */
  private newestSummary: { item: TranscriptItem; id: string } | undefined;

  constructor(items: TranscriptItem[], unread: number) {
    const at = firstUnreadIndex(items, unread);
    items.forEach((m, i) => {
      if (i === at) {
        // A list item (a list may hold only items), read out as where the new messages start.
        this.separator = h('li', { class: 'unread-separator' }, 'New messages');
        this.el.append(this.separator);
      }
      this.show(m, false);
    });
  }

  /** Adds or replaces a message; follows it when the agent is at the bottom already. */
  show(m: TranscriptItem, follow = true): void {
    const atBottom = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 48;
    this.place(
      m,
      this.summaryElement(m) ?? actionCallElement(m) ?? (isNote(m) ? noteElement(m) : messageElement(m)),
    );
    if (follow && atBottom) this.el.scrollTop = this.el.scrollHeight;
  }

  private place(m: TranscriptItem, el: HTMLElement): void {
    const old = this.elements.get(m.id);
    if (old) old.replaceWith(el);
    else this.el.append(el);
    this.elements.set(m.id, el);
  }

  /**
   * A hand-over summary note as a one-line marker (its text is in the summary box above the transcript; showing it
   * twice made agents read it twice). The newest one says so; an earlier one (a previous hand-over) stays
   * expandable. Notes arrive oldest first, so a new summary makes the previous newest an earlier one.
   */
  private summaryElement(m: TranscriptItem): HTMLElement | undefined {
    const summary = handoverSummaryOf(m);
    if (summary === undefined) return undefined;
    const previous = this.newestSummary;
    if (previous && previous.id !== m.id)
      this.place(previous.item, summaryMarker(previous.item, handoverSummaryOf(previous.item) ?? '', false));
    this.newestSummary = { item: m, id: m.id };
    return summaryMarker(m, summary, true);
  }

  /**
   * Opens at the newest message; when that would hide where the unread messages start, the unread separator goes to
   * the top instead (the agent reads on from there).
   */
  open(): void {
    this.el.scrollTop = this.el.scrollHeight;
    if (!this.separator) return;
    const top = this.separator.getBoundingClientRect().top - this.el.getBoundingClientRect().top;
    if (top < 0) this.el.scrollTop += top - 8;
  }
}

/** A note's markdown, whether it came as the notes route's text or as a snapshot's blocks. */
const noteText = (m: TranscriptItem): string =>
  isNote(m)
    ? m.text
    : m.blocks
        .filter((b) => b.type === 'markdown')
        .map((b) => (b as MarkdownBlock).content ?? '')
        .join('\n\n');

/**
 * The summary a hand-over summary note holds, or undefined for any other item. Only Parley's and a digital
 * employee's notes are read this way (packages/server/src/webchat/notes/handover-summary.ts writes them as either):
 * an agent's note that happens to start with the same heading stays a note.
 */
export function handoverSummaryOf(m: TranscriptItem): string | undefined {
  if (m.role !== 'note' || (m.author?.type !== 'system' && m.author?.type !== 'digital_employee'))
    return undefined;
  return readHandoverSummaryNote(noteText(m));
}

/** A hand-over summary note collapsed to one line; `shownAbove` when the summary box holds its text. */
function summaryMarker(m: TranscriptItem, summary: string, shownAbove: boolean): HTMLElement {
  const line = h(
    'summary',
    {},
    // Shorter than a note's heading (no "private note": the marker is itself a summary's place) to fit one line.
    h('span', { class: 'avatar', 'aria-hidden': 'true' }, initialsOf(m.author?.name)),
    `${m.author?.name ?? 'Parley'} · ${formatTime(m.created_at ?? null)}`,
    h(
      'strong',
      { class: 'marker-title' },
      shownAbove ? ' — Hand-over summary, shown above' : ' — Earlier hand-over summary',
    ),
  );
  return h(
    'li',
    { class: 'message note handover-marker', 'data-id': m.id, 'data-current': String(shownAbove) },
    h('details', {}, line, h('div', { class: 'text' }, renderMarkdown(document, summary))),
  );
}

/**
 * A note a digital employee wrote for one of its action calls, as a card; `undefined` for any other item. Only a
 * digital employee's notes are read this way: an agent's note that happens to look like one stays a note.
 */
function actionCallElement(m: TranscriptItem): HTMLElement | undefined {
  if (m.role !== 'note' || m.author?.type !== 'digital_employee') return undefined;
  const call = readActionCallNote(noteText(m));
  if (!call) return undefined;
  return actionCallCard(call, {
    id: m.id,
    who: noteHeading(m.author?.name, m.created_at ?? null),
  });
}

/** Who wrote a note and when, marked private (visitors never see notes). */
function noteHeading(author: string | null | undefined, createdAt: string | null): Child[] {
  return [
    h('span', { class: 'avatar', 'aria-hidden': 'true' }, initialsOf(author)),
    `${author ?? 'Agent'} · private note · ${formatTime(createdAt)}`,
  ];
}

function noteElement(n: NoteView): HTMLElement {
  return h(
    'li',
    { class: 'message note', 'data-id': n.id },
    h('span', { class: 'who' }, ...noteHeading(n.author?.name, n.created_at)),
    h('div', { class: 'text' }, renderMarkdown(document, n.text)),
  );
}

export function messageElement(m: ReceivedSnapshot): HTMLElement {
  // Markdown through the widget's renderer (one renderer, never an HTML parser); error blocks carry their
  // visitor-safe text in `message` and show as plain text.
  const markdown = m.blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => (b as MarkdownBlock).content ?? '')
    .join('\n\n');
  const errors = m.blocks
    .filter((b) => b.type === 'error')
    .map((b) => (b as ErrorBlock).message ?? '')
    .join('\n');
  const typing = m.blocks.some((b) => b.type === 'typing' && (b as TypingBlock).typing);
  const role = ROLE_LABEL[m.role] ?? m.role;
  return h(
    'li',
    { class: `message ${m.role}`, 'data-status': m.status, 'data-id': m.id },
    h(
      'span',
      { class: 'who' },
      m.role === 'agent'
        ? h('span', { class: 'avatar', 'aria-hidden': 'true' }, initialsOf(m.author?.name))
        : null,
      m.author?.name ? `${m.author.name} (${role})` : role,
      m.created_at ? h('span', { class: 'when' }, ` · ${formatTime(m.created_at)}`) : null,
    ),
    h(
      'div',
      { class: 'text' },
      markdown ? renderMarkdown(document, markdown) : null,
      errors || (!markdown && typing ? 'typing…' : ''),
    ),
    attachmentsElement(m),
    ...m.blocks.flatMap((b) => interactiveElement(b)),
    m.status === 'partial' ? h('span', { class: 'muted streaming' }, ' (streaming)') : null,
    m.feedback
      ? h(
          'span',
          { class: `rating ${m.feedback.rating}` },
          m.feedback.rating === 'up' ? 'Visitor found this helpful' : 'Visitor found this not helpful',
          m.feedback.comment ? `: “${m.feedback.comment}”` : '',
        )
      : null,
  );
}

/**
 * Quick replies, cards and postbacks in a transcript (docs/design.md "Interactive blocks"), as text: what was
 * offered, and which choice the visitor tapped.
 */
function interactiveElement(b: ReceivedBlock): HTMLElement[] {
  if (b.type === 'sources') return sourcesElement(b as SourcesBlock);
  if (b.type === 'postback') {
    const { label, option_id } = b as PostbackBlock;
    return [h('span', { class: 'postback', title: `option ${option_id}` }, `Chose: ${label}`)];
  }
  if (b.type === 'quick_replies') {
    const labels = (b as QuickRepliesBlock).options.map((o) => o.label);
    return [h('span', { class: 'offer quick-replies' }, `Quick replies: ${labels.join(' · ')}`)];
  }
  if (b.type === 'card') {
    const card = b as CardBlock;
    const buttons = card.buttons.map((x) => (x.url ? `${x.label} ↗ ${x.url}` : x.label));
    return [
      h(
        'span',
        { class: 'offer card' },
        `Card: ${card.title}`,
        card.text ? ` — ${card.text}` : '',
        buttons.length > 0 ? ` [${buttons.join(' · ')}]` : '',
      ),
    ];
  }
  return [];
}

/**
 * What a digital employee's answer was based on (docs/knowledge.md "Cited answers"): each source's title, a link when its
 * URL is http(s) (new tab, no referrer, no opener), so the agent can check the answer against it.
 */
function sourcesElement(block: SourcesBlock): HTMLElement[] {
  if (!Array.isArray(block.sources) || block.sources.length === 0) return [];
  const items = block.sources.map((source) => {
    const url = typeof source.url === 'string' && /^https?:\/\//i.test(source.url) ? source.url : null;
    const title = String(source.title ?? '');
    return h(
      'li',
      {},
      url ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, title) : title,
      source.snippet ? h('span', { class: 'muted' }, ` — ${source.snippet}`) : null,
    );
  });
  return [h('span', { class: 'sources' }, 'Sources:', h('ol', {}, ...items))];
}

/**
 * A message's attachments (docs/design.md "Attachments"): raster images as thumbnails, other files as chips, each
 * linking to its signed `url` (fresh in every read and envelope; it needs no headers).
 */
function attachmentsElement(m: ReceivedSnapshot): HTMLElement | null {
  const attachments = m.blocks.filter((b) => b.type === 'attachment') as unknown as AttachmentBlock[];
  if (attachments.length === 0) return null;
  return h(
    'span',
    { class: 'attachments' },
    ...attachments.map((a) =>
      RASTER_IMAGE_TYPES.has(a.content_type)
        ? h(
            'a',
            { href: a.url, target: '_blank', rel: 'noopener noreferrer', class: 'attachment-thumb' },
            h('img', { src: a.url, alt: a.name, class: 'thumbnail' }),
          )
        : h(
            'a',
            {
              href: a.url,
              target: '_blank',
              rel: 'noopener noreferrer',
              download: a.name,
              class: 'attachment-chip',
            },
            `📎 ${a.name} (${Math.max(1, Math.round(a.size / 1024))} KB)`,
          ),
    ),
  );
}
