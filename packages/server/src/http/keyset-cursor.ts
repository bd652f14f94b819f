import { BadRequestError } from '../errors/app-error.ts';
import { isUnsafeString } from './unsafe-text.ts';

/** The last row of a page, newest-updated first: where the next page starts. */
export interface KeysetPosition {
  updatedAt: string;
  id: string;
}

/**
 * An opaque cursor for keyset pagination over (updated_at, id): unlike an offset it stays correct while rows are
 * added or updated between page requests. base64url keeps it safe in a query string.
 */
export const encodeCursor = (position: KeysetPosition): string =>
  Buffer.from(JSON.stringify([position.updatedAt, position.id])).toString('base64url');

/**
 * Reads a cursor from {@link encodeCursor}; anything else is the client's mistake (`invalid_cursor`, 400). A forged
 * cursor whose strings hold U+0000 or a lone surrogate (src/http/unsafe-text.ts) never reaches a query.
 */
export function decodeCursor(cursor: string): KeysetPosition {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof updatedAt === 'string' &&
      typeof id === 'string' &&
      !isUnsafeString(updatedAt) &&
      !isUnsafeString(id)
    )
      return { updatedAt, id };
  } catch {
    // Falls through to the problem below.
  }
  throw invalidCursor();
}

/** A cursor this API never returned (or one tampered with): 400 `invalid_cursor`. */
export const invalidCursor = () =>
  new BadRequestError('invalid_cursor', 'The cursor is not one this API returned.');

export interface KeysetPage<T> {
  items: T[];
  /** Where the next page starts; `null` on the last page. */
  nextCursor: string | null;
}

/**
 * One page of a keyset-paginated list. Fetches one row more than the page holds, so whether another page follows
 * is known without counting the rows.
 */
export async function keysetPage<T extends KeysetPosition>(
  limit: number,
  cursor: string | undefined,
  fetchRows: (query: { limit: number; before?: KeysetPosition }) => Promise<T[]>,
): Promise<KeysetPage<T>> {
  const rows = await fetchRows({ limit: limit + 1, before: cursor ? decodeCursor(cursor) : undefined });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
