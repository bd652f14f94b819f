import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.ts';
import { type Conversation, conversationView } from '../conversation.ts';
import { ownConversation, type SdkSession, type SessionConversations } from '../identity/sdk-session.ts';
import { openingView } from './routing.schemas.ts';
import type { RoutingSettingsStore } from './routing-settings.ts';

/**
 * What the visitor's routing routes use. `requestHuman` is typed here rather than imported: conversations/ (its
 * commands) builds on routing/, so routing/ must not import it back.
 */
export interface SdkRoutingDeps {
  conversations: SessionConversations;
  commands: {
    requestHuman(
      companyId: string,
      conversationId: string,
      actor: { id: string; ip?: string },
    ): Promise<Conversation>;
  };
  routingSettings: Pick<RoutingSettingsStore, 'get'>;
}

/**
 * The visitor's side of routing on `/sdk/v1`, registered inside the SDK plugin (session headers, Origin and
 * visitor token checked first): ask for a person, and learn whether agents are in (business hours).
 */
export function registerSdkRoutingRoutes(sdk: App, deps: SdkRoutingDeps): void {
  sdk.post(
    '/conversations/:id/request-human',
    {
      schema: {
        tags: ['webchat-sdk'],
        summary: 'Ask for a person',
        description:
          'Session headers as on every /sdk/v1 route. Puts the conversation in the company queue (`queued_at`) with a system notice saying when agents are in; an available agent is assigned at once (round-robin). The digital employee keeps answering until an agent joins. Idempotent. Answers the conversation and `business_hours` (`open`, `next_open_at`).',
        params: Type.Object({ id: Type.String() }),
      },
    },
    async (request) => {
      const session = request.sdkSession as SdkSession;
      const own = await ownConversation(deps.conversations, request, request.params.id);
      const conversation = await deps.commands.requestHuman(session.company.id, own.id, {
        id: `visitor:${session.visitor?.id ?? session.sessionId}`,
        ip: request.ip,
      });
      const settings = await deps.routingSettings.get(session.company.id);
      return { ...conversationView(conversation), business_hours: openingView(settings) };
    },
  );
}
