import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.ts';
import type { FeedbackService } from '../feedback/feedback.service.ts';
import { ownConversation, type SessionConversations } from '../identity/sdk-session.ts';
import type { ReadMarks } from '../reads/read-marks.ts';
import { UUID_PATTERN } from '../uuid-pattern.ts';

/** Longest feedback or CSAT comment, in characters. */
const MAX_COMMENT_LENGTH = 2000;

const Comment = Type.Optional(Type.Union([Type.String({ maxLength: MAX_COMMENT_LENGTH }), Type.Null()]));
const ConversationParams = Type.Object({ id: Type.String() });
const MessageParams = Type.Object({ id: Type.String(), messageId: Type.String() });
const FeedbackBody = Type.Object(
  { rating: Type.Union([Type.Literal('up'), Type.Literal('down')]), comment: Comment },
  { additionalProperties: false },
);
const CsatBody = Type.Object(
  { score: Type.Integer({ minimum: 1, maximum: 5 }), comment: Comment },
  { additionalProperties: false },
);
const ReadBody = Type.Object(
  { message_id: Type.String({ pattern: UUID_PATTERN }) },
  { additionalProperties: false },
);

const docs = (summary: string, description: string) => ({
  tags: ['webchat-sdk'],
  summary,
  description: `Session headers as on every /sdk/v1 route. ${description}`,
});

/** What the visitor's feedback, CSAT and read routes use. */
export interface SdkFeedbackDeps {
  conversations: SessionConversations;
  feedback: Pick<FeedbackService, 'rateMessage' | 'rateConversation'>;
  reads: Pick<ReadMarks, 'markVisitorRead'>;
}

/**
 * The visitor's side of feedback, CSAT and read state on `/sdk/v1` (docs/design.md "Feedback, CSAT and read state"),
 * registered inside the SDK plugin, so the session headers, Origin and visitor token are checked first. Every
 * route acts on a conversation the session (or its verified visitor) may see; any other is 404.
 */
export function registerSdkFeedbackRoutes(sdk: App, deps: SdkFeedbackDeps): void {
  sdk.put(
    '/conversations/:id/messages/:messageId/feedback',
    {
      schema: {
        ...docs(
          'Rate a message',
          'Thumbs up or down (and an optional comment) on a complete digital-employee or agent message; rating again replaces it. Message reads then show `feedback`.',
        ),
        params: MessageParams,
        body: FeedbackBody,
      },
    },
    async (request) => {
      const conversation = await ownConversation(deps.conversations, request, request.params.id);
      return deps.feedback.rateMessage(conversation, request.params.messageId, request.body);
    },
  );

  sdk.put(
    '/conversations/:id/csat',
    {
      schema: {
        ...docs(
          'Rate the conversation (CSAT)',
          'A score from 1 to 5 (and an optional comment) once the conversation is closed; rating again replaces it.',
        ),
        params: ConversationParams,
        body: CsatBody,
      },
    },
    async (request) => {
      const conversation = await ownConversation(deps.conversations, request, request.params.id);
      return deps.feedback.rateConversation(conversation, request.body);
    },
  );

  sdk.post(
    '/conversations/:id/read',
    {
      schema: {
        ...docs(
          'Mark messages read',
          'Everything up to `message_id` is read (the mark never moves back); `unread_count` counts what follows it.',
        ),
        params: ConversationParams,
        body: ReadBody,
      },
    },
    async (request, reply) => {
      const conversation = await ownConversation(deps.conversations, request, request.params.id);
      await deps.reads.markVisitorRead(conversation, request.body.message_id);
      return reply.status(204).send();
    },
  );
}
