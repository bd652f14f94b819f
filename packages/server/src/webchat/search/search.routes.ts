import type { App } from '../../http/types.ts';
import { principalOf } from '../../oauth/principal.ts';
import { platformConversationView } from '../conversation.ts';
import type { ConversationSearch } from './conversation-search.ts';
import { SearchQuery, searchPage } from './search.schemas.ts';

/** Search on the platform API (docs/routing.md "Search"): the token's company only. */
export function registerPlatformSearchRoutes(
  app: App,
  search: Pick<ConversationSearch, 'search' | 'matchesIn'>,
): void {
  app.get(
    '/platform/v1/conversations/search',
    {
      config: { requiredScope: 'conversations:read' },
      schema: {
        tags: ['conversations'],
        summary: 'Search conversations',
        description:
          'By the visitor’s name, email or id, the conversation id, or message text (every word of `q`, each as a prefix). Most recently active first; `cursor` pages on. Each hit carries `match`: the latest matching message’s id, role and an excerpt (null when only the visitor or id matched).',
        querystring: SearchQuery,
      },
    },
    async (request) => {
      const { items, next_cursor } = await searchPage(
        search,
        principalOf(request).companyId,
        request.query,
        async (conversations) => conversations.map(platformConversationView),
      );
      return { conversations: items, next_cursor };
    },
  );
}
