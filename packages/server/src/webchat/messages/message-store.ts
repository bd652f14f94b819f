import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { EventRecorder } from '../../events/domain-events.ts';
import { now } from '../../storage/columns.ts';
import { compileOnce } from '../../storage/compiled.ts';
import type { Dialect, Store } from '../../storage/database.ts';
import type { GroupCommit } from '../../storage/group-commit.ts';
import type { Database } from '../../storage/schema.ts';
import { conversationNotFound } from '../webchat.errors.ts';
import type { MessagesTable } from '../webchat.tables.ts';
import type {
  Block,
  MessageAuthor,
  MessageRole,
  MessageSnapshot,
  MessageStatus,
  NoteAuthorType,
} from './message.ts';
import { type PartialRow, PartialWrites } from './partial-writes.ts';

export interface NewMessage {
  /** Chosen by the caller when something written before the message names it (a reply job); else a new UUID. */
  id?: string;
  conversationId: string;
  role: MessageRole;
  author: MessageAuthor | null;
  status: MessageStatus;
  blocks: Block[];
  clientMessageId?: string | null;
  /** Sequence of the first envelope that will announce it (1). */
  sequence?: number;
  /** Notes only (role `note`): what kind of author wrote it and whom it mentions. */
  note?: NoteMeta;
}

/** What only a note has (stored as JSON in `messages.note_meta`). */
export interface NoteMeta {
  authorType: NoteAuthorType;
  mentions: string[];
  /** What the note is when Parley wrote it for a purpose: `handover_summary` (notes/handover-summary.ts). */
  kind?: NoteKind;
}

/** Notes Parley writes for a purpose; an agent's own notes have no kind. */
export type NoteKind = 'handover_summary';

/** Which reads may see notes: agents' (platform, portal) do; a visitor's never do. */
export interface ReadAudience {
  includeNotes?: boolean;
}

/** The conversation as the insert found it, under its row lock (so nothing changed it meanwhile). */
export interface InsertedAt {
  position: number;
  conversationStatus: string;
  handledBy: string;
}

/** More statements for the message's own transaction (e.g. its place in the reply line): all or nothing. */
export type AlsoInTransaction = (
  trx: Transaction<Database>,
  inserted: InsertedAt & { id: string },
) => Promise<void>;

export interface MessagePage {
  messages: MessageSnapshot[];
  /** Pass as `before` for the next (older) page; `null` when there is none. */
  next_before: string | null;
}

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

/**
 * Durable messages. Positions come from the conversation row, so two writers never share one (row lock). Every
 * message that becomes complete — stored complete, or a streamed reply completed — records its `message.created`
 * webhook event in the same transaction, exactly once (the completing writes only touch a partial message).
 */
export class MessageStore {
  // The statements of every chat message and every streamed reply, compiled once (see compileOnce).
  private readonly takePosition;
  private readonly insertRow;
  /** Partial snapshots due together go as one statement (partial-writes.ts). */
  private readonly partials: PartialWrites;
  private readonly completeRow;
  private readonly byId;
  private readonly byClientMessageId;
  private readonly companyOfConversation;

  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  /** Message writes share commits with others arriving in the same turn on SQLite (storage/group-commit.ts). */
  private readonly writes: GroupCommit;

  constructor(
    store: Pick<Store, 'db' | 'dialect' | 'writes'>,
    private readonly events: EventRecorder,
  ) {
    const db = store.db;
    this.db = db;
    this.dialect = store.dialect;
    this.writes = store.writes;
    this.takePosition = compileOnce<{ id: string; at: string }>((arg) =>
      db
        .updateTable('conversations')
        .set((eb) => ({ last_position: eb('last_position', '+', 1), updated_at: arg('at') }))
        .where('id', '=', arg('id'))
        .returning(['last_position', 'status', 'handled_by', 'company_id']),
    );
    this.insertRow = compileOnce<MessagesTable>((arg) =>
      db.insertInto('messages').values({
        id: arg('id'),
        conversation_id: arg('conversation_id'),
        position: arg('position'),
        role: arg('role'),
        author_id: arg('author_id'),
        author_name: arg('author_name'),
        status: arg('status'),
        blocks: arg('blocks'),
        client_message_id: arg('client_message_id'),
        sequence: arg('sequence'),
        created_at: arg('created_at'),
        updated_at: arg('updated_at'),
        note_meta: arg('note_meta'),
      }),
    );
    this.partials = new PartialWrites(store);
    // Like the partial writes, it only touches a message that is still partial: once one node completed it (the one
    // streaming it, or the one that took over after that node died), no late write of another can undo or repeat that.
    this.completeRow = compileOnce<PartialRow>((arg) =>
      db
        .updateTable('messages')
        .set({
          status: 'complete',
          blocks: arg('blocks'),
          sequence: arg('sequence'),
          updated_at: arg('updated_at'),
        })
        .where('id', '=', arg('id'))
        .where('status', '=', 'partial'),
    );
    this.byId = compileOnce<{ id: string }>((arg) =>
      db.selectFrom('messages').selectAll().where('id', '=', arg('id')),
    );
    this.byClientMessageId = compileOnce<{ conversation_id: string; client_message_id: string }>((arg) =>
      db
        .selectFrom('messages')
        .selectAll()
        .where('conversation_id', '=', arg('conversation_id'))
        .where('client_message_id', '=', arg('client_message_id')),
    );
    this.companyOfConversation = compileOnce<{ id: string }>((arg) =>
      db.selectFrom('conversations').select('company_id').where('id', '=', arg('id')),
    );
  }

