import type { App } from '../http/types.ts';
import { platformConversationView } from '../webchat/conversations/conversation.ts';
import { SearchQuery, searchPage } from '../webchat/search/search.schemas.ts';
import type { Webchat } from '../webchat/webchat-services.ts';
import { sessionOf } from './portal-auth.ts';

/** The inbox's search box (docs/routing.md "Search"): hits with what agents have not read yet. */
export function registerSearchRoutes(app: App, webchat: Webchat): void {
  app.get(
    '/inbox/search',
    { config: { portalAccess: 'any' }, schema: { querystring: SearchQuery } },
    async (request) =>
      searchPage(webchat, sessionOf(request).user.companyId, request.query, async (conversations) => {
        const unread = await webchat.reads.unreadCounts(
          'agent',
          conversations.map((c) => c.id),
        );
        return conversations.map((c) => ({
          ...platformConversationView(c),
          unread_count: unread.get(c.id) ?? 0,
        }));
      }),
  );
}
