/**
 * The content types attachments may have, and how each is recognised from its first bytes (the file signatures of
 * the formats' own specifications; HTML as in the WHATWG MIME Sniffing Standard §7.1). The type stored and served is
 * always the detected one: a client's declared type is only compared with it.
 */
export const ATTACHMENT_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'image/svg+xml',
] as const;

export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

/** What a company allows unless it chose otherwise (docs/design.md "Attachments"): everything but SVG. */
export const DEFAULT_ALLOWED_TYPES: readonly AttachmentType[] = ATTACHMENT_TYPES.filter(
  (t) => t !== 'image/svg+xml',
);

/** Shown inline (an `<img>` can load them); every other type is downloaded (`Content-Disposition: attachment`). */
export const RASTER_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

/** How many leading bytes `sniff` needs to decide (fewer when the file is shorter). */
export const SNIFF_BYTES = 1024;

/** What the head of a file is: one of ATTACHMENT_TYPES, `text/html` (never allowed), or `undefined` (unknown). */
export type Sniffed = AttachmentType | 'text/html' | undefined;

const startsWith = (head: Buffer, bytes: number[], at = 0) =>
  head.length >= at + bytes.length && bytes.every((b, i) => head[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/**
 * Binary formats by signature; text (valid UTF-8 without NUL in the head) as SVG, HTML or plain text. Whether the
 * REST of a text file is valid UTF-8 without NUL is the inspector's check (upload-inspector.ts).
 */
export function sniff(head: Buffer): Sniffed {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(head, ascii('%PDF-'))) return 'application/pdf';
  const text = textOfHead(head);
  if (text === undefined) return undefined;
  const markup = text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (looksLikeSvg(markup)) return 'image/svg+xml';
  if (looksLikeHtml(markup)) return 'text/html';
  return 'text/plain';
}

/** The head as text, or `undefined` if it holds NUL or is not UTF-8 (a sequence cut at its end is fine). */
function textOfHead(head: Buffer): string | undefined {
  if (head.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return undefined;
  }
}

/** An `<svg` root, possibly after an XML declaration, comments, processing instructions or a DOCTYPE. */
function looksLikeSvg(markup: string): boolean {
  const rest = markup.replace(/^(?:(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!doctype[^>]*>)\s*)*/, '');
  return /^<svg[\s>/]/.test(rest);
}

/** WHATWG MIME Sniffing §7.1 step 6's HTML patterns, plus any markup that holds a script element. */
function looksLikeHtml(markup: string): boolean {
  if (
    /^<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[\s>]/.test(
      markup,
    )
  )
    return true;
  return markup.startsWith('<') && /<script[\s>]/.test(markup);
}

/** Declared types that name plain text: stored and served as `text/plain`. */
const PLAIN_TEXT_ALIASES = new Set(['text/plain', 'text/markdown', 'text/csv']);

/**
 * Whether the client's declared type agrees with what the bytes are. An absent or generic declaration
 * (`application/octet-stream`, what browsers send for unknown extensions) defers to the bytes.
 */
export function declaredTypeAgrees(declared: string | undefined, detected: AttachmentType): boolean {
  const type = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === '' || type === 'application/octet-stream') return true;
  if (type === 'image/jpg' || type === 'image/pjpeg') return detected === 'image/jpeg';
  if (detected === 'text/plain') return PLAIN_TEXT_ALIASES.has(type);
  return type === detected;
}
