import type { WorkspaceStatus } from '@parley/webchat-protocol';
import { type Kysely, sql } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import { BadRequestError } from '../errors/app-error.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import { invalidCursor } from '../http/keyset-cursor.ts';
import { isUnsafeString } from '../http/unsafe-text.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';
import { type Conversation, toConversation } from '../webchat/conversation.ts';
import type { Actor } from '../webchat/conversations/conversation-commands.ts';
import { conversationClosed } from '../webchat/webchat.errors.ts';
import { type VisitorPanel, visitorPanelOf } from './visitor-panel.ts';

/** Labels on one conversation: at most 20, each 1–50 characters (docs/design.md "Agent workspace"). */
export const LABEL_LIMITS = { count: 20, length: 50 } as const;
/** How far ahead a snooze may be set: a year (a parked conversation is not an archive). */
const MAX_SNOOZE_MS = 366 * 24 * 3600 * 1000;

/** The inbox's status filter: the workspace statuses of open conversations, and `resolved` (closed). */
export type InboxStatus = WorkspaceStatus | 'resolved';
export type InboxViewName = 'mine' | 'unassigned' | 'queued' | 'all';

/** The status the portal inbox shows: `resolved` for a closed conversation, else its workspace status. */
export const inboxStatusOf = (c: Pick<Conversation, 'status' | 'workspaceStatus'>): InboxStatus =>
  c.status === 'closed' ? 'resolved' : c.workspaceStatus;

export interface StatusView {
  id: string;
  status: WorkspaceStatus;
  snoozed_until: string | null;
}

export interface InboxFilter {
  view: InboxViewName;
  /** The signed-in agent (`mine`). */
  userId: string;
  status?: InboxStatus;
  label?: string;
  /** `attr.KEY=VALUE` pairs, all of which must hold. */
  attributes: Array<[string, string]>;
}

/** Where the next page of the inbox list starts: after (unread, updated_at, id) of the last row. */
export interface InboxPosition {
  unread: number;
  updatedAt: string;
  id: string;
}

export interface WorkspaceDeps {
  db: Kysely<Database>;
  events: EventRecorder;
  audit: AuditLog;
  /** The conversation in the actor's company, else `conversation_not_found` (ConversationCommands.find). */
  find(companyId: string, conversationId: string): Promise<Conversation>;
  /** Publishes the conversation's inbox entry (webchat/inbox-feed/). */
  changed(conversationId: string): Promise<void> | void;
  /** Epoch milliseconds; tests inject theirs. */
  clock?: () => number;
}

/**
 * The agent workspace's conversation state (docs/design.md "Agent workspace"): the working status of an open
 * conversation (`open`, `pending` — waiting on the visitor —, `snoozed` until a time), the company's labels, and the
 * inbox list filtered by view, status, label and visitor attributes, unread first. Closing stays the lifecycle's
 * (ConversationCommands.close); a closed conversation shows as `resolved`. Every change is audited, recorded for
 * webhooks in its own transaction (packages/server/src/events/domain-events.ts) and published to the live inbox.
 */
export class WorkspaceService {
  private readonly clock: () => number;

