/**
 * A deliberately tiny markdown subset for chat bubbles: paragraphs, line breaks, `-`/`*`/`1.` lists, fenced code,
 * `# headings`, **bold**, *italic* or _italic_, `code`, [links](https://…) and bare http(s) URLs. It parses to a
 * small tree in time linear in the text (lines here, inline syntax in markdown-inline.ts), and
 * {@link renderMarkdown} builds DOM nodes from that tree with `textContent` and `setAttribute` only — message text is
 * never handed to an HTML parser, so markup such as `<img src=x onerror=…>` shows as the literal characters.
 * Anything it does not understand (including half-streamed syntax such as an unclosed `**`) stays literal text.
 */

import { type Inline, parseInline } from './markdown-inline.ts';

export { type Inline, parseInline, safeHref } from './markdown-inline.ts';

export type BlockNode =
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'heading'; children: Inline[] }
  | { type: 'list'; ordered: boolean; items: Inline[][] }
  | { type: 'code'; text: string };

const LIST_ITEM = /^\s{0,3}(?:[-*+]|(\d{1,9})[.)])\s+(.*)$/;
const FENCE = /^\s{0,3}```/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*)$/;

/** Parses markdown text into block nodes. Pure; safe for any input. */
export function parseMarkdown(source: string): BlockNode[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: BlockNode[] = [];
  let paragraph: string[] = [];
  const flushParagraph = () => {
    if (paragraph.length > 0) blocks.push({ type: 'paragraph', children: parseInlineLines(paragraph) });
    paragraph = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      flushParagraph();
      const code: string[] = [];
      i++;
      // An unclosed fence (a reply still streaming) runs to the end of the text.
      while (i < lines.length && !FENCE.test(lines[i]!)) code.push(lines[i++]!);
      blocks.push({ type: 'code', text: code.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flushParagraph();
      blocks.push({ type: 'heading', children: parseInline(heading[1]!) });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      flushParagraph();
      const ordered = item[1] !== undefined;
      const items: Inline[][] = [parseInline(item[2]!)];
      while (i + 1 < lines.length) {
        const next = LIST_ITEM.exec(lines[i + 1]!);
        if (!next || (next[1] !== undefined) !== ordered) break;
        items.push(parseInline(next[2]!));
        i++;
      }
      blocks.push({ type: 'list', ordered, items });
      continue;
    }
    if (line.trim() === '') flushParagraph();
    else paragraph.push(line);
  }
  flushParagraph();
  return blocks;
}

function parseInlineLines(lines: string[]): Inline[] {
  const out: Inline[] = [];
  lines.forEach((line, index) => {
    if (index > 0) out.push({ type: 'br' });
    for (const node of parseInline(line.trim())) out.push(node);
  });
  return out;
}

/**
 * While a reply streams, its text can end inside a bold run or code span (`Hello **wor`). Dropping the last
 * unmatched `**` or backtick keeps the marker from flashing on screen until the closing one arrives.
 */
export function hideUnclosedMarkers(text: string): string {
  let out = text;
  if ((out.match(/\*\*/g)?.length ?? 0) % 2 === 1) {
    const at = out.lastIndexOf('**');
    out = out.slice(0, at) + out.slice(at + 2);
  }
  const fences = out.match(/```/g)?.length ?? 0;
  const ticks = (out.replace(/```/g, '').match(/`/g)?.length ?? 0) % 2;
  if (fences % 2 === 0 && ticks === 1) {
    const at = out.lastIndexOf('`');
    out = out.slice(0, at) + out.slice(at + 1);
  }
  return out;
}

/**
 * The text a reader of the rendered markdown sees, without its markup (`# Title` → `Title`, a link → its text,
 * `Order #42` unchanged): blocks and line breaks become single spaces. For one-line previews.
 */
export function markdownPlainText(source: string): string {
  const parts: string[] = [];
  const inline = (nodes: Inline[]) => {
    for (const node of nodes) {
      if (node.type === 'text' || node.type === 'code') parts.push(node.text);
      else if (node.type === 'br') parts.push(' ');
      else inline(node.children);
    }
  };
  for (const block of parseMarkdown(source)) {
    if (parts.length > 0) parts.push(' ');
    if (block.type === 'code') parts.push(block.text);
    else if (block.type === 'list') {
      block.items.forEach((item, index) => {
        if (index > 0) parts.push(' ');
        inline(item);
      });
    } else inline(block.children);
  }
  return parts.join('').replace(/\s+/g, ' ').trim();
}

/** Builds DOM nodes for markdown text. Never uses innerHTML: every piece of text goes through `textContent`. */
export function renderMarkdown(doc: Document, source: string): DocumentFragment {
  const fragment = doc.createDocumentFragment();
  for (const block of parseMarkdown(source)) fragment.append(renderBlock(doc, block));
  return fragment;
}

function renderBlock(doc: Document, block: BlockNode): Node {
  switch (block.type) {
    case 'paragraph':
      return withChildren(doc.createElement('p'), doc, block.children);
    case 'heading':
      return withChildren(doc.createElement('strong'), doc, block.children);
    case 'code': {
      const pre = doc.createElement('pre');
      const code = doc.createElement('code');
      code.textContent = block.text;
      pre.append(code);
      return pre;
    }
    case 'list': {
      const list = doc.createElement(block.ordered ? 'ol' : 'ul');
      for (const item of block.items) list.append(withChildren(doc.createElement('li'), doc, item));
      return list;
    }
  }
}

function withChildren(element: HTMLElement, doc: Document, children: Inline[]): HTMLElement {
  for (const child of children) element.append(renderInline(doc, child));
  return element;
}

function renderInline(doc: Document, node: Inline): Node {
  switch (node.type) {
    case 'text':
      return doc.createTextNode(node.text);
    case 'br':
      return doc.createElement('br');
    case 'code': {
      const code = doc.createElement('code');
      code.textContent = node.text;
      return code;
    }
    case 'strong':
      return withChildren(doc.createElement('strong'), doc, node.children);
    case 'em':
      return withChildren(doc.createElement('em'), doc, node.children);
    case 'link': {
      const a = doc.createElement('a');
      a.setAttribute('href', node.href);
      a.setAttribute('target', '_blank');
      a.setAttribute('rel', 'noopener noreferrer nofollow');
      return withChildren(a, doc, node.children);
    }
  }
}
