import type { ConversationsTable } from '../webchat.tables.ts';

/**
 * Conversation states (docs/architecture.md "Conversation states"):
 * `open` + handled by `digital_employee` (the start) ⇄ `open` + handled by `agent` (handover / hand-back),
 * and either → `closed` (terminal: no more messages are accepted).
 */
export type ConversationStatus = 'open' | 'closed';
export type ConversationHandler = 'digital_employee' | 'agent';

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
}

/** The realtime channel of a conversation (spec "Conversation channel address"). */
export const channelOf = (companyId: string, conversationId: string): string =>
  `messages:companies.${companyId}.conversations.${conversationId}`;

const CHANNEL_RE =
  /^messages:companies\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.conversations\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function parseChannel(channel: string): { companyId: string; conversationId: string } | undefined {
  const match = CHANNEL_RE.exec(channel);
  return match ? { companyId: match[1]!, conversationId: match[2]! } : undefined;
}

export function toConversation(row: ConversationsTable): Conversation {
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
  };
}

/** The SDK view (DESIGN.md "Webchat REST"). */
export function conversationView(c: Conversation) {
  return {
    id: c.id,
    channel: channelOf(c.companyId, c.id),
    digital_employee_id: c.digitalEmployeeId,
    channel_id: c.channelId,
    status: c.status,
    handled_by: c.handledBy,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

/** The platform (agent) view adds the session it belongs to. */
export function platformConversationView(c: Conversation) {
  return { ...conversationView(c), session_id: c.sessionId, agent_name: c.agentName };
}
