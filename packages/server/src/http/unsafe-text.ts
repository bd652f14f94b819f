/**
 * The one rule for text that enters Parley, at every boundary (HTTP bodies, headers, query, path parameters, and
 * realtime SendMessages): no U+0000 and no unpaired UTF-16 surrogate. PostgreSQL `text` cannot store U+0000, and a
 * lone surrogate is not a Unicode scalar value, so it has no UTF-8 form (RFC 3629 §3) and would be stored as U+FFFD
 * by one database and refused by the other. Refusing both at the edge keeps SQLite and PostgreSQL identical.
 */

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSAFE_TEXT_MESSAGE = 'must not contain U+0000 or an unpaired surrogate';

/** Any U+0000 or surrogate at all: one character-class scan, which almost every string passes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what the rule refuses.
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

export function isUnsafeString(text: string): boolean {
  // Most text has neither; only text with a surrogate needs the pairing check.
  return SUSPECT.test(text) && (text.includes('\u0000') || LONE_SURROGATE.test(text));
}

/**
 * The path of the first string in `value` (at any depth, object keys included) that breaks the rule, or
 * `undefined` when every string is safe. Paths read like validation fields: `author.name`, `blocks.0.content`;
 * an offending key is named with its unsafe characters replaced by U+FFFD, so the answer never echoes them.
 * Walked with a stack of its own, not by recursion: however deep `value` nests, the call stack does not grow.
 */
export function findUnsafeText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isUnsafeString(value) ? path : undefined;
  if (isFlatAndSafe(value)) return undefined;
  // Depth-first, in document order: a key is checked just before its value is walked.
  const pending: Step[] = [{ value, path }];
  for (let step = pending.pop(); step !== undefined; step = pending.pop()) {
    const item = step.value;
    if (step.key !== undefined) {
      if (isUnsafeString(step.key)) return join(step.path, replaceUnsafe(step.key));
    } else if (typeof item === 'string') {
      if (isUnsafeString(item)) return step.path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--)
        pending.push({ value: item[i], path: join(step.path, String(i)) });
    } else if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        pending.push({ value: child, path: join(step.path, key) });
        pending.push({ value: undefined, path: step.path, key });
      }
    }
  }
  return undefined;
}

/**
 * Whether `value` is an object whose keys and values are all safe strings (or absent): headers, a query, path
 * parameters, a form — what every request brings. Checked without the walk's allocations; anything else (nesting,
 * arrays, an unsafe string) goes to the walk, which finds the same answer in the same order.
 */
function isFlatAndSafe(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value))
    return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (isUnsafeString(key)) return false;
    if (typeof item === 'string') {
      if (isUnsafeString(item)) return false;
    } else if (item !== undefined && item !== null && typeof item !== 'number' && typeof item !== 'boolean') {
      return false;
    }
  }
  return true;
}

/** One value still to look at, or (with `key`) one object key to check. */
interface Step {
  value: unknown;
  path: string;
  key?: string;
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** `text` with each U+0000 and unpaired surrogate replaced by U+FFFD: for text that is cleaned, not refused. */
export const replaceUnsafe = (text: string): string =>
  text.replace(new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g'), '\uFFFD');