  constructor(private readonly deps: WorkspaceDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  /**
   * Sets the working status. `snoozed` needs `snoozed_until` in the future (at most a year ahead); the others
   * take none. A closed conversation is `conversation_closed` (409): reopening is not a status change.
   */
  async setStatus(
    companyId: string,
    conversationId: string,
    input: { status: WorkspaceStatus; snoozedUntil?: string },
    actor: Actor,
  ): Promise<StatusView> {
    const conversation = await this.deps.find(companyId, conversationId);
    const snoozedUntil = this.validSnooze(input.status, input.snoozedUntil);
    if (conversation.status === 'closed') throw conversationClosed();
    const changed = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('conversations')
        .set({ workspace_status: input.status, snoozed_until: snoozedUntil, updated_at: now() })
        .where('id', '=', conversation.id)
        .where('status', '=', 'open')
        .returning('id')
        .executeTakeFirst();
      if (!row) throw conversationClosed();
      if (conversation.workspaceStatus === input.status && conversation.snoozedUntil === snoozedUntil)
        return false;
      await this.deps.events.record(trx, {
        type: 'conversation.status_changed',
        companyId,
        data: {
          conversation_id: conversation.id,
          status: input.status,
          previous_status: conversation.workspaceStatus,
          snoozed_until: snoozedUntil,
        },
      });
      return true;
    });
    if (changed) {
      await this.audit('conversation.status_changed', conversation, actor, {
        status: input.status,
        previous_status: conversation.workspaceStatus,
        snoozed_until: snoozedUntil,
      });
    }
    await this.deps.changed(conversation.id);
    return { id: conversation.id, status: input.status, snoozed_until: snoozedUntil };
  }

  /**
   * Back to `open`: when the visitor writes in a pending or snoozed conversation (actor `visitor`), and when a
   * snooze ends (actor `jobs:snooze`; only if it is still snoozed until then). Whether it changed anything.
   */
  async reopen(conversation: Conversation, actor: Actor, dueBy?: string): Promise<boolean> {
    const previous = await this.deps.db.transaction().execute(async (trx) => {
      let query = trx
        .updateTable('conversations')
        .set({ workspace_status: 'open', snoozed_until: null, updated_at: now() })
        .where('id', '=', conversation.id)
        .where('status', '=', 'open');
      query = dueBy
        ? query.where('workspace_status', '=', 'snoozed').where('snoozed_until', '<=', dueBy)
        : query.where('workspace_status', '!=', 'open');
      // The status it had, for the event: read in the update's transaction, just before it.
      const before = await trx
        .selectFrom('conversations')
        .select(['workspace_status'])
        .where('id', '=', conversation.id)
        .executeTakeFirst();
      const row = await query.returning('id').executeTakeFirst();
      if (!row || !before) return undefined;
      const previousStatus = before.workspace_status as WorkspaceStatus;
      await this.deps.events.record(trx, {
        type: 'conversation.status_changed',
        companyId: conversation.companyId,
        data: {
          conversation_id: conversation.id,
          status: 'open',
          previous_status: previousStatus,
          snoozed_until: null,
        },
      });
      return previousStatus;
    });
    if (!previous) return false;
    await this.audit('conversation.status_changed', conversation, actor, {
      status: 'open',
      previous_status: previous,
      snoozed_until: null,
    });
    await this.deps.changed(conversation.id);
    return true;
  }

  /** Snoozed conversations whose time has come (`at` or earlier), oldest first, at most `limit`. */
  async dueSnoozes(at: string, limit: number): Promise<Conversation[]> {
    const rows = await this.deps.db
      .selectFrom('conversations')
      .select(['id', 'company_id'])
      .where('workspace_status', '=', 'snoozed')
      .where('snoozed_until', '<=', at)
      .where('status', '=', 'open')
      .orderBy('snoozed_until')
      .limit(limit)
      .execute();
    return Promise.all(rows.map((r) => this.deps.find(r.company_id, r.id)));
  }

  /**
   * Replaces the conversation's labels (trimmed, duplicates dropped, sorted): at most 20 of 1–50 characters
   * (`validation_failed` otherwise). Labels are free text per company; the ones in use are `companyLabels`.
   */
  async setLabels(
    companyId: string,
    conversationId: string,
    input: readonly string[],
    actor: Actor,
  ): Promise<{ id: string; labels: string[] }> {
    const labels = validLabels(input);
    const conversation = await this.deps.find(companyId, conversationId);
    const added = labels.filter((l) => !conversation.labels.includes(l));
    const removed = conversation.labels.filter((l) => !labels.includes(l));
    const at = now();
    await this.deps.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('conversation_labels').where('conversation_id', '=', conversation.id).execute();
      if (labels.length > 0) {
        await trx
          .insertInto('conversation_labels')
          .values(
            labels.map((label) => ({
              conversation_id: conversation.id,
              company_id: companyId,
              label,
              created_at: at,
            })),
          )
          .execute();
      }
      await trx
        .updateTable('conversations')
        .set({ labels: labels.length > 0 ? JSON.stringify(labels) : null, updated_at: at })
        .where('id', '=', conversation.id)
        .execute();
      if (added.length === 0 && removed.length === 0) return;
      await this.deps.events.record(trx, {
        type: 'conversation.labels_changed',
        companyId,
        data: { conversation_id: conversation.id, labels, added, removed },
      });
    });
    if (added.length > 0 || removed.length > 0) {
      await this.audit('conversation.labels_changed', conversation, actor, { labels, added, removed });
    }
    await this.deps.changed(conversation.id);
    return { id: conversation.id, labels };
  }

  /** The labels the company's conversations carry, with how many carry each, most used first. */
  async companyLabels(companyId: string): Promise<Array<{ label: string; conversations: number }>> {
    const rows = await this.deps.db
      .selectFrom('conversation_labels')
      .select(['label', (eb) => eb.fn.countAll().as('n')])
      .where('company_id', '=', companyId)
      .groupBy('label')
      .orderBy('n', 'desc')
      .orderBy('label')
      .limit(500)
      .execute();
    return rows.map((r) => ({ label: r.label, conversations: Number(r.n) }));
  }

  /**
   * One page of the inbox list: conversations of the view (`mine`: assigned to the agent; `unassigned`: open with
   * nobody assigned; `queued`: waiting in the routing queue; `all`), with the status, label and attribute filters;
   * unread first (a visitor message after the agents' read mark), then most recently active.
   */
  async list(
    companyId: string,
    filter: InboxFilter,
    page: { limit: number; after?: InboxPosition },
  ): Promise<Array<Conversation & { unread: boolean }>> {
    const unread = sql<number>`(case when exists (select 1 from messages um where um.conversation_id = conversations.id and um.role = 'user' and um.position > conversations.agent_read_position) then 1 else 0 end)`;
    let query = this.deps.db
      .selectFrom('conversations')
      .selectAll()
      .select(unread.as('unread_flag'))
      .where('company_id', '=', companyId);
    if (filter.view === 'mine') query = query.where('assignee_id', '=', filter.userId);
    if (filter.view === 'unassigned')
      query = query.where('assignee_id', 'is', null).where('status', '=', 'open');
    if (filter.view === 'queued')
      query = query.where('queued_at', 'is not', null).where('status', '=', 'open');
    if (filter.status === 'resolved') query = query.where('status', '=', 'closed');
    else if (filter.status)
      query = query.where('status', '=', 'open').where('workspace_status', '=', filter.status);
    const label = filter.label;
    if (label !== undefined) {
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('conversation_labels as l')
            .select('l.label')
            .whereRef('l.conversation_id', '=', 'conversations.id')
            .where('l.label', '=', label),
        ),
      );
    }
    for (const [key, value] of filter.attributes) {
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('conversation_attributes as a')
            .select('a.key')
            .whereRef('a.conversation_id', '=', 'conversations.id')
            .where('a.key', '=', key)
            .where('a.value', '=', value),
        ),
      );
    }
    const after = page.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb(unread, '<', after.unread),
          eb.and([
            eb(unread, '=', after.unread),
            eb.or([
              eb('updated_at', '<', after.updatedAt),
              eb.and([eb('updated_at', '=', after.updatedAt), eb('id', '<', after.id)]),
            ]),
          ]),
        ]),
      );
    }
    const rows = await query
      .orderBy(unread, 'desc')
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .execute();
    return rows.map((row) => ({ ...toConversation(row), unread: Number(row.unread_flag) === 1 }));
  }

  /** The visitor panel of the inbox (visitor-panel.ts). */
  visitorPanel(conversation: Conversation, urlFor: (attachmentId: string) => string): Promise<VisitorPanel> {
    return visitorPanelOf(this.deps.db, conversation, urlFor);
  }

  private validSnooze(status: WorkspaceStatus, snoozedUntil: string | undefined): string | null {
    if (status !== 'snoozed') {
      if (snoozedUntil !== undefined) throw invalid('snoozed_until', 'is only allowed with status snoozed');
      return null;
    }
    if (snoozedUntil === undefined) throw invalid('snoozed_until', 'is required with status snoozed');
    const at = Date.parse(snoozedUntil);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(snoozedUntil) || Number.isNaN(at))
      throw invalid('snoozed_until', 'must be an RFC 3339 date-time');
    const nowMs = this.clock();
    if (at <= nowMs) throw invalid('snoozed_until', 'must be in the future');
    if (at - nowMs > MAX_SNOOZE_MS) throw invalid('snoozed_until', 'must be at most a year ahead');
    return new Date(at).toISOString();
  }

  private audit(
    type: string,
    conversation: Conversation,
    actor: Actor,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.deps.audit.record({
      type,
      companyId: conversation.companyId,
      actor: actor.id,
      subject: conversation.id,
      ...(actor.ip ? { ip: actor.ip } : {}),
      details,
    });
  }
}

