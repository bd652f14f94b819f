import { type MessageSnapshot, NOTE_LIMITS } from '@parley/webchat-protocol';
import type {
  CompanyLabelsView,
  ConversationLabelsView,
  ConversationSummaryView,
  SuggestedRepliesView,
  WorkspaceStatusView,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import type { KnowledgeSearch } from '../knowledge/knowledge-search.ts';
import { displayNameOf } from '../users/display-name.ts';
import { actorOf, companyOf, sessionOf } from '../users/portal-session.ts';
import type { Conversation } from '../webchat/conversation.ts';
import type { ConversationCommands } from '../webchat/conversations/conversation-commands.ts';
import { type MessagePageDeps, readMessagePage } from '../webchat/routes/message-page.ts';
import { extractiveSummary } from './extractive-summary.ts';
import { lastVisitorQuestion, suggestedReplies } from './suggested-replies.ts';
import { LabelsBody, StatusBody } from './workspace.schemas.ts';
import type { NoteWriter, Workspace } from './workspace.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const NoteBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: NOTE_LIMITS.textBytes }),
    mentions: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: NOTE_LIMITS.mentions })),
  },
  { additionalProperties: false },
);
const ReadBody = Type.Optional(
  Type.Object(
    { ids: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })) },
    { additionalProperties: false },
  ),
);

/** The webchat's services the workspace's portal routes use, each narrowed to its calls (app.ts picks them by name). */
export interface WorkspacePortalDeps extends MessagePageDeps {
  commands: Pick<ConversationCommands, 'find'>;
  /** The note writer whose mentions notify agents (packages/server/src/workspace/workspace.ts `notes`). */
  notes: NoteWriter;
  /** A summary by the conversation's model, or undefined (then an extractive one): webchat/notes/handover-summary.ts. */
  summaryByModel(conversation: Conversation, messages: MessageSnapshot[]): Promise<string | undefined>;
}

/**
 * The agent workspace in the portal inbox (docs/design.md "Agent workspace"), for admins and agents alike: a
 * conversation's working status and labels (the same bodies as the platform API), the company's labels in use,
 * private notes with @mentions, and the signed-in agent's unread mentions.
 */
export function registerWorkspacePortalRoutes(
  app: App,
  webchat: WorkspacePortalDeps,
  { service: workspace, mentions }: Pick<Workspace, 'service' | 'mentions'>,
  knowledge: KnowledgeSearch,
): void {
  const any = { portalAccess: 'any' as const };
  const actor = (request: FastifyRequest) => ({ id: actorOf(request), ip: request.ip });

  app.put(
    '/inbox/conversations/:id/status',
    { config: any, schema: { params: IdParams, body: StatusBody } },
    async (request): Promise<WorkspaceStatusView> =>
      workspace.setStatus(
        companyOf(request),
        request.params.id,
        {
          status: request.body.status,
          ...(request.body.snoozed_until !== undefined ? { snoozedUntil: request.body.snoozed_until } : {}),
        },
        actor(request),
      ),
  );

  app.put(
    '/inbox/conversations/:id/labels',
    { config: any, schema: { params: IdParams, body: LabelsBody } },
    async (request): Promise<ConversationLabelsView> =>
      workspace.setLabels(companyOf(request), request.params.id, request.body.labels, actor(request)),
  );

  app.get(
    '/labels',
    { config: any },
    async (request): Promise<CompanyLabelsView> => ({
      labels: await workspace.companyLabels(companyOf(request)),
    }),
  );

  // A private note (webchat/notes/): agents only, never the visitor; mentions notify the agents named.
  app.post(
    '/inbox/conversations/:id/notes',
    { config: any, schema: { params: IdParams, body: NoteBody } },
    async (request, reply) => {
      const { user } = sessionOf(request);
      const note = await webchat.notes.addNote(companyOf(request), request.params.id, {
        text: request.body.text,
        ...(request.body.mentions ? { mentions: request.body.mentions } : {}),
        author: { type: 'agent', id: user.id, name: displayNameOf(user) },
      });
      return reply.status(201).send(note);
    },
  );

  // "Summarise" on demand: by the conversation's model when its digital employee is an `openai` one, as hand-over
  // summaries are (packages/server/src/webchat/notes/handover-summary.ts), else (or when the model fails) an
  // extractive summary of the transcript's latest 200 messages (packages/server/src/workspace/extractive-summary.ts).
  // Either may hold markdown; the portal renders it without an HTML parser.
  app.post(
    '/inbox/conversations/:id/summarise',
    { config: any, schema: { params: IdParams } },
    async (request): Promise<ConversationSummaryView> => {
      const conversation = await webchat.commands.find(companyOf(request), request.params.id);
      const { messages } = await readMessagePage(webchat, conversation.id, {
        limit: '200',
      });
      const byModel = await webchat.summaryByModel(conversation, messages);
      return { summary: byModel ?? extractiveSummary(messages) };
    },
  );

  // Suggested replies from the company's knowledge for the visitor's last question (workspace/suggested-replies.ts):
  // only the company's own sources, never sent by themselves — the inbox inserts one into the composer on a click.
  app.get(
    '/inbox/conversations/:id/suggestions',
    { config: any, schema: { params: IdParams } },
    async (request): Promise<SuggestedRepliesView> => {
      const companyId = companyOf(request);
      const conversation = await webchat.commands.find(companyId, request.params.id);
      const { messages } = await webchat.messages.page(conversation.id, { limit: 50 });
      return { suggestions: await suggestedReplies(knowledge, companyId, lastVisitorQuestion(messages)) };
    },
  );

  app.get('/notifications', { config: any }, async (request) => {
    const notifications = await mentions.unread(companyOf(request), sessionOf(request).user.id);
    return { notifications, unread: notifications.length };
  });

  // Marks the agent's own mentions read: `ids`, or all of them without a body.
  app.post('/notifications/read', { config: any, schema: { body: ReadBody } }, async (request) => ({
    marked: await mentions.markRead(companyOf(request), sessionOf(request).user.id, request.body?.ids),
  }));
}
