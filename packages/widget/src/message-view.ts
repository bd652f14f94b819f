import type { MessageRole } from '@parley/webchat-protocol';
import type { ChatMessage, FeedbackRating, OfferedChoice } from '@parley/webchat-sdk';
import { renderAttachments } from './attachments-ui.ts';
import { builder } from './dom.ts';
import { thumbsFor } from './feedback-ui.ts';
import { interactiveBlocksFor } from './interactive-ui.ts';
import { hideUnclosedMarkers, renderMarkdown } from './markdown.ts';
import { formatWhen, noticeText } from './notices.ts';
import type { WidgetStrings } from './strings/en.ts';

/** The text naming a message's sender when it carries no author name. */
const ROLE_NAMES: Record<MessageRole, keyof WidgetStrings> = {
  user: 'you',
  digital_employee: 'assistant',
  agent: 'agent',
  system: 'system',
  // Notes are for agents only: the server never sends one to a visitor (the entry only completes the map).
  note: 'system',
};

/** What drawing one message needs besides the message. */
export interface MessageContext {
  doc: Document;
  strings: WidgetStrings;
  /** The visitor's locale (the widget's `lang`), for times. */
  locale: string;
  /** The message is the open offer: its quick replies show and can be tapped. */
  open: boolean;
  /** Thumbs up and down go under it (an answer to the visitor; not a greeting or a notice). */
  ratable: boolean;
  /** "Seen" goes under it (the visitor's last message an agent has read). */
  seen: boolean;
  /** A hand-off notice that now reads as this later notice (notices.ts `mergeHandoffNotices`). */
  shownAs?: ChatMessage;
  choose(choice: OfferedChoice): void;
  rate(rating: FeedbackRating, comment?: string): Promise<void>;
  retry(): void;
}

/** The name a message is shown under. */
export function authorName(message: ChatMessage, strings: WidgetStrings): string {
  if (message.author?.name) return message.author.name;
  // A role a newer server added has no name here: it reads as the assistant's.
  return strings[ROLE_NAMES[message.role]] ?? strings.assistant;
}

/**
 * Draws one message into `element`: its sender, body (markdown, or a tapped choice's label as written), files,
 * quick replies and cards, error, thumbs, and a line with its time and — for the visitor's own — whether it is
 * sending, sent, seen, or failed with a Retry button.
 */
export function renderMessage(element: HTMLElement, message: ChatMessage, ctx: MessageContext): void {
  const { doc, strings } = ctx;
  const el = builder(doc);
  element.className = `msg ${message.role}${message.status === 'failed' ? ' failed' : ''}`;
  element.dataset.status = message.status;
  element.dataset.key = message.key;
  const children: Node[] = [];
  if (message.role !== 'user' && message.role !== 'system')
    children.push(el('span', { class: 'author' }, authorName(message, strings)));
  children.push(bodyOf(message, ctx));
  // A running action's status ("Looking up your order…"): partial snapshots only, gone once the reply completes.
  const status = message.status === 'partial' ? message.blocks.find((b) => b.type === 'status') : undefined;
  if (status && 'text' in status && typeof status.text === 'string')
    children.push(el('div', { class: 'status', role: 'status' }, status.text));
  const files = renderAttachments(doc, message.blocks);
  if (files) children.push(files);
  children.push(...interactiveBlocksFor(doc, message, strings, { open: ctx.open, choose: ctx.choose }));
  if (message.error) children.push(el('div', { class: 'error' }, message.error.message));
  if (ctx.ratable) children.push(thumbsFor(doc, message, strings, ctx.rate));
  children.push(metaOf(ctx.shownAs ?? message, ctx));
  element.replaceChildren(...children);
}

function bodyOf(message: ChatMessage, ctx: MessageContext): HTMLElement {
  const body = ctx.doc.createElement('div');
  body.className = 'body';
  // Each message reads in its own direction (an English reply in an Arabic widget keeps its punctuation in place).
  body.dir = 'auto';
  if (message.role === 'system')
    body.textContent = noticeText(ctx.shownAs ?? message, ctx.strings, ctx.locale);
  // A tapped choice shows its label as written, not as markdown.
  else if (message.blocks[0]?.type === 'postback') body.textContent = message.text;
  else {
    const text = message.status === 'partial' ? hideUnclosedMarkers(message.text) : message.text;
    body.append(renderMarkdown(ctx.doc, text));
  }
  return body;
}

/** Time, and for the visitor's own messages where the send stands. */
function metaOf(message: ChatMessage, ctx: MessageContext): HTMLElement {
  const { doc, strings } = ctx;
  const el = builder(doc);
  const meta = el('div', { class: 'meta' });
  const time = el('time', { datetime: message.createdAt }, formatWhen(message.createdAt, ctx.locale));
  meta.append(time);
  if (message.role !== 'user') return meta;
  if (message.status === 'pending') meta.append(el('span', { class: 'delivery' }, strings.sending));
  else if (message.status === 'failed') {
    const failed = el('span', { class: 'delivery' }, strings.notSent);
    if (message.sendError) failed.title = message.sendError.message;
    const retry = el('button', { type: 'button' }, strings.retry);
    retry.addEventListener('click', () => ctx.retry());
    meta.append(failed, retry);
  } else if (ctx.seen) meta.append(el('span', { class: 'delivery seen' }, strings.seen));
  else meta.append(el('span', { class: 'delivery' }, strings.sent));
  return meta;
}
