import {
  type ConversationHandler,
  type ConversationStatus,
  type ConversationView,
  channelOf,
  type PlatformConversationView,
  type VisitorAttributes,
  type WorkspaceStatus,
} from '@parley/webchat-protocol';
import type { Selectable } from 'kysely';
import type { ConversationsTable } from './webchat.tables.ts';

/**
 * Conversation states (docs/architecture.md "Conversation states"):
 * `open` + handled by `digital_employee` (the start) ⇄ `open` + handled by `agent` (handover / hand-back),
 * and either → `closed` (terminal: no more messages are accepted). The wire names and the channel naming are the
 * protocol's (@parley/webchat-protocol), re-exported here for the rest of the server.
 */
export {
  type ConversationHandler,
  type ConversationStatus,
  channelOf,
  parseChannel,
} from '@parley/webchat-protocol';

export interface Conversation {
  id: string;
  companyId: string;
  channelId: string | null;
  sessionId: string;
  digitalEmployeeId: string;
  status: ConversationStatus;
  handledBy: ConversationHandler;
  agentName: string | null;
  createdAt: string;
  updatedAt: string;
  /** The verified visitor it belongs to (identity/), as their latest token named them; null when anonymous. */
  visitor: ConversationVisitor | null;
  /** Read marks (reads/read-marks.ts): positions of the last message each side has read. */
  visitorReadPosition: number;
  agentReadPosition: number;
  /** Routing (webchat/routing/): in the company queue since (the visitor asked for a person), else null. */
  queuedAt: string | null;
  /** The portal user the conversation is assigned to (routing), else null. */
  assigneeId: string | null;
  /** The agent workspace (webchat/workspace/): working status while open, and when a snoozed one wakes. */
  workspaceStatus: WorkspaceStatus;
  snoozedUntil: string | null;
  /** The company's labels on it, sorted. */
  labels: string[];
  /** The visitor's custom attributes (token or SDK), `{}` when none; kept for anonymous visitors too. */
  attributes: VisitorAttributes;
  /** The page the conversation was started on, when the SDK said. */
  pageUrl: string | null;
}

export interface ConversationVisitor {
  key: string;
  /** The token's `sub`: the integrator's user id. */
  id: string;
  name: string | null;
  email: string | null;
}

export function toConversation(row: Selectable<ConversationsTable>): Conversation {
  return {
    id: row.id,
    companyId: row.company_id,
    channelId: row.channel_id,
    sessionId: row.session_id,
    digitalEmployeeId: row.digital_employee_id,
    status: row.status as ConversationStatus,
    handledBy: row.handled_by as ConversationHandler,
    agentName: row.agent_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    visitor:
      row.visitor_key !== null
        ? {
            key: row.visitor_key,
            id: row.visitor_id ?? '',
            name: row.visitor_name,
            email: row.visitor_email,
          }
        : null,
    visitorReadPosition: Number(row.visitor_read_position ?? 0),
    agentReadPosition: Number(row.agent_read_position ?? 0),
    queuedAt: row.queued_at ?? null,
    assigneeId: row.assignee_id ?? null,
    workspaceStatus: (row.workspace_status ?? 'open') as WorkspaceStatus,
    snoozedUntil: row.snoozed_until ?? null,
    labels: parseJson<string[]>(row.labels, []),
    attributes: parseJson<VisitorAttributes>(row.visitor_attributes, {}),
    pageUrl: row.page_url ?? null,
  };
}

/** The SDK view (docs/design.md "Webchat REST"). */
export function conversationView(c: Conversation): ConversationView {
  return {
    id: c.id,
    channel: channelOf(c.companyId, c.id),
    digital_employee_id: c.digitalEmployeeId,
    channel_id: c.channelId,
    status: c.status,
    handled_by: c.handledBy,
    queued_at: c.queuedAt,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

/**
 * The platform (agent) view adds the session it belongs to, the agent, and the verified visitor (`null` for an
 * anonymous session's conversation).
 */
export function platformConversationView(c: Conversation): PlatformConversationView {
  return {
    ...conversationView(c),
    session_id: c.sessionId,
    agent_name: c.agentName,
    assignee_id: c.assigneeId,
    visitor: c.visitor
      ? { id: c.visitor.id, name: c.visitor.name, email: c.visitor.email, attributes: c.attributes }
      : null,
    workspace_status: c.status === 'closed' ? 'closed' : c.workspaceStatus,
    snoozed_until: c.status === 'closed' ? null : c.snoozedUntil,
    labels: c.labels,
  };
}

function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
