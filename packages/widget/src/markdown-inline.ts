/**
 * Inline markdown for chat bubbles — **bold**, *italic* or _italic_, `code`, [links](https://…) and bare http(s)
 * URLs — parsed in time linear in the text.
 *
 * A parser that looks for each opening marker's partner by scanning ahead does quadratic work on text full of
 * markers that never close (`a_a_a_…`, `[[[[…`, `` \`\`\` ``): every marker rescans the rest of the line. Here one
 * backward pass per marker kind first records, for every position, where the next candidate closer is
 * ({@link Closers}); each attempt to match is then a few table look-ups, and the text is walked once. Nested runs
 * reuse the same tables within their bounds, and nesting deeper than {@link MAX_NESTING} stays literal text, so
 * neither the call stack nor the DOM can be made arbitrarily deep.
 *
 * The rules are those of the widget's first parser (kept as src/testing/reference-parser.ts, which the tests compare
 * against): a marker pair must enclose text that starts and ends with a non-space character; `_` and `__` neither open
 * after nor close before a word character (CommonMark §6.2), so snake_case stays literal; a link label holds no `]`,
 * its destination no space or parenthesis, and only {@link safeHref} destinations become links. Anything unmatched
 * stays literal text.
 */

export type Inline =
  | { type: 'text'; text: string }
  | { type: 'strong'; children: Inline[] }
  | { type: 'em'; children: Inline[] }
  | { type: 'code'; text: string }
  | { type: 'link'; href: string; children: Inline[] }
  | { type: 'br' };

/** Emphasis and links nested deeper than this are shown as the literal text they came from. */
export const MAX_NESTING = 16;

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

/** Parses inline syntax. Delimiters without a closing partner stay literal. */
export function parseInline(text: string): Inline[] {
  return new InlineParser(text).parse(0, text.length, 0);
}

const isSpace = (ch: string | undefined) => ch !== undefined && /\s/.test(ch);
const isWord = (ch: string | undefined) => ch !== undefined && /\w/.test(ch);
/** Characters a bare URL never ends with: sentence punctuation that follows it (`see https://x.test.`). */
const URL_TRAILING = new Set(['.', ',', ';', ':', '!', '?', "'", '"']);
const URL_STOP = /[\s<>()]/;
const DESTINATION_STOP = /[\s)]/;

/**
 * For every position p, the first position ≥ p where something can be found (the text's length when nothing can):
 * one backward pass per kind, computed on first use.
 */
class Closers {
  private readonly tables = new Map<string, Int32Array>();

  constructor(private readonly text: string) {}

  /** First position ≥ from whose character matches `stop`. */
  nextChar(kind: string, stop: RegExp, from: number): number {
    return this.table(kind, (i) => stop.test(this.text[i]!))[from]!;
  }

  /**
   * First position j ≥ from where a closing run of `marker` starts: the run follows a non-space character and, for
   * `_` and `__`, is not followed by a word character.
   */
  nextCloser(marker: '*' | '**' | '_' | '__', from: number): number {
    const t = this.text;
    const flanking = marker[0] === '_';
    return this.table(marker, (j) => {
      if (!t.startsWith(marker, j) || j === 0 || isSpace(t[j - 1])) return false;
      return !flanking || !isWord(t[j + marker.length]);
    })[from]!;
  }

  private table(kind: string, found: (i: number) => boolean): Int32Array {
    let table = this.tables.get(kind);
    if (!table) {
      const n = this.text.length;
      table = new Int32Array(n + 1);
      table[n] = n;
      for (let i = n - 1; i >= 0; i--) table[i] = found(i) ? i : table[i + 1]!;
      this.tables.set(kind, table);
    }
    return table;
  }
}

class InlineParser {
  private readonly closers: Closers;
  /** The last link destination judged, by the position of its label's `]` (every `[` before it shares it). */
  private lastHref: { at: number; href: string | null } | undefined;

  constructor(private readonly text: string) {
    this.closers = new Closers(text);
  }

  /** Inline nodes of text[start, end) as if it were the whole text (its first character has no predecessor). */
  parse(start: number, end: number, depth: number): Inline[] {
    const t = this.text;
    const out: Inline[] = [];
    let plainFrom = start;
    const pushPlain = (upTo: number) => {
      if (upTo > plainFrom) out.push({ type: 'text', text: t.slice(plainFrom, upTo) });
    };
    if (depth >= MAX_NESTING) {
      pushPlain(end);
      return out;
    }
    let i = start;
    while (i < end) {
      const before = i > start ? t[i - 1] : undefined;
      const match = this.code(i, end) ?? this.link(i, end, depth) ?? this.emphasis(i, end, before, depth);
      const found = match ?? (isWord(before) ? undefined : this.bareUrl(i, end));
      if (found) {
        pushPlain(i);
        out.push(found.node);
        i = plainFrom = found.next;
      } else {
        i++;
      }
    }
    pushPlain(end);
    return out;
  }

