import { replaceUnsafe } from '../../http/unsafe-text.ts';

/** Longest stored file name, in characters (extension kept when a longer one is cut). */
const MAX_FILE_NAME_LENGTH = 200;

const FALLBACK_NAME: Record<string, string> = {
  'image/png': 'image.png',
  'image/jpeg': 'image.jpg',
  'image/gif': 'image.gif',
  'image/webp': 'image.webp',
  'image/svg+xml': 'image.svg',
  'application/pdf': 'document.pdf',
  'text/plain': 'file.txt',
};

/**
 * A client's file name made safe to store, show and send in `Content-Disposition` — it is never used as a path
 * (blobs are stored under random keys). Cleaned, never refused: only the last path segment is kept (`..\/..\/etc\/x`
 * → `x`, `C:\\x` → `x`), control characters (C0, DEL, C1) and bidirectional overrides (which make `gpj.exe` read as
 * `exe.jpg`) are removed, unpaired surrogates become U+FFFD (the edge's text rule, src/http/unsafe-text.ts),
 * characters Windows forbids in names become `_`, leading dots and trailing dots and spaces go (no hidden files, no
 * `..`), and a name longer than MAX_FILE_NAME_LENGTH is cut keeping its extension. What is left empty becomes a name
 * for the detected type.
 */
export function sanitizeFileName(raw: string | undefined, contentType: string): string {
  const fallback = FALLBACK_NAME[contentType] ?? 'file';
  if (!raw) return fallback;
  const lastSegment = raw.normalize('NFC').split(/[/\\]/).pop() ?? '';
  const visible = lastSegment
    .split('')
    .filter((c) => !isInvisibleOrControl(c.charCodeAt(0)))
    .join('');
  // RFC 5987 `filename*` may name any charset: `UTF-16LE''%00%D8` decodes to a lone surrogate, which has no UTF-8
  // form and which SQLite and PostgreSQL would store differently (src/http/unsafe-text.ts): it becomes U+FFFD.
  const cleaned = replaceUnsafe(visible)
    .replace(/[<>:"|?*]/g, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+/, '')
    .replace(/[\s.]+$/, '');
  if (cleaned.length === 0) return fallback;
  return cutKeepingExtension(cleaned);
}

/** C0, DEL and C1 controls, directional marks and overrides (U+200E/F, U+202A–E, U+2066–9) and the BOM. */
function isInvisibleOrControl(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0xfeff
  );
}

function cutKeepingExtension(name: string): string {
  const chars = [...name];
  if (chars.length <= MAX_FILE_NAME_LENGTH) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? [...name.slice(dot)].slice(0, 16).join('') : '';
  return chars.slice(0, MAX_FILE_NAME_LENGTH - extension.length).join('') + extension;
}

/**
 * `Content-Disposition` for a download (RFC 6266 §4.1): an ASCII `filename` fallback (quotes and backslashes
 * replaced) and the exact name as `filename*` in RFC 8187 encoding.
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