  /** Inserts a message at the conversation's next position. */
  async insert(input: NewMessage): Promise<MessageSnapshot> {
    return (await this.insertAt(input)).snapshot;
  }

  /**
   * `insert`, also telling where the message went and how the conversation stood at that moment; `also` adds
   * statements to the same transaction.
   */
  async insertAt(
    input: NewMessage,
    also?: AlsoInTransaction,
  ): Promise<{ snapshot: MessageSnapshot; inserted: InsertedAt }> {
    return this.writes.run(async (trx) => {
      const { snapshot, inserted } = await this.insertIn(trx, input);
      await also?.(trx, { ...inserted, id: snapshot.id });
      return { snapshot, inserted };
    });
  }

  /** Inserts a message inside a transaction the caller holds (e.g. a reply started with the message it answers). */
  async insertIn(
    trx: Transaction<Database>,
    input: NewMessage,
  ): Promise<{ snapshot: MessageSnapshot; inserted: InsertedAt }> {
    const at = now();
    const id = input.id ?? randomUUID();
    const taken = await trx.executeQuery<{
      last_position: number;
      status: string;
      handled_by: string;
      company_id: string;
    }>(this.takePosition({ id: input.conversationId, at }));
    const row = taken.rows[0];
    // Gone meanwhile (an erasure or a retention sweep: docs/privacy.md "Writes during an erasure"): the writer's 404.
    if (row === undefined) throw conversationNotFound();
    const position = row.last_position;
    await trx.executeQuery(
      this.insertRow({
        id,
        conversation_id: input.conversationId,
        position,
        role: input.role,
        author_id: input.author?.id ?? null,
        author_name: input.author?.name ?? null,
        status: input.status,
        blocks: JSON.stringify(input.blocks),
        client_message_id: input.clientMessageId ?? null,
        sequence: input.sequence ?? 1,
        created_at: at,
        updated_at: at,
        note_meta:
          input.role === 'note' && input.note
            ? JSON.stringify({
                author_type: input.note.authorType,
                mentions: input.note.mentions,
                ...(input.note.kind ? { kind: input.note.kind } : {}),
              })
            : null,
      }),
    );
    const inserted: InsertedAt = { position, conversationStatus: row.status, handledBy: row.handled_by };
    const snapshot: MessageSnapshot = {
      id,
      conversation_id: input.conversationId,
      role: input.role,
      author:
        input.role === 'note' && input.author && input.note
          ? { ...input.author, type: input.note.authorType }
          : input.author,
      status: input.status,
      blocks: input.blocks,
      client_message_id: input.clientMessageId ?? null,
      position,
      created_at: at,
      updated_at: at,
      ...(input.role === 'note' ? { mentions: input.note?.mentions ?? [] } : {}),
    };
    // A note is for agents only: it has its own event, and `message.created` (which visitors' integrations may
    // relay to the visitor) never carries one.
    if (snapshot.role === 'note') await this.recordNoteCreated(trx, row.company_id, snapshot);
    else if (snapshot.status === 'complete') await this.recordCreated(trx, row.company_id, snapshot);
    return { snapshot, inserted };
  }