  /** `` `code` ``: one backtick, at least one character, the next backtick. */
  private code(i: number, end: number): Found | undefined {
    if (this.text[i] !== '`') return undefined;
    const close = this.closers.nextChar('`', /`/, i + 1);
    if (close === i + 1 || close >= end) return undefined;
    return { node: { type: 'code', text: this.text.slice(i + 1, close) }, next: close + 1 };
  }

  /** A link: `[`, a non-empty label without `]`, `](`, a destination without space or parenthesis, `)`. */
  private link(i: number, end: number, depth: number): Found | undefined {
    const t = this.text;
    if (t[i] !== '[') return undefined;
    const labelEnd = this.closers.nextChar(']', /\]/, i + 1);
    if (labelEnd === i + 1 || labelEnd + 1 >= end || t[labelEnd + 1] !== '(') return undefined;
    const destinationEnd = this.closers.nextChar(')', DESTINATION_STOP, labelEnd + 2);
    if (destinationEnd === labelEnd + 2 || destinationEnd >= end || t[destinationEnd] !== ')')
      return undefined;
    if (this.lastHref?.at !== labelEnd) {
      this.lastHref = { at: labelEnd, href: safeHref(t.slice(labelEnd + 2, destinationEnd)) };
    }
    const href = this.lastHref.href;
    if (!href) return undefined;
    return {
      node: { type: 'link', href, children: this.parse(i + 1, labelEnd, depth + 1) },
      next: destinationEnd + 1,
    };
  }

  /** `**strong**`, `__strong__`, `*em*` and `_em_`, trying the double marker first. */
  private emphasis(i: number, end: number, before: string | undefined, depth: number): Found | undefined {
    const ch = this.text[i];
    if (ch !== '*' && ch !== '_') return undefined;
    // `_` runs do not open after a word character (snake_case, `window.__name`).
    if (ch === '_' && isWord(before)) return undefined;
    for (const marker of ch === '*' ? (['**', '*'] as const) : (['__', '_'] as const)) {
      const close = this.closer(marker, i, end);
      if (close === undefined) continue;
      const contentStart = i + marker.length;
      return {
        node: {
          type: marker.length === 2 ? 'strong' : 'em',
          children: this.parse(contentStart, close, depth + 1),
        },
        next: close + marker.length,
      };
    }
    return undefined;
  }

  /**
   * Where the run of `marker` opening at i closes within [i, end): the first closer after at least one character
   * of content, which must start with a non-space character. A `_` run ending exactly at `end` closes whatever
   * follows it in the whole text (the bounded text ends there).
   */
  private closer(marker: '*' | '**' | '_' | '__', i: number, end: number): number | undefined {
    const t = this.text;
    const length = marker.length;
    if (!t.startsWith(marker, i)) return undefined;
    const contentStart = i + length;
    if (contentStart >= end || isSpace(t[contentStart])) return undefined;
    const from = contentStart + 1;
    const close = this.closers.nextCloser(marker, from);
    if (close + length <= end) return close;
    const atEnd = end - length;
    const closesAtEnd =
      marker[0] === '_' && atEnd >= from && t.startsWith(marker, atEnd) && !isSpace(t[atEnd - 1]);
    return closesAtEnd ? atEnd : undefined;
  }

  /** A bare `http://` or `https://` URL up to a space, `<`, `>` or parenthesis, less trailing punctuation. */
  private bareUrl(i: number, end: number): Found | undefined {
    const t = this.text;
    if (t[i] !== 'h') return undefined;
    const scheme = t.startsWith('https://', i) ? 8 : t.startsWith('http://', i) ? 7 : 0;
    if (scheme === 0) return undefined;
    const rest = i + scheme;
    let stop = Math.min(this.closers.nextChar('url', URL_STOP, rest), end);
    // At least two characters after `//`, the last of them not trailing punctuation.
    while (stop >= rest + 2 && URL_TRAILING.has(t[stop - 1]!)) stop--;
    if (stop < rest + 2) return undefined;
    const href = t.slice(i, stop);
    return { node: { type: 'link', href, children: [{ type: 'text', text: href }] }, next: stop };
  }
}

interface Found {
  node: Inline;
  /** Where parsing goes on after the node. */
  next: number;
}
