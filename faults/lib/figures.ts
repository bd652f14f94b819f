// The figures of a fault run, computed from the source of truth (the private PostgreSQL) and from what each
// client shows at the end. Pure functions over plain records, so they can be checked on their own.
import { contentOf } from './client-view.ts';
import type { PrivatePostgres } from './postgres-cluster.ts';
import type { VisitorRecord } from './visitor.ts';

export interface StoredMessage {
  id: string;
  conversationId: string;
  role: string;
  status: string;
  clientMessageId: string | null;
  position: number;
  createdAt: string;
  text: string;
  errorCodes: string[];
}

export interface Figures {
  /** Publishes that resolved: the server said "stored". */
  acked: number;
  /** User messages in the database. */
  stored: number;
  /** Acknowledged but not in the database. */
  lost: number;
  /** Acknowledged messages the sender's client shows complete at the end. */
  delivered: number;
  /** Digital-employee replies in the database / those the conversation's clients show complete. */
  replies: number;
  repliesShown: number;
  /** Two stored rows for one client_message_id, or one message shown complete with two different contents. */
  duplicates: number;
  /** Messages still `partial` in the database, plus messages a client still shows partial that are complete. */
  partial: number;
  partialInDatabase: number;
  partialOnlyInClient: number;
  /** User messages without a digital-employee reply after them (every one should get exactly one). */
  unanswered: number;
  /** Digital-employee replies beyond one per user message (e.g. an interrupted reply answered again). */
  extraReplies: number;
  /**
   * Messages a client shows complete with a text that does not begin with every text it was shown for them before
   * (words taken back: what a takeover after a dead node may do, never a store outage).
   */
  takenBack: number;
  /** Replies that ended with an error block (interrupted, failed, timed out), and their codes with counts. */
  errored: number;
  errorCodes: Record<string, number>;
  /** Sends a client gave up on (a permanent error or the retry window ran out): never acknowledged. */
  gaveUp: number;
  /** Sends the client gave up on (it shows them failed) that the database stored anyway. */
  gaveUpButStored: number;
  /** Sends still being retried when measured: neither acknowledged nor given up. */
  unsettled: number;
  /** Resubscriptions the engine could not recover (the client read REST instead). */
  recoveryFailures: number;
  /** Reasons the visitors gave up, with counts, for the report. */
  gaveUpReasons: Record<string, number>;
  /** The last error of each send a centrifuge visitor had to retry, with counts. */
  retriedReasons: Record<string, number>;
}

interface MessageRow {
  id: string;
  conversation_id: string;
  role: string;
  status: string;
  client_message_id: string | null;
  position: number;
  created_at: string;
  blocks: string;
}

/**
 * Every message of the company's conversations, in conversation order, from the private PostgreSQL (or any store
 * that answers the same SQL with `$1` parameters: the disk-full scenario's SQLite).
 */
export async function readStoredMessages(
  db: Pick<PrivatePostgres, 'query'>,
  companyId: string,
): Promise<StoredMessage[]> {
  const rows = await db.query<MessageRow>(
    `select m.id, m.conversation_id, m.role, m.status, m.client_message_id, m.position, m.created_at, m.blocks
       from messages m join conversations c on c.id = m.conversation_id
      where c.company_id = $1
      order by m.conversation_id, m.position`,
    [companyId],
  );
  return rows.map((r) => ({
    id: r.id,
    conversationId: r.conversation_id,
    role: r.role,
    status: r.status,
    clientMessageId: r.client_message_id,
    position: Number(r.position),
    createdAt: r.created_at,
    ...contentOf({ blocks: JSON.parse(r.blocks) }),
  }));
}