function invalid(field: string, message: string): BadRequestError {
  return new BadRequestError('validation_failed', `Invalid body: ${field} ${message}.`, {
    errors: [{ field, message }],
  });
}

/** Trimmed, de-duplicated and sorted labels, each 1–50 characters of printable text; at most 20. */
export function validLabels(input: readonly string[]): string[] {
  const labels = [...new Set(input.map((l) => l.trim()))].sort();
  if (labels.length > LABEL_LIMITS.count)
    throw invalid('labels', `may hold at most ${LABEL_LIMITS.count} labels`);
  for (const label of labels) {
    if (
      label.length === 0 ||
      [...label].length > LABEL_LIMITS.length ||
      isUnsafeString(label) ||
      /\p{Cc}/u.test(label)
    )
      throw invalid('labels', `must be 1–${LABEL_LIMITS.length} characters of text each`);
  }
  return labels;
}

/** An opaque cursor of the inbox list: base64url of `[unread, updated_at, id]` of the last row of a page. */
export const encodeInboxCursor = (row: Conversation & { unread: boolean }): string =>
  Buffer.from(JSON.stringify([row.unread ? 1 : 0, row.updatedAt, row.id])).toString('base64url');

/** Reads {@link encodeInboxCursor}'s cursor; anything else is `invalid_cursor` (400). */
export function decodeInboxCursor(cursor: string): InboxPosition {
  try {
    const [unread, updatedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      (unread === 0 || unread === 1) &&
      typeof updatedAt === 'string' &&
      typeof id === 'string' &&
      !isUnsafeString(updatedAt) &&
      !isUnsafeString(id)
    )
      return { unread, updatedAt, id };
  } catch {
    // Falls through to the problem below.
  }
  throw invalidCursor();
}
