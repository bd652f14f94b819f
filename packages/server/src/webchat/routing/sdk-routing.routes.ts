import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.ts';
import { conversationView } from '../conversation.ts';
import { ownConversation, type SdkSession } from '../routes/sdk-session.ts';
import type { Webchat } from '../webchat-services.ts';
import { openingView } from './routing.schemas.ts';

/**
 * The visitor's side of routing on `/sdk/v1`, registered inside the SDK plugin (session headers, Origin and
 * visitor token checked first): ask for a person, and learn whether agents are in (business hours).
 */
export function registerSdkRoutingRoutes(sdk: App, webchat: Webchat): void {
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
      const own = await ownConversation(webchat, request, request.params.id);
      const conversation = await webchat.commands.requestHuman(session.company.id, own.id, {
        id: `visitor:${session.visitor?.id ?? session.sessionId}`,
        ip: request.ip,
      });
      const settings = await webchat.routingSettings.get(session.company.id);
      return { ...conversationView(conversation), business_hours: openingView(settings) };
    },
  );
}
