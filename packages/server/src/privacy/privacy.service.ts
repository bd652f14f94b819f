import { randomUUID } from 'node:crypto';
import type { RealtimeEngine } from '@parley/realtime';
import { channelOf, type MessageSnapshot } from '@parley/webchat-protocol';
import type { ErasureReceiptView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import { BadRequestError } from '../errors/app-error.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import type { AttachmentsService } from '../webchat/attachments/attachments.service.ts';
import { toSnapshot } from '../webchat/messages/message-store.ts';
import { conversationNotFound } from '../webchat/webchat.errors.ts';
import { MessageDeletion } from './message-deletion.ts';
import { type PrivacyDatabase, privacyDb } from './privacy.tables.ts';

/** Exactly one of these names whose data an erasure or an export covers (docs/privacy.md "Selectors"). */
export type PrivacySelector = { visitor_sub: string } | { conversation_id: string } | { session_id: string };

/** The receipt of an erasure, as the portal, the platform route and the CLI answer it. */
export type ErasureReceipt = ErasureReceiptView;

/** Counts by kind of what an erasure removed (the receipt's `erased`). */
export type ErasedCounts = ErasureReceiptView['erased'];

export interface PrivacyActor {
  /** `client:<id>`, `user:<id>`, `cli` (audit actor). */
  actor: string;
  ip?: string;
}

/** Rows an export reads per query. */
const PAGE = 500;

const emptyCounts = (): ErasedCounts => ({
  conversations: 0,
  messages: 0,
  attachments: 0,
  attachment_blobs: 0,
  webhook_deliveries: 0,
  webhook_events: 0,
  read_marks: 0,
  feedback: 0,
  csat: 0,
  idempotency_keys: 0,
  realtime_histories: 0,
});

/** Reads the one selector of a request body: 400 `invalid_privacy_selector` unless exactly one is given. */
export function selectorOf(body: Record<string, unknown>): PrivacySelector {
  const given = (['visitor_sub', 'conversation_id', 'session_id'] as const).filter(
    (key) => body[key] !== undefined,
  );
  if (given.length !== 1) {
    throw new BadRequestError(
      'invalid_privacy_selector',
      'Give exactly one of visitor_sub, conversation_id or session_id.',
    );
  }
  const key = given[0]!;
  const value = body[key];
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new BadRequestError(
      'invalid_privacy_selector',
      `${key} must be a non-empty string of at most 200 characters.`,
    );
  }
  return { [key]: value } as PrivacySelector;
}

const selectorName = (selector: PrivacySelector): string => Object.keys(selector)[0]!;

export interface PrivacyDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Removes the erased conversations' realtime history and disconnects the visitors' live sessions. */
  realtime: Pick<RealtimeEngine, 'removeHistory' | 'disconnectUser'>;
  /** Attachment blocks and links of the exported messages. */
  attachments: Pick<AttachmentsService, 'presentAll' | 'urlFor'>;
  audit: AuditLog;
  events: EventRecorder;
  logger: Pick<Logger, 'warn'>;
  /** How long after an erasure its channels' realtime history is removed once more (`webchat.erasureLatePublishMs`). */
  latePublishMs: number;
}

interface ConversationRef {
  id: string;
  session_id: string;
  visitor_key: string | null;
}

/**
 * Erasure and export of a visitor's data (docs/privacy.md). Everything a visitor typed or uploaded lives in rows
 * that hang off a conversation (messages and their search entries, attachments, feedback, CSAT, read marks, reply
 * jobs: `ON DELETE CASCADE`), in blobs named by attachment rows, in webhook outbox rows about the conversation, in
 * idempotency answers quoting its messages, and in the conversation channel's realtime history. An erasure removes
 * all of them and keeps a receipt of ids and counts.
 */
export class PrivacyService {
  private readonly db: Kysely<PrivacyDatabase>;
  private readonly messages: MessageDeletion;
  /** Second removals of realtime history that erasures scheduled and that have not run yet. */
  private readonly lateRemovals = new Set<Promise<void>>();

  constructor(private readonly deps: PrivacyDeps) {
    this.db = privacyDb(deps.db);
    this.messages = new MessageDeletion(this.db, deps.dialect);
  }

