import type {
  CardBlock,
  ChatMessage,
  OfferedChoice,
  QuickRepliesBlock,
  SourcesBlock,
} from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import { safeHref } from './markdown.ts';
import type { WidgetStrings } from './strings/en.ts';

/** What the interactive blocks of one message need from the widget. */
export interface InteractiveContext {
  /** The message is the open offer (the latest bot or agent message, not answered yet): its choices can be tapped. */
  open: boolean;
  /** Sends the postback (the SDK shows it at once as the visitor's message, with the choice's label). */
  choose(choice: OfferedChoice): void;
}

/**
 * The quick replies and cards of a message (docs/design.md "Interactive blocks"). Quick replies are buttons shown
 * only while the offer is open — they disappear once the visitor answered; cards stay, with their postback buttons
 * disabled once the offer is closed. Link buttons (`url`) open in a new tab with `rel="noopener noreferrer"` and
 * send nothing. Every control is a native button or link: keyboard-reachable, with the panel's focus styles.
 */
export function interactiveBlocksFor(
  doc: Document,
  message: ChatMessage,
  strings: WidgetStrings,
  context: InteractiveContext,
): HTMLElement[] {
  const nodes: HTMLElement[] = [];
  for (const block of message.blocks) {
    if (block.type === 'sources') {
      const list = sources(doc, block as SourcesBlock, strings);
      if (list) nodes.push(list);
    }
    if (block.type === 'quick_replies' && context.open)
      nodes.push(quickReplies(doc, block as QuickRepliesBlock, strings, context));
    if (block.type === 'card') nodes.push(card(doc, block as CardBlock, context));
  }
  return nodes;
}

/**
 * What an answer is based on (docs/knowledge.md "Cited answers"): each source as a link when its `url` is http(s)
 * (opened in a new tab, `rel="noopener noreferrer"`, like card links), else as its title in plain text.
 */
function sources(doc: Document, block: SourcesBlock, strings: WidgetStrings): HTMLElement | null {
  if (!Array.isArray(block.sources) || block.sources.length === 0) return null;
  const el = builder(doc);
  const nav = el('nav', { class: 'sources', 'aria-label': strings.sources });
  nav.append(el('p', { class: 'sources-title' }, strings.sources));
  const list = el('ol', {});
  for (const source of block.sources) {
    const safe = typeof source.url === 'string' ? safeHref(source.url) : null;
    const href = safe && /^https?:/i.test(safe) ? safe : null;
    const title = String(source.title ?? '');
    const item = el('li', {});
    if (href) {
      const link = el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, title);
      if (source.snippet) link.title = source.snippet;
      item.append(link);
    } else item.textContent = title;
    list.append(item);
  }
  nav.append(list);
  return nav;
}

function quickReplies(
  doc: Document,
  block: QuickRepliesBlock,
  strings: WidgetStrings,
  context: InteractiveContext,
): HTMLElement {
  const el = builder(doc);
  const group = el('div', { class: 'quick-replies', role: 'group', 'aria-label': strings.quickReplies });
  for (const option of block.options) group.append(choiceButton(doc, option, context));
  return group;
}

function card(doc: Document, block: CardBlock, context: InteractiveContext): HTMLElement {
  const el = builder(doc);
  const box = el('article', { class: 'card', 'aria-label': block.title });
  const image = block.image_url ? safeHref(block.image_url) : null;
  // Decorative next to its title (alt ""); a URL that is not http(s) is never loaded.
  if (image) box.append(el('img', { src: image, alt: '', loading: 'lazy', referrerpolicy: 'no-referrer' }));
  box.append(el('p', { class: 'card-title' }, block.title));
  if (block.text) box.append(el('p', { class: 'card-text' }, block.text));
  const buttons = el('div', { class: 'card-buttons' });
  for (const button of block.buttons) {
    const href = button.url ? safeHref(button.url) : null;
    if (button.url === undefined) buttons.append(choiceButton(doc, button, context));
    else if (href)
      buttons.append(
        el('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'card-link' }, button.label),
      );
  }
  if (buttons.childElementCount > 0) box.append(buttons);
  return box;
}

function choiceButton(doc: Document, choice: OfferedChoice, context: InteractiveContext): HTMLButtonElement {
  const button = builder(doc)(
    'button',
    { type: 'button', class: 'choice', 'data-choice': choice.id },
    choice.label,
  );
  button.disabled = !context.open;
  button.addEventListener('click', () => {
    if (context.open) context.choose({ id: choice.id, label: choice.label });
  });
  return button;
}
