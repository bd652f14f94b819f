import type { App } from '../http/types.ts';
import { SearchQuery, searchPage } from '../webchat/search/search.schemas.ts';
import type { Webchat } from '../webchat/webchat-services.ts';
import { sessionOf } from './portal-auth.ts';

/**
 * The inbox's search box (docs/routing.md "Search"): each hit is the conversation's inbox entry (the same
 * InboxFeed view the list and its live events show: unread count, CSAT, last message), with its `match`.
 */
export function registerSearchRoutes(app: App, webchat: Webchat): void {
  app.get(
    '/inbox/search',
    { config: { portalAccess: 'any' }, schema: { querystring: SearchQuery } },
    async (request) =>
      searchPage(webchat.search, sessionOf(request).user.companyId, request.query, (conversations) =>
        webchat.inbox.views(conversations),
      ),
  );
}