  /**
   * Resolves once every second removal of realtime history that erasures scheduled has run. A process that is about
   * to exit (the CLI) waits here; the wait itself keeps the process alive (the removals' timers do not).
   */
  async settled(): Promise<void> {
    const keepAlive = setInterval(() => {}, 1000);
    try {
      while (this.lateRemovals.size > 0) await Promise.all(this.lateRemovals);
    } finally {
      clearInterval(keepAlive);
    }
  }

  /**
   * A message stored just before the erasure took its conversation's lock is published right after its insert; should
   * that publish reach the broker after the history was removed, the history would hold it. Removing the history once
   * more after `latePublishMs` closes that window for every publish that lands within it (docs/privacy.md "Writes
   * during an erasure").
   */
  private removeHistoryAgainLater(channels: string[]): void {
    const removal = new Promise<void>((resolve) => setTimeout(resolve, this.deps.latePublishMs).unref())
      .then(async () => {
        for (const channel of channels) await this.deps.realtime.removeHistory(channel);
      })
      .catch((err: unknown) =>
        this.deps.logger.warn({ err }, 'privacy: the second removal of realtime history failed'),
      )
      .finally(() => this.lateRemovals.delete(removal));
    this.lateRemovals.add(removal);
  }

  /** The conversations a selector names in a company; 404 for a `conversation_id` the company does not have. */
  async conversationsOf(companyId: string, selector: PrivacySelector): Promise<ConversationRef[]> {
    let query = this.db
      .selectFrom('conversations')
      .select(['id', 'session_id', 'visitor_key'])
      .where('company_id', '=', companyId);
    if ('visitor_sub' in selector) query = query.where('visitor_id', '=', selector.visitor_sub);
    else if ('session_id' in selector) query = query.where('session_id', '=', selector.session_id);
    else query = query.where('id', '=', selector.conversation_id);
    const rows = await query.orderBy('id').execute();
    if ('conversation_id' in selector && rows.length === 0) throw conversationNotFound();
    return rows;
  }

