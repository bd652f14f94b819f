import type { RealtimeEngine } from '@parley/realtime';
import type { AuditLog } from '../audit/audit.service.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import type { Store } from '../storage/database.ts';
import type { Conversation } from '../webchat/conversation.ts';
import type { ConversationEngine } from '../webchat/conversations/conversation-engine.ts';
import type { InboxFeed } from '../webchat/inbox-feed/inbox-feed.ts';
import type { NotesService } from '../webchat/notes/notes.service.ts';
import { MentionsService } from './mentions.service.ts';
import { SnoozeWakeJob } from './snooze-wake.job.ts';
import { WorkspaceService } from './workspace.service.ts';

/** The audit actor of reopening when the visitor writes in a pending or snoozed conversation. */
const VISITOR_ACTOR = { id: 'visitor' };

/** Writes an internal note (packages/server/src/webchat/notes/notes.service.ts `addNote`). */
export type NoteWriter = Pick<NotesService, 'addNote'>;

/** What the workspace uses of the webchat and the rest of the process; the composition root (context.ts) picks it. */
export interface WorkspaceModuleDeps {
  store: Pick<Store, 'db'>;
  events: EventRecorder;
  audit: AuditLog;
  scheduler: Pick<Scheduler, 'add'>;
  logger: { warn(obj: object, msg: string): void };
  /** The conversation in the actor's company, else `conversation_not_found` (the agents' commands' `find`). */
  findConversation(companyId: string, conversationId: string): Promise<Conversation>;
  /** The agents' live inbox: republishes a conversation's entry when its status or labels change. */
  inboxFeed: Pick<InboxFeed, 'changed'>;
  /** Its hook is set here: a visitor's message reopens a pending or snoozed conversation. */
  engine: Pick<ConversationEngine, 'onVisitorMessage'>;
  /** Where mention notifications are published live (no history) on the agents' inbox channel. */
  realtime: Pick<RealtimeEngine, 'publish'>;
  /** The webchat's note writer, which the workspace's `notes` wraps. */
  notes: NoteWriter;
}

/**
 * Builds the agent workspace on top of the webchat (composition root, context.ts): the service, the scheduled job
 * that wakes snoozed conversations, and the engine's hook that reopens a pending or snoozed conversation when the
 * visitor writes (the webchat knows nothing of the workspace; it only calls the hook), and the mention notifications
 * of notes.
 */
export interface Workspace {
  service: WorkspaceService;
  mentions: MentionsService;
  /**
   * The note writer every note goes through — the platform's, the portal's, any other writer's: the webchat's, then
   * the mentions notify the agents named, once the note is stored (webchat/notes/ checked they are users of the
   * company). The composition root hands it to the webchat in place of its own.
   */
  notes: NoteWriter;
}

export function createWorkspace(deps: WorkspaceModuleDeps): Workspace {
  const workspace = new WorkspaceService({
    db: deps.store.db,
    events: deps.events,
    audit: deps.audit,
    find: (companyId, id) => deps.findConversation(companyId, id),
    changed: (id) => deps.inboxFeed.changed(id),
  });
  deps.scheduler.add(new SnoozeWakeJob(workspace));
  deps.engine.onVisitorMessage = (conversation) => workspace.reopen(conversation, VISITOR_ACTOR);
  const mentions = new MentionsService({
    db: deps.store.db,
    publishLive: (channel, rawData) =>
      deps.realtime.publish({ channel, rawData, skipHistory: true }).then(() => undefined),
    logger: deps.logger,
  });
  const notes = deps.notes;
  return {
    service: workspace,
    mentions,
    notes: {
      addNote: async (companyId, conversationId, input) => {
        const note = await notes.addNote(companyId, conversationId, input);
        await mentions.notify(companyId, note);
        return note;
      },
    },
  };
}
