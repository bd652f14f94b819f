/**
 * Cuts a knowledge source into passages (docs/knowledge.md "Chunking"): at its headings first, then at paragraph
 * boundaries when a section is long, so each passage answers one thing and keeps the heading path it sits under
 * (`Returns › Refunds`) as its title — words of the headings are what visitors ask with, and ranking weights them.
 */

export interface Chunk {
  /** The source's title and the heading path: `Shipping › International › Customs`. */
  title: string;
  /** The section's text (markdown kept as written; HTML reduced to text). */
  body: string;
}

/** A passage grows by whole paragraphs up to about this many characters; one longer paragraph stays whole. */
export const CHUNK_TARGET_CHARS = 1200;
/** Most passages one source may become (a source is capped in bytes, so this is only a backstop). */
export const MAX_CHUNKS = 2000;
/**
 * Between the source's title and the headings of a passage's title (packages/server/src/knowledge/ranking.ts reads
 * the source's title back).
 */
export const SEPARATOR = ' › ';

export type KnowledgeContentType = 'text/markdown' | 'text/html' | 'text/plain';

/** Passages of a source's text, empty sections left out. */
export function chunkSource(title: string, content: string, contentType: KnowledgeContentType): Chunk[] {
  const markdown = contentType === 'text/html' ? htmlToMarkdown(content) : content;
  const sections =
    contentType === 'text/plain' ? [{ path: [] as string[], text: markdown }] : sectionsOf(markdown);
  const chunks: Chunk[] = [];
  for (const section of sections) {
    // A first heading that only repeats the source's title adds nothing to the path.
    const path = section.path.filter((h, i) => !(i === 0 && sameText(h, title)));
    const chunkTitle = [title, ...path].join(SEPARATOR);
    for (const body of paragraphGroups(section.text)) {
      chunks.push({ title: chunkTitle, body });
      if (chunks.length >= MAX_CHUNKS) return chunks;
    }
  }
  return chunks;
}

interface Section {
  path: string[];
  text: string;
}

/** Markdown sections: ATX headings (`#`–`######`, CommonMark §4.2) open a section; fenced code is not searched for headings. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ path: [...path], text });
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      path.length = Math.min(path.length, level - 1);
      while (path.length < level - 1) path.push('');
      path.push(heading[2]!.trim());
      continue;
    }
    lines.push(line);
  }
  flush();
  // Levels skipped (an h3 straight under an h1) leave empty places in the path.
  return sections.map((s) => ({ path: s.path.filter((h) => h !== ''), text: s.text }));
}

/** Paragraphs (split at blank lines) joined into passages of about CHUNK_TARGET_CHARS. */
function paragraphGroups(text: string): string[] {
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const groups: string[] = [];
  let current = '';
  for (const paragraph of paragraphs) {
    if (current && current.length + paragraph.length + 2 > CHUNK_TARGET_CHARS) {
      groups.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${paragraph}` : paragraph;
  }
  if (current) groups.push(current);
  return groups;
}

const sameText = (a: string, b: string) =>
  normalizeSpace(a).toLowerCase() === normalizeSpace(b).toLowerCase();
const normalizeSpace = (s: string) => s.replace(/\s+/g, ' ').trim();

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Decodes named (the common five and nbsp) and numeric character references (HTML §13.5). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** The `<title>` of an HTML document, else its first `<h1>`, as text. */
export function htmlTitle(html: string): string | undefined {
  const found = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html) ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html);
  const text = found ? normalizeSpace(decodeEntities(found[1]!.replace(/<[^>]+>/g, ''))) : '';
  return text || undefined;
}

/**
 * HTML as markdown-like text for chunking: headings become `#` lines, block elements paragraph breaks, list items
 * `- ` lines; scripts, styles, the head, navigation and forms are dropped; every other tag is removed. The result
 * is only indexed and quoted as text, never rendered as HTML.
 */
export function htmlToMarkdown(html: string): string {
  return decodeEntities(
    html
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<(script|style|head|nav|form|template|noscript|svg)\b[\s\S]*?<\/\1\s*>/gi, '')
      .replace(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi, (_m, level: string, inner: string) => {
        const text = normalizeSpace(inner.replace(/<[^>]+>/g, ''));
        return `\n\n${'#'.repeat(Number(level))} ${text}\n\n`;
      })
      .replace(/<li\b[^>]*>/gi, '\n- ')
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(
        /<\/?(p|div|section|article|main|ul|ol|table|tr|blockquote|pre|dl|dt|dd|header|footer)\b[^>]*>/gi,
        '\n\n',
      )
      .replace(/<\/?(td|th)\b[^>]*>/gi, ' ')
      .replace(/<[^>]+>/g, ''),
  )
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Plain text of a markdown passage for snippets and answers without markup noise: links keep their text. */
export function plainText(markdown: string): string {
  return normalizeSpace(
    markdown
      .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/[*_`>#]+/g, ' '),
  );
}
