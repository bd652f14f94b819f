/** A colleague who can be mentioned in a note. */
export interface Colleague {
  id: string;
  name: string | null;
  email: string;
}

/** `@query` right before the caret, at the start or after a space (the same rule as `/` for canned responses). */
const TRIGGER = /(^|\s)@([^\s@]*)$/;

/** The `@…` being typed before `caret`: where it starts and what follows the `@`, or undefined. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const match = TRIGGER.exec(before);
  if (!match) return undefined;
  const query = match[2]!;
  return { start: before.length - query.length - 1, query };
}

/** The handle a mention inserts: the display name without spaces, else the email's local part. */
export function handleOf(c: Colleague): string {
  return (c.name ?? '').trim().replace(/\s+/g, '_') || c.email.replace(/@.*$/, '');
}

/** Colleagues whose name or email starts a word with the query (case-insensitive), at most `limit`. */
export function matchColleagues(all: Colleague[], query: string, limit = 6): Colleague[] {
  const q = query.toLowerCase();
  return all
    .filter((c) =>
      [c.name ?? '', c.email].some((s) =>
        s
          .toLowerCase()
          .split(/[\s@._-]+/)
          .some((w) => w.startsWith(q)),
      ),
    )
    .slice(0, limit);
}

/** The text with the `@query` at `start` replaced by `@handle ` and where the caret goes. */
export function insertMention(
  text: string,
  start: number,
  caret: number,
  c: Colleague,
): { text: string; caret: number } {
  const inserted = `@${handleOf(c)} `;
  return { text: text.slice(0, start) + inserted + text.slice(caret), caret: start + inserted.length };
}

/** The ids of the colleagues whose handle the note still names (a mention erased after picking it is dropped). */
export function mentionedIds(text: string, picked: Colleague[]): string[] {
  const ids = picked.filter((c) =>
    new RegExp(`(^|\\s)@${escapeRegExp(handleOf(c))}(?=$|[\\s.,;:!?])`).test(text),
  );
  return [...new Set(ids.map((c) => c.id))];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
