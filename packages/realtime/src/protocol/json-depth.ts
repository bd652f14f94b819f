/**
 * The nesting limit for JSON that clients send (docs/protocol.md "JSON nesting"): arrays and objects together, at
 * most 64 levels. `JSON.parse` itself copes with any depth, but `JSON.stringify`, `structuredClone` and every
 * recursive walk overflow the stack somewhere past a few thousand levels — so deep input is refused before anything
 * walks it.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether the JSON text `text` nests arrays and objects deeper than `max` levels, read in one pass without
 * recursion and without parsing (brackets inside strings do not count). Malformed text is not judged here: the
 * parser that runs next refuses it.
 */
export function exceedsJsonDepth(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Fewer characters than levels cannot nest that deep: the usual small body costs nothing.
  if (text.length <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/**
 * The index of the quote that closes the string opening at `start` (one not escaped by an odd run of backslashes),
 * found with `indexOf` so long strings cost little; -1 when the string never closes (malformed JSON).
 */
function endOfString(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
