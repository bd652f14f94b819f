/** What a key does in the inbox (nothing when the agent is typing in a field). */
export type ShortcutAction = 'next' | 'previous' | 'assign' | 'resolve' | 'compose' | 'help';

/** The keys, in the order the help overlay lists them. */
export const SHORTCUTS: ReadonlyArray<{ keys: string[]; action: ShortcutAction; label: string }> = [
  { keys: ['j'], action: 'next', label: 'Next conversation' },
  { keys: ['k'], action: 'previous', label: 'Previous conversation' },
  { keys: ['a'], action: 'assign', label: 'Assign to me' },
  { keys: ['e'], action: 'resolve', label: 'Resolve' },
  { keys: ['r', '/'], action: 'compose', label: 'Focus the composer' },
  { keys: ['?'], action: 'help', label: 'Show these shortcuts' },
];

export interface KeyInput {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** Tag name of the focused element (upper case, as the DOM gives it), and whether it is editable. */
  targetTag: string;
  targetEditable: boolean;
}

/**
 * The action of a key press, or undefined: single keys without Ctrl/⌘/Alt only, and never while the focus is in a
 * field, so typing "j" in the composer types a j (WCAG 2.1.4 Character Key Shortcuts: they are active only when
 * the focus is outside text entry).
 */
export function shortcutFor(input: KeyInput): ShortcutAction | undefined {
  if (input.ctrlKey || input.metaKey || input.altKey) return undefined;
  if (input.targetEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(input.targetTag)) return undefined;
  return SHORTCUTS.find((s) => s.keys.includes(input.key))?.action;
}

/** The id after (or before) `current` in `ids`, clamped at both ends; the first one when nothing is selected. */
export function neighbour(ids: string[], current: string | undefined, step: 1 | -1): string | undefined {
  if (ids.length === 0) return undefined;
  const at = current ? ids.indexOf(current) : -1;
  if (at === -1) return ids[0];
  return ids[Math.min(ids.length - 1, Math.max(0, at + step))];
}
