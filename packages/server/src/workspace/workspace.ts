import type { AuditLog } from '../audit/audit.service.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import type { Store } from '../storage/database.ts';
import type { Webchat } from '../webchat/webchat-services.ts';
import { MentionsService } from './mentions.service.ts';
import { SnoozeWakeJob } from './snooze-wake.job.ts';
import { WorkspaceService } from './workspace.service.ts';

/** The audit actor of reopening when the visitor writes in a pending or snoozed conversation. */
const VISITOR_ACTOR = { id: 'visitor' };

export interface WorkspaceDeps {
  store: Store;
  events: EventRecorder;
  audit: AuditLog;
  webchat: Webchat;
  scheduler: Scheduler;
  logger: { warn(obj: object, msg: string): void };
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
}

export function createWorkspace(deps: WorkspaceDeps): Workspace {
  const { webchat } = deps;
  const workspace = new WorkspaceService({
    db: deps.store.db,
    events: deps.events,
    audit: deps.audit,
    find: (companyId, id) => webchat.commands.find(companyId, id),
    changed: (id) => webchat.inbox.changed(id),
  });
  deps.scheduler.add(new SnoozeWakeJob(workspace));
  webchat.engine.onVisitorMessage = (conversation) => workspace.reopen(conversation, VISITOR_ACTOR);
  const mentions = new MentionsService({
    db: deps.store.db,
    publishLive: (channel, rawData) =>
      webchat.realtime.publish({ channel, rawData, skipHistory: true }).then(() => undefined),
    logger: deps.logger,
  });
  // Every note — the platform's, the portal's, any other writer's — goes through `addNote`: its mentions notify
  // the agents named, once the note is stored (webchat/notes/ checked they are users of the company).
  const notes = webchat.notes;
  webchat.notes = {
    addNote: async (companyId, conversationId, input) => {
      const note = await notes.addNote(companyId, conversationId, input);
      await mentions.notify(companyId, note);
      return note;
    },
  };
  return { service: workspace, mentions };
}