  /** The `message.created` webhook event of a message that just became complete, in the same transaction. */
  private async recordCreated(
    trx: Kysely<Database>,
    companyId: string | undefined,
    snapshot: MessageSnapshot,
  ): Promise<void> {
    const company =
      companyId ??
      (
        await trx.executeQuery<{ company_id: string }>(
          this.companyOfConversation({ id: snapshot.conversation_id }),
        )
      ).rows[0]?.company_id;
    if (company === undefined) return;
    await this.events.record(trx, {
      type: 'message.created',
      companyId: company,
      data: { conversation_id: snapshot.conversation_id, message: snapshot },
    });
  }

  private async recordNoteCreated(
    trx: Kysely<Database>,
    companyId: string,
    snapshot: MessageSnapshot,
  ): Promise<void> {
    await this.events.record(trx, {
      type: 'note.created',
      companyId,
      data: { conversation_id: snapshot.conversation_id, note: snapshot },
    });
  }

  /**
   * Writes a streaming reply's latest partial snapshot and `reservedSequence`, the highest sequence its envelopes
   * may use from now on. False when the message is no longer partial (someone completed it): stop streaming.
   */
  persistPartial(snapshot: MessageSnapshot, reservedSequence: number): Promise<boolean> {
    return this.partials.write({
      id: snapshot.id,
      blocks: JSON.stringify(snapshot.blocks),
      sequence: reservedSequence,
      updated_at: snapshot.updated_at,
    });
  }

  /**
   * Stores the final snapshot of a partial message with the sequence of its `complete` envelope. False when it was
   * already complete (another node finished it first): the caller must not announce anything. `companyId` (the
   * conversation's) saves looking it up for the webhook event.
   */
  async complete(snapshot: MessageSnapshot, sequence: number, companyId?: string): Promise<boolean> {
    return this.writes.run(async (trx) => {
      const result = await trx.executeQuery(
        this.completeRow({
          id: snapshot.id,
          blocks: JSON.stringify(snapshot.blocks),
          sequence,
          updated_at: snapshot.updated_at,
        }),
      );
      if (Number(result.numAffectedRows ?? 0) === 0) return false;
      await this.recordCreated(trx, companyId, snapshot);
      return true;
    });
  }

  /**
   * Completes a message nobody streams any more (its node died or restarted) with `finish(blocks)`, at
   * `sequenceAfter(reservation)`: a sequence above every one its envelopes may have used (see MessagesTable.sequence).
   * Read and written in one transaction under the row's lock (SQLite: its one writer), so a late write of the
   * streaming node lands either before (and is read here) or after (and finds the message complete, so its stream
   * stops): never in between. `undefined` when it is already complete.
   */
  async completeAbandoned(
    id: string,
    finish: (blocks: Block[]) => Block[],
    sequenceAfter: (reservation: number) => number,
  ): Promise<{ snapshot: MessageSnapshot; sequence: number } | undefined> {
    return this.writes.run(async (trx) => {
      const row = await (this.dialect === 'postgres'
        ? trx.selectFrom('messages').selectAll().where('id', '=', id).forUpdate()
        : trx.selectFrom('messages').selectAll().where('id', '=', id)
      ).executeTakeFirst();
      if (row?.status !== 'partial') return undefined;
      const snapshot: MessageSnapshot = {
        ...toSnapshot(row),
        status: 'complete',
        blocks: finish(JSON.parse(row.blocks) as Block[]),
        updated_at: now(),
      };
      const sequence = sequenceAfter(row.sequence);
      await trx.executeQuery(
        this.completeRow({
          id,
          blocks: JSON.stringify(snapshot.blocks),
          sequence,
          updated_at: snapshot.updated_at,
        }),
      );
      await this.recordCreated(trx, undefined, snapshot);
      return { snapshot, sequence };
    });
  }

  /** The message if it is complete, with the sequence of its `complete` envelope. */
  async findComplete(id: string): Promise<{ snapshot: MessageSnapshot; sequence: number } | undefined> {
    const { rows } = await this.db.executeQuery<MessagesTable>(this.byId({ id }));
    const row = rows[0];
    return row?.status === 'complete' ? { snapshot: toSnapshot(row), sequence: row.sequence } : undefined;
  }

  async find(id: string): Promise<MessageSnapshot | undefined> {
    const { rows } = await this.db.executeQuery<MessagesTable>(this.byId({ id }));
    return rows[0] && toSnapshot(rows[0]);
  }

  /** Messages of a conversation still streaming (as last persisted), oldest first. */
  async inFlight(conversationId: string): Promise<MessageSnapshot[]> {
    const rows = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('status', '=', 'partial')
      .where('conversation_id', '=', conversationId)
      .orderBy('position')
      .execute();
    return rows.map(toSnapshot);
  }

