/**
 * Conversation views as the REST APIs return them (docs/architecture.md "Conversation states"): `open` and handled by
 * the digital employee at the start, handed over to an agent and back, and either → `closed` (terminal).
 */

/** `closed` is terminal: no more messages are accepted. */
export type ConversationStatus = 'open' | 'closed';

/**
 * The agent workspace's working status of an open conversation (docs/design.md "Agent workspace"): `pending` waits
 * on the visitor, `snoozed` is parked until `snoozed_until`; both reopen when the visitor writes.
 */
export type WorkspaceStatus = 'open' | 'pending' | 'snoozed';

/** Custom attributes of a visitor (their token's or the SDK's `attributes`): at most 20 short values. */
export type VisitorAttributes = Record<string, string | number | boolean>;

/** Who answers the visitor: the digital employee, or a human agent after a handover. */
export type ConversationHandler = 'digital_employee' | 'agent';

/** A conversation as the SDK routes return it (`POST/GET /sdk/v1/conversations`). */
export interface ConversationView {
  id: string;
  /** The realtime channel, `messages:companies.{companyId}.conversations.{conversationId}` (see `channelOf`). */
  channel: string;
  digital_employee_id: string;
  /** The channel (widget placement) it was started in; `null` for one started without `X-Channel-Id`. */
  channel_id: string | null;
  status: ConversationStatus;
  handled_by: ConversationHandler;
  /**
   * When the visitor asked for a person (`request_human`) and the conversation still waits in the company queue
   * for an agent; `null` otherwise. The digital employee keeps answering while it waits.
   */
  queued_at?: string | null;
  created_at: string;
  updated_at: string;
  /**
   * In lists and reads of one conversation: the messages the reading side has not read — for a visitor the
   * digital-employee, agent and system messages after their read mark (sending moves it), for agents the
   * visitor's messages after theirs.
   */
  unread_count?: number;
  /** The visitor's rating of the closed conversation, once given (SDK reads only). */
  csat?: Csat | null;
}

/** The verified visitor a conversation belongs to, as their latest visitor token named them. */
export interface ConversationVisitorView {
  /** The token's `sub`: the integrator's own user id. */
  id: string;
  name: string | null;
  email: string | null;
  /** Custom attributes the integrator sent (token or SDK); `{}` when none. */
  attributes?: VisitorAttributes;
}

/** A conversation as the platform and portal (agent) routes return it: adds the session and the agent. */
export interface PlatformConversationView extends ConversationView {
  /** The visitor session (`X-Session-Id`) it belongs to (for a verified visitor: the session that started it). */
  session_id: string;
  /** The agent handling it, once one took it over. */
  agent_name: string | null;
  /** The portal user the conversation is assigned to (routing: round-robin, take, reassign), else `null`. */
  assignee_id?: string | null;
  /** The verified visitor (channels with identity on); `null` for an anonymous session's conversation. */
  visitor?: ConversationVisitorView | null;
  /** Platform reads: the working status while open (`pending`, `snoozed`), else the lifecycle's `open`/`closed`. */
  workspace_status?: WorkspaceStatus | 'closed';
  /** When a snoozed conversation reopens by itself; `null` unless snoozed. */
  snoozed_until?: string | null;
  /** The company's labels on it, sorted. */
  labels?: string[];
}

/** A thumb on a message: `up` or `down`. */
export type FeedbackRating = 'up' | 'down';

/** A visitor's rating of one digital-employee or agent message (`PUT …/messages/{id}/feedback`). */
export interface MessageFeedback {
  rating: FeedbackRating;
  comment: string | null;
}

/** What `PUT /sdk/v1/conversations/{id}/messages/{messageId}/feedback` answers. */
export interface MessageFeedbackView extends MessageFeedback {
  message_id: string;
  updated_at: string;
}

/** A visitor's satisfaction rating of a closed conversation, 1 (poor) to 5 (great). */
export interface Csat {
  score: number;
  comment: string | null;
}

/** What `PUT /sdk/v1/conversations/{id}/csat` answers. */
export interface CsatView extends Csat {
  conversation_id: string;
  updated_at: string;
}

/**
 * Whether the company's agents are in now and when they are next (docs/routing.md): `business_hours` of
 * `GET /sdk/v1/config` and of `request-human`, and the portal's routing settings (`opening`).
 */
export interface BusinessHoursStatus {
  open: boolean;
  /** When closed: ISO-8601 instant agents are next in; null when open or never. */
  next_open_at: string | null;
  time_zone: string | null;
}
