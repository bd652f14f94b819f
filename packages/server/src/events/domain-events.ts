import type { FeedbackRating, MessageSnapshot } from '@parley/webchat-protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';

/**
 * The events a company's webhooks can subscribe to (docs/webhooks.md "Events"). Each
 * `data` holds `conversation_id` and, for message events, `message` (the snapshot); the others name what changed.
 * No payload ever holds a secret: `connector.api_key_rotated` carries the new key's version, never the key.
 */
export interface EventData {
  'conversation.created': {
    conversation_id: string;
    channel_id: string | null;
    digital_employee_id: string;
  };
  /** Every complete message, any role (visitor, digital employee, agent, system) except notes. */
  'message.created': { conversation_id: string; message: MessageSnapshot };
  /** An internal note (role `note`, agents only): an agent's, a hand-over summary, an action call. */
  'note.created': { conversation_id: string; note: MessageSnapshot };
  'conversation.handed_over': { conversation_id: string; agent: string | null };
  'conversation.handed_back': { conversation_id: string };
  'conversation.closed': { conversation_id: string };
  /** The agent workspace's status of an open conversation changed (an agent, the snooze wake-up, the visitor). */
  'conversation.status_changed': {
    conversation_id: string;
    status: 'open' | 'pending' | 'snoozed';
    previous_status: 'open' | 'pending' | 'snoozed';
    snoozed_until: string | null;
  };
  'conversation.labels_changed': {
    conversation_id: string;
    labels: string[];
    added: string[];
    removed: string[];
  };
  'message.feedback': {
    conversation_id: string;
    message_id: string;
    rating: FeedbackRating;
    comment: string | null;
  };
  'conversation.csat': { conversation_id: string; score: number; comment: string | null };
  'connector.api_key_rotated': { connector_id: string; key_version: number };
  /**
   * A visitor's data was erased (privacy/, docs/privacy.md): ids and counts only, never what was erased — the
   * receipt's id, the conversations removed and how many rows of each kind went.
   */
  'visitor.erased': { erasure_id: string; conversation_ids: string[]; erased: Record<string, number> };
}

export type EventType = keyof EventData;

export const EVENT_TYPES: readonly EventType[] = [
  'conversation.created',
  'message.created',
  'note.created',
  'conversation.handed_over',
  'conversation.handed_back',
  'conversation.closed',
  'conversation.status_changed',
  'conversation.labels_changed',
  'message.feedback',
  'conversation.csat',
  'connector.api_key_rotated',
  'visitor.erased',
];

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

/** One event of one company, as the change that causes it reports it. */
export type DomainEvent = {
  [T in EventType]: { type: T; companyId: string; data: EventData[T] };
}[EventType];

/**
 * Where a change reports its event: `record` runs inside the change's own transaction (`trx`), so the event is
 * stored if and only if the change is (the transactional outbox). Implemented by webhooks/outbox.ts (which delivers them to the company's webhooks); capabilities
 * receive it from the composition root.
 */
export interface EventRecorder {
  record(trx: Kysely<Database>, event: DomainEvent): Promise<void>;
  /**
   * Whether `record` would store anything for an event of this type and company now (read with `db`): a change whose
   * only other statement is one write may then skip its transaction (webchat/conversations/conversations.service.ts).
   */
  wouldRecord?(db: Kysely<Database>, event: Pick<DomainEvent, 'type' | 'companyId'>): Promise<boolean>;
}
