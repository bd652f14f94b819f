/**
 * The one rule for text that enters Parley, at every boundary (HTTP bodies, headers, query, path parameters, and
 * realtime SendMessages): no U+0000 and no unpaired UTF-16 surrogate. PostgreSQL `text` cannot store U+0000, and a
 * lone surrogate is not a Unicode scalar value, so it has no UTF-8 form (RFC 3629 §3) and would be stored as U+FFFD
 * by one database and refused by the other. Refusing both at the edge keeps SQLite and PostgreSQL identical.
 */

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSAFE_TEXT_MESSAGE = 'must not contain U+0000 or an unpaired surrogate';

export function isUnsafeString(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/**
 * The path of the first string in `value` (at any depth, object keys included) that breaks the rule, or
 * `undefined` when every string is safe. Paths read like validation fields: `author.name`, `blocks.0.content`;
 * an offending key is named with its unsafe characters replaced by U+FFFD, so the answer never echoes them.
 */
export function findUnsafeText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isUnsafeString(value) ? path : undefined;
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeText(value[i], join(path, String(i)));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (isUnsafeString(key)) return join(path, replaceUnsafe(key));
    const found = findUnsafeText(item, join(path, key));
    if (found !== undefined) return found;
  }
  return undefined;
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** `text` with each U+0000 and unpaired surrogate replaced by U+FFFD: for text that is cleaned, not refused. */
export const replaceUnsafe = (text: string): string =>
  text.replace(new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g'), '\uFFFD');
