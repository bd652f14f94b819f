import { Type } from '@sinclair/typebox';
import { keysetPage } from '../../http/keyset-cursor.ts';
import type { Conversation } from '../conversation.ts';
import type { ConversationSearch } from './conversation-search.ts';

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    cursor: Type.Optional(Type.String({ maxLength: 300 })),
  },
  { additionalProperties: false },
);

/**
 * One page of search hits as the platform and the portal answer it: each conversation as `viewsOf` shows it (the
 * platform view, or the inbox entry) with `match`, the latest message holding the query's words (null when only the
 * visitor or the id matched).
 */
export async function searchPage<View extends object>(
  search: Pick<ConversationSearch, 'search' | 'matchesIn'>,
  companyId: string,
  query: { q: string; limit?: string; cursor?: string },
  viewsOf: (conversations: Conversation[]) => Promise<View[]>,
) {
  const limit = Math.min(Math.max(Number(query.limit ?? 20), 1), 100);
  const page = await keysetPage(limit, query.cursor, (position) =>
    search.search(companyId, query.q, position),
  );
  const matches = await search.matchesIn(
    page.items.map((c) => c.id),
    query.q,
  );
  const views = await viewsOf(page.items);
  return {
    items: views.map((view, i) => ({ ...view, match: matches.get(page.items[i]!.id) ?? null })),
    next_cursor: page.nextCursor,
  };
}
