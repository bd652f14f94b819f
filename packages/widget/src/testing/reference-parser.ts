/**
 * The widget's markdown parser as it was before it was made linear (its regular expressions scan ahead from every
 * position, so some inputs take quadratic time), kept unchanged: the reference whose output the linear parser must
 * reproduce (markdown.test.ts compares the two on generated inputs) and the baseline of bench/widget/markdown.bench.ts.
 * Never used by the product.
 */

export type Inline =
  | { type: 'text'; text: string }
  | { type: 'strong'; children: Inline[] }
  | { type: 'em'; children: Inline[] }
  | { type: 'code'; text: string }
  | { type: 'link'; href: string; children: Inline[] }
  | { type: 'br' };

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
    out.push(...parseInline(line.trim()));
  });
  return out;
}

/** Parses inline syntax. Delimiters without a closing partner stay literal. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = '';
  const pushPlain = () => {
    if (plain) out.push({ type: 'text', text: plain });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const code = /^`([^`]+)`/.exec(rest);
    if (code) {
      pushPlain();
      out.push({ type: 'code', text: code[1]! });
      i += code[0].length;
      continue;
    }
    const link = /^\[([^\]]+)\]\(([^)\s]+)\)/.exec(rest);
    if (link) {
      const href = safeHref(link[2]!);
      if (href) {
        pushPlain();
        out.push({ type: 'link', href, children: parseInline(link[1]!) });
        i += link[0].length;
        continue;
      }
    }
    // Underscore runs neither open after nor close before a word character (CommonMark §6.2), so
    // snake_case and `window.__name` stay literal.
    const strong = /^(\*\*)(?=\S)([\s\S]*?\S)\*\*/.exec(rest) ?? /^(__)(?=\S)([\s\S]*?\S)__(?!\w)/.exec(rest);
    if (strong && !(strong[1] === '__' && /\w/.test(text[i - 1] ?? ''))) {
      pushPlain();
      out.push({ type: 'strong', children: parseInline(strong[2]!) });
      i += strong[0].length;
      continue;
    }
    const em = /^(\*)(?=\S)([\s\S]*?\S)\*/.exec(rest) ?? /^(_)(?=\S)([\s\S]*?\S)_(?!\w)/.exec(rest);
    if (em && !(em[1] === '_' && /\w/.test(text[i - 1] ?? ''))) {
      pushPlain();
      out.push({ type: 'em', children: parseInline(em[2]!) });
      i += em[0].length;
      continue;
    }
    const autolink = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/.exec(rest);
    if (autolink && !/\w/.test(text[i - 1] ?? '')) {
      pushPlain();
      out.push({ type: 'link', href: autolink[0], children: [{ type: 'text', text: autolink[0] }] });
      i += autolink[0].length;
      continue;
    }
    plain += text[i];
    i++;
  }
  pushPlain();
  return out;
}

/** Only web and mail links; `javascript:`, `data:` and the like are refused (the text stays literal). */
export function safeHref(raw: string): string | null {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:'
      ? url.href
      : null;
  } catch {
    return null;
  }
}