  async findByClientMessageId(
    conversationId: string,
    clientMessageId: string,
  ): Promise<MessageSnapshot | undefined> {
    const { rows } = await this.db.executeQuery<MessagesTable>(
      this.byClientMessageId({ conversation_id: conversationId, client_message_id: clientMessageId }),
    );
    return rows[0] && toSnapshot(rows[0]);
  }

  /**
   * The newest digital-employee or agent message of a conversation (any status): the one whose choices a postback
   * may name (interactive/postbacks.ts). Indexed by (conversation_id, position).
   */
  async latestOffer(conversationId: string): Promise<MessageSnapshot | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .where('role', 'in', ['digital_employee', 'agent'])
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toSnapshot(row);
  }

  /**
   * The conversation's newest note of a kind (e.g. its latest hand-over summary). `note_meta` is text JSON on both
   * stores, written by `insert` with `kind` last, so a LIKE on the serialised pair finds it without JSON operators.
   */
  async latestNoteOfKind(conversationId: string, kind: NoteKind): Promise<MessageSnapshot | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .where('role', '=', 'note')
      .where('note_meta', 'like', `%"kind":${JSON.stringify(kind)}%`)
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toSnapshot(row);
  }

  /** Newest first from `before` (exclusive), returned oldest first so a page reads top to bottom. */
  async page(
    conversationId: string,
    options: { limit?: number; beforePosition?: number } & ReadAudience,
  ): Promise<MessagePage> {
    const limit = Math.min(Math.max(options.limit ?? PAGE_DEFAULT, 1), PAGE_MAX);
    let query = this.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId);
    // Notes only for readers that asked for them (agents): leaving them out is the default, so no visitor-facing
    // read can show one by forgetting an option.
    if (!options.includeNotes) query = query.where('role', '!=', 'note');
    if (options.beforePosition !== undefined) query = query.where('position', '<', options.beforePosition);
    const rows = await query
      .orderBy('position', 'desc')
      .limit(limit + 1)
      .execute();
    const more = rows.length > limit;
    const page = rows.slice(0, limit).reverse();
    return { messages: page.map(toSnapshot), next_before: more && page[0] ? page[0].id : null };
  }

  async positionOf(
    conversationId: string,
    messageId: string,
    audience: ReadAudience = {},
  ): Promise<number | undefined> {
    let query = this.db
      .selectFrom('messages')
      .select('position')
      .where('conversation_id', '=', conversationId)
      .where('id', '=', messageId);
    if (!audience.includeNotes) query = query.where('role', '!=', 'note');
    const row = await query.executeTakeFirst();
    return row?.position;
  }

  /**
   * Partial messages that no reply job owns (a job's lease decides about the others): left by a crash of a
   * version without reply jobs, or by a node that died between completing and finishing its job. `updatedBefore`
   * keeps a node from taking a reply that another node has only just started.
   */
  async listOrphanedPartial(options: { updatedBefore: string; limit?: number }): Promise<string[]> {
    const rows = await this.db
      .selectFrom('messages')
      .select('messages.id')
      .where('messages.status', '=', 'partial')
      .where('messages.updated_at', '<', options.updatedBefore)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('reply_jobs')
              .select('reply_jobs.message_id')
              .whereRef('reply_jobs.reply_message_id', '=', 'messages.id'),
          ),
        ),
      )
      .limit(options.limit ?? 100)
      .execute();
    return rows.map((r) => r.id);
  }
}

export function toSnapshot(row: MessagesTable): MessageSnapshot {
  const note = row.role === 'note' ? parseNoteMeta(row.note_meta) : undefined;
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    role: row.role as MessageRole,
    author:
      row.author_id !== null || row.author_name !== null
        ? {
            id: row.author_id ?? '',
            name: row.author_name ?? '',
            ...(note ? { type: note.authorType } : {}),
          }
        : null,
    status: row.status as MessageStatus,
    blocks: JSON.parse(row.blocks),
    client_message_id: row.client_message_id,
    position: row.position,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(note ? { mentions: note.mentions } : {}),
  };
}

function parseNoteMeta(text: string | null): NoteMeta {
  try {
    const parsed =
      text === null ? {} : (JSON.parse(text) as { author_type?: NoteAuthorType; mentions?: string[] });
    return { authorType: parsed.author_type ?? 'system', mentions: parsed.mentions ?? [] };
  } catch {
    return { authorType: 'system', mentions: [] };
  }
}
