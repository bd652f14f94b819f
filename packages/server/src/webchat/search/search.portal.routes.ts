import type { InboxSearchPage } from '@parley/wire-types';
import type { App } from '../../http/types.ts';
import { sessionOf } from '../../users/portal-session.ts';
import type { InboxFeed } from '../inbox-feed/inbox-feed.ts';
import type { ConversationSearch } from './conversation-search.ts';
import { SearchQuery, searchPage } from './search.schemas.ts';

/** What the inbox's search box uses: the search, and the inbox entries it answers with. */
export interface SearchPortalDeps {
  search: Pick<ConversationSearch, 'search' | 'matchesIn'>;
  inbox: Pick<InboxFeed, 'views'>;
}

/**
 * The inbox's search box (docs/routing.md "Search"): each hit is the conversation's inbox entry (the same
 * InboxFeed view the list and its live events show: unread count, CSAT, last message), with its `match`.
 */
export function registerSearchPortalRoutes(app: App, deps: SearchPortalDeps): void {
  app.get(
    '/inbox/search',
    { config: { portalAccess: 'any' }, schema: { querystring: SearchQuery } },
    async (request): Promise<InboxSearchPage> =>
      searchPage(deps.search, sessionOf(request).user.companyId, request.query, (conversations) =>
        deps.inbox.views(conversations),
      ),
  );
}