  /**
   * Erases what the selector names, on every store and node: live connections of the visitor are disconnected first
   * (so nothing new arrives meanwhile), then the rows go conversation by conversation, then the realtime histories
   * (after the rows, so no recovery can serve what the store no longer has). The receipt, an audit entry and the
   * `visitor.erased` event carry ids and counts only.
   */
  async erase(companyId: string, selector: PrivacySelector, by: PrivacyActor): Promise<ErasureReceipt> {
    const conversations = await this.conversationsOf(companyId, selector);
    await this.disconnect(conversations);
    const counts = emptyCounts();
    for (const conversation of conversations) {
      const removed = await this.deleteConversation(conversation.id);
      for (const key of Object.keys(removed) as Array<keyof ErasedCounts>) counts[key] += removed[key];
    }
    const channels = conversations.map((c) => channelOf(companyId, c.id));
    for (const channel of channels) {
      await this.deps.realtime.removeHistory(channel);
      counts.realtime_histories += 1;
    }
    this.removeHistoryAgainLater(channels);
    const receipt: ErasureReceipt = { id: randomUUID(), erased_at: new Date().toISOString(), erased: counts };
    const conversationIds = conversations.map((c) => c.id);
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('privacy_erasures')
        .values({
          id: receipt.id,
          company_id: companyId,
          selector: selectorName(selector),
          actor: by.actor,
          conversation_ids: JSON.stringify(conversationIds),
          erased: JSON.stringify(counts),
          erased_at: receipt.erased_at,
        })
        .execute();
      await this.deps.audit.record(
        {
          type: 'visitor.erased',
          companyId,
          actor: by.actor,
          subject: receipt.id,
          ...(by.ip ? { ip: by.ip } : {}),
          details: { selector: selectorName(selector), conversation_ids: conversationIds, erased: counts },
        },
        trx as unknown as Kysely<Database>,
      );
      await this.deps.events.record(trx as unknown as Kysely<Database>, {
        type: 'visitor.erased',
        companyId,
        data: { erasure_id: receipt.id, conversation_ids: conversationIds, erased: { ...counts } },
      });
    });
    return receipt;
  }

  /**
   * Ends every live connection of the visitor on every node (the realtime engine's cluster control channel): the
   * anonymous session's and the verified visitor's subjects (webchat/realtime/channel-access.ts).
   */
  private async disconnect(conversations: ConversationRef[]): Promise<void> {
    const subjects = new Set<string>();
    for (const c of conversations) {
      subjects.add(c.session_id);
      if (c.visitor_key) subjects.add(c.visitor_key);
    }
    for (const subject of subjects) await this.deps.realtime.disconnectUser(subject);
  }

  /**
   * Deletes one conversation and everything hanging off it (also the retention sweep's unit of work). Its feedback
   * first (counted before its messages take it along by cascade), then its messages in short statements that give
   * the event loop back on SQLite (MessageDeletion), so a long history never holds the store or the chats of the
   * process; then, in one transaction, the rest.
   */
  async deleteConversation(conversationId: string): Promise<ErasedCounts> {
    const counts = emptyCounts();
    counts.feedback = await this.deleteFeedback(this.db, conversationId);
    counts.messages = (await this.messages.run([conversationId])).deleted;
    await this.db.transaction().execute(async (trx) => {
      if (!(await lockConversation(trx, conversationId))) return;
      await this.deleteRemainder(trx, conversationId, counts);
    });
    return counts;
  }

  private async deleteFeedback(db: Kysely<PrivacyDatabase>, conversationId: string): Promise<number> {
    const deleted = await db
      .deleteFrom('message_feedback')
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  /**
   * The transaction that ends an erasure of one conversation, after its row lock is taken. Whatever arrived while
   * the messages went (a message or a rating sent meanwhile: docs/privacy.md "Writes during an erasure") is deleted
   * and counted here, so the receipt counts what was there; a write after it finds no conversation (404). Then the
   * outbox rows and idempotency answers about the conversation, the blobs of its attachments, and the conversation
   * row with what cascades from it (read marks, CSAT, attachments, workspace rows).
   */
  private async deleteRemainder(
    trx: Kysely<PrivacyDatabase>,
    conversationId: string,
    counts: ErasedCounts,
  ): Promise<void> {
    const conversation = await trx
      .selectFrom('conversations')
      .select(['visitor_read_position', 'agent_read_position'])
      .where('id', '=', conversationId)
      .executeTakeFirstOrThrow();
    counts.read_marks =
      (conversation.visitor_read_position > 0 ? 1 : 0) + (conversation.agent_read_position > 0 ? 1 : 0);
    counts.csat = Number(
      (
        await trx
          .selectFrom('conversation_csat')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('conversation_id', '=', conversationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
    counts.feedback += await this.deleteFeedback(trx, conversationId);
    const late = await trx
      .deleteFrom('messages')
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    counts.messages += Number(late.numDeletedRows);
    const deliveries = await trx
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('webhook_events.conversation_id', '=', conversationId)
      .executeTakeFirstOrThrow();
    counts.webhook_deliveries = Number(deliveries.n);
    // Deliveries go with their event (ON DELETE CASCADE, migration 050): pending ones are never retried.
    const events = await trx
      .deleteFrom('webhook_events')
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    counts.webhook_events = Number(events.numDeletedRows);
    // An agent's post answered under an Idempotency-Key keeps its answer (the message snapshot) for 24 h.
    const keys = await trx
      .deleteFrom('idempotency_keys')
      .where('response_body', 'like', `%${conversationId}%`)
      .executeTakeFirst();
    counts.idempotency_keys = Number(keys.numDeletedRows);
    const attachments = await trx
      .selectFrom('attachments')
      .select('blob_key')
      .where('conversation_id', '=', conversationId)
      .execute();
    counts.attachments = attachments.length;
    for (const { blob_key } of attachments) {
      const chunks = await trx
        .deleteFrom('attachment_blob_chunks')
        .where('blob_key', '=', blob_key)
        .executeTakeFirst();
      if (Number(chunks.numDeletedRows) > 0) counts.attachment_blobs += 1;
    }
    const deleted = await trx.deleteFrom('conversations').where('id', '=', conversationId).executeTakeFirst();
    counts.conversations = Number(deleted.numDeletedRows);
  }

  /**
   * The export (docs/privacy.md "Export"): one JSON document, written piece by piece from paged queries, so a long
   * history never sits in memory. Message snapshots are those the SDK shows (attachment blocks with fresh signed
   * links); each conversation lists its attachments with a signed download `url`.
   */
  async exportJson(companyId: string, selector: PrivacySelector): Promise<AsyncGenerator<string>> {
    // Resolved before the first byte, so a missing conversation is a 404, not a broken document.
    const conversations = await this.conversationsOf(companyId, selector);
    return this.writeExport(companyId, selector, conversations);
  }

  private async *writeExport(
    companyId: string,
    selector: PrivacySelector,
    conversations: ConversationRef[],
  ): AsyncGenerator<string> {
    const visitor =
      'session_id' in selector
        ? { session_id: selector.session_id }
        : await this.visitorOf(companyId, conversations[0]?.id, selector);
    yield `{"visitor":${JSON.stringify(visitor)},"conversations":[`;
    let firstConversation = true;
    for (const ref of conversations) {
      const conversation = await this.db
        .selectFrom('conversations')
        .select(['id', 'created_at'])
        .where('id', '=', ref.id)
        .executeTakeFirst();
      if (!conversation) continue;
      yield `${firstConversation ? '' : ','}{"id":${JSON.stringify(conversation.id)},"created_at":${JSON.stringify(conversation.created_at)},"messages":[`;
      firstConversation = false;
      let after = 0;
      let firstMessage = true;
      for (;;) {
        const rows = await this.db
          .selectFrom('messages')
          .selectAll()
          .where('conversation_id', '=', ref.id)
          .where('position', '>', after)
          .where('status', '=', 'complete')
          // Internal notes are the agents' working papers, never shown to visitors (docs/design.md "Internal
          // notes"); they are erased with the conversation but left out of the copy a visitor is handed.
          .where('role', '<>', 'note')
          .orderBy('position')
          .limit(PAGE)
          .execute();
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.position;
        const snapshots: MessageSnapshot[] = this.deps.attachments.presentAll(rows.map(toSnapshot));
        yield (firstMessage ? '' : ',') + snapshots.map((s) => JSON.stringify(s)).join(',');
        firstMessage = false;
      }
      yield '],"attachments":[';
      let afterId = '';
      let firstAttachment = true;
      for (;;) {
        const rows = await this.db
          .selectFrom('attachments')
          .select(['id', 'name', 'content_type', 'size', 'sha256'])
          .where('conversation_id', '=', ref.id)
          .where('id', '>', afterId)
          .orderBy('id')
          .limit(PAGE)
          .execute();
        if (rows.length === 0) break;
        afterId = rows[rows.length - 1]!.id;
        yield (firstAttachment ? '' : ',') +
          rows.map((row) => JSON.stringify({ ...row, url: this.deps.attachments.urlFor(row.id) })).join(',');
        firstAttachment = false;
      }
      yield ']}';
    }
    yield ']}';
  }

  /** The visitor as their latest conversation names them (sub, name, email), or the selector alone. */
  private async visitorOf(
    companyId: string,
    conversationId: string | undefined,
    selector: PrivacySelector,
  ): Promise<Record<string, string | null>> {
    if ('visitor_sub' in selector) {
      const row = await this.db
        .selectFrom('conversations')
        .select(['visitor_id', 'visitor_name', 'visitor_email'])
        .where('company_id', '=', companyId)
        .where('visitor_id', '=', selector.visitor_sub)
        .orderBy('updated_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return {
        sub: selector.visitor_sub,
        name: row?.visitor_name ?? null,
        email: row?.visitor_email ?? null,
      };
    }
    const row =
      conversationId === undefined
        ? undefined
        : await this.db
            .selectFrom('conversations')
            .select(['session_id', 'visitor_id', 'visitor_name', 'visitor_email'])
            .where('id', '=', conversationId)
            .executeTakeFirst();
    return {
      session_id: row?.session_id ?? null,
      sub: row?.visitor_id ?? null,
      name: row?.visitor_name ?? null,
      email: row?.visitor_email ?? null,
    };
  }
}

/**
 * Takes the conversation's row lock for the rest of the transaction — the one a message insert takes to number its
 * message (`takePosition` in packages/server/src/webchat/messages/message-store.ts) —, so on PostgreSQL a write racing the erasure either
 * commits before it (and is erased with it) or waits and then finds no conversation. SQLite runs one write
 * transaction at a time. Answers false when the conversation is already gone (an erasure or a sweep before).
 */
async function lockConversation(trx: Kysely<PrivacyDatabase>, conversationId: string): Promise<boolean> {
  const locked = await trx
    .updateTable('conversations')
    .set((eb) => ({ last_position: eb.ref('last_position') }))
    .where('id', '=', conversationId)
    .executeTakeFirst();
  return Number(locked.numUpdatedRows) > 0;
}
