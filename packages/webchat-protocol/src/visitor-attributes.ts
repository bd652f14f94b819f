import type { VisitorAttributes } from './conversations.ts';

/**
 * Visitor attributes (docs/design.md "Agent workspace"): what the integrator tells agents about the visitor — a plan,
 * an order count — in the visitor token's `attributes` claim or the SDK's `attributes` option. Small on purpose:
 * they are kept on every conversation of the visitor, shown in the inbox and filtered by (`attr.KEY=VALUE`).
 */
export const ATTRIBUTE_LIMITS = { count: 20, keyLength: 64, valueLength: 256 } as const;

/** Keys are what agents filter by (`attr.plan=gold`): letters, digits, `_`, `.` and `-`. */
const KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** U+0000 (PostgreSQL text cannot hold it) or an unpaired surrogate (not UTF-8): text no store keeps faithfully. */
function isUnsafe(text: string): boolean {
  if (text.includes('\u0000')) return true;
  try {
    // URI encoding refuses exactly the unpaired surrogates (ECMA-262 §19.2.6.5 Encode).
    encodeURIComponent(text);
    return false;
  } catch {
    return true;
  }
}

export type AttributesReading =
  | { attributes: VisitorAttributes; problem?: undefined }
  | { problem: string; attributes?: undefined };

/**
 * Checks an `attributes` value: an object of at most 20 entries; keys 1–64 characters of `[A-Za-z0-9_.-]`; values
 * strings of at most 256 characters, finite numbers or booleans. Answers the attributes or the rule broken (a
 * sentence that may name a key, never a value). `undefined` and `null` are no attributes.
 */
export function readVisitorAttributes(value: unknown): AttributesReading {
  if (value === undefined || value === null) return { attributes: {} };
  if (typeof value !== 'object' || Array.isArray(value))
    return { problem: 'attributes must be an object of string, number or boolean values.' };
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > ATTRIBUTE_LIMITS.count)
    return { problem: `attributes may hold at most ${ATTRIBUTE_LIMITS.count} entries.` };
  const attributes: VisitorAttributes = {};
  for (const [key, v] of entries) {
    if (key.length > ATTRIBUTE_LIMITS.keyLength || !KEY.test(key))
      return {
        problem: `attribute keys must be 1–${ATTRIBUTE_LIMITS.keyLength} characters of letters, digits, _ . and -.`,
      };
    if (typeof v === 'string') {
      if ([...v].length > ATTRIBUTE_LIMITS.valueLength || isUnsafe(v))
        return {
          problem: `attribute ${key} must be text of at most ${ATTRIBUTE_LIMITS.valueLength} characters.`,
        };
      attributes[key] = v;
    } else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') {
      attributes[key] = v;
    } else {
      return { problem: `attribute ${key} must be a string, a number or a boolean.` };
    }
  }
  return { attributes };
}

/** The text an attribute value is filtered by: `attr.vip=true`, `attr.orders=3`, `attr.plan=gold`. */
export const attributeText = (value: string | number | boolean): string => String(value);