export function computeFigures(stored: StoredMessage[], visitors: VisitorRecord[]): Figures {
  const byId = new Map(stored.map((m) => [m.id, m]));
  const userRows = stored.filter((m) => m.role === 'user');
  const rowsByClientId = new Map<string, StoredMessage[]>();
  for (const m of userRows) {
    if (!m.clientMessageId) continue;
    const key = `${m.conversationId}/${m.clientMessageId}`;
    rowsByClientId.set(key, [...(rowsByClientId.get(key) ?? []), m]);
  }

  let acked = 0;
  let lost = 0;
  let delivered = 0;
  let gaveUp = 0;
  let unsettled = 0;
  let gaveUpButStored = 0;
  let recoveryFailures = 0;
  const gaveUpReasons: Record<string, number> = {};
  const retriedReasons: Record<string, number> = {};
  const duplicateKeys = new Set<string>();
  for (const [key, rows] of rowsByClientId) if (rows.length > 1) duplicateKeys.add(key);
  const partialInClient = new Set<string>();
  const repliesShown = new Set<string>();
  const takenBack = new Set<string>();

  for (const visitor of visitors) {
    recoveryFailures += visitor.recoveryFailures;
    const shownByClientId = new Map<string, typeof visitor.view>();
    for (const m of visitor.view) {
      if (m.clientMessageId)
        shownByClientId.set(m.clientMessageId, [...(shownByClientId.get(m.clientMessageId) ?? []), m]);
    }
    for (const send of visitor.sends) {
      if (send.gaveUp !== undefined) {
        gaveUp++;
        const reason = send.gaveUp.slice(0, 60);
        gaveUpReasons[reason] = (gaveUpReasons[reason] ?? 0) + 1;
        if (rowsByClientId.has(`${visitor.conversationId}/${send.clientMessageId}`)) gaveUpButStored++;
      }
      if (send.lastError !== undefined) {
        const reason = send.lastError.slice(0, 60);
        retriedReasons[reason] = (retriedReasons[reason] ?? 0) + 1;
      }
      if (send.ackedAt === undefined && send.gaveUp === undefined) unsettled++;
      if (send.ackedAt === undefined) continue;
      acked++;
      if (!rowsByClientId.has(`${visitor.conversationId}/${send.clientMessageId}`)) lost++;
      const shown = shownByClientId.get(send.clientMessageId) ?? [];
      if (shown.some((m) => m.status === 'complete')) delivered++;
    }
    // One client_message_id shown as two different messages is a duplicate the visitor sees.
    for (const [clientMessageId, shown] of shownByClientId)
      if (new Set(shown.map((m) => m.id)).size > 1)
        duplicateKeys.add(`${visitor.conversationId}/${clientMessageId}`);
    for (const id of visitor.conflictingCompletes)
      duplicateKeys.add(`${visitor.conversationId}/completed:${id}`);
    for (const m of visitor.view) {
      const row = byId.get(m.id);
      if (!row) continue;
      if (m.status === 'partial' && row.status === 'complete')
        partialInClient.add(`${visitor.label}/${m.id}`);
      if (row.role === 'digital_employee' && row.status === 'complete' && m.status === 'complete')
        repliesShown.add(m.id);
      if (m.takenBack) takenBack.add(m.id);
    }
  }

  const partialInDatabase = stored.filter((m) => m.status === 'partial').length;
  const replies = stored.filter((m) => m.role === 'digital_employee');
  const errorCodes: Record<string, number> = {};
  for (const code of replies.flatMap((m) => m.errorCodes)) errorCodes[code] = (errorCodes[code] ?? 0) + 1;
  return {
    acked,
    stored: userRows.length,
    lost,
    delivered,
    replies: replies.length,
    repliesShown: repliesShown.size,
    duplicates: duplicateKeys.size,
    partial: partialInDatabase + partialInClient.size,
    partialInDatabase,
    partialOnlyInClient: partialInClient.size,
    ...replyBalance(stored),
    takenBack: takenBack.size,
    errored: replies.filter((m) => m.errorCodes.length > 0).length,
    errorCodes,
    gaveUp,
    unsettled,
    gaveUpButStored,
    recoveryFailures,
    gaveUpReasons,
    retriedReasons,
  };
}

/**
 * Every user message gets exactly one digital-employee reply (one at a time, in the order they were stored), so
 * per conversation the user messages beyond the number of replies were never answered. (A reply interrupted and
 * then answered again counts twice, which could hide one unanswered message in the same conversation.)
 */
function replyBalance(stored: StoredMessage[]): { unanswered: number; extraReplies: number } {
  const perConversation = new Map<string, { users: number; replies: number }>();
  for (const m of stored) {
    const counts = perConversation.get(m.conversationId) ?? { users: 0, replies: 0 };
    if (m.role === 'user') counts.users++;
    if (m.role === 'digital_employee') counts.replies++;
    perConversation.set(m.conversationId, counts);
  }
  let unanswered = 0;
  let extraReplies = 0;
  for (const { users, replies } of perConversation.values()) {
    unanswered += Math.max(0, users - replies);
    extraReplies += Math.max(0, replies - users);
  }
  return { unanswered, extraReplies };
}
