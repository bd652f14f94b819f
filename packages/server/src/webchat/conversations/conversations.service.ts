import { randomUUID } from 'node:crypto';
import { attributeText, type VisitorAttributes } from '@parley/webchat-protocol';
import type { CompiledQuery, Kysely, Selectable, Transaction } from 'kysely';
import { isUuid } from '../../companies/companies.service.ts';
import type { EventRecorder } from '../../events/domain-events.ts';
import { now } from '../../storage/columns.ts';
import { compileOnce } from '../../storage/compiled.ts';
import type { GroupCommit } from '../../storage/group-commit.ts';
import type { Database } from '../../storage/schema.ts';
import {
  type Conversation,
  type ConversationHandler,
  type ConversationStatus,
  toConversation,
} from '../conversation.ts';
import type { SessionScope, Visitor } from '../visitor.ts';
import { noDigitalEmployee } from '../webchat.errors.ts';

export interface DigitalEmployeeRef {
  id: string;
  name: string;
  companyId: string;
}

type ConversationRow = Selectable<Database['conversations']>;

export class ConversationsService {
  // Read on every chat message (the publish hook, the reply), so compiled once (see compileOnce).
  private readonly byId;
  // Read with every conversation an SDK opens without a channel (see compileOnce).
  private readonly defaultEmployee;
  /** Every new conversation's row: compiled once, on first use, for the columns `create` writes (see compileOnce). */
  private insertRow?: (row: ConversationRow) => CompiledQuery;

  constructor(
    private readonly db: Kysely<Database>,
    /** Webhook events of conversation changes, recorded in each change's transaction (events/domain-events.ts). */
    private readonly events: EventRecorder,
    /**
     * Where a new conversation's write runs: the store's shared commits (packages/server/src/storage/group-commit.ts),
     * so a burst of visitors opening chats shares SQLite commits; without it, a transaction of its own.
     */
    private readonly writes?: Pick<GroupCommit, 'run' | 'statement'>,
    /**
     * The company's default digital employee from this node's cache of company rows
     * (packages/server/src/companies/company-cache.ts, through the digital employees' `findDefault`); without it,
     * read from the store each time.
     */
    private readonly employees?: { findDefault(companyId: string): Promise<DigitalEmployeeRef | undefined> },
  ) {
    this.byId = compileOnce<{ id: string }>((arg) =>
      db.selectFrom('conversations').selectAll().where('id', '=', arg('id')),
    );
    this.defaultEmployee = compileOnce<{ company_id: string }>((arg) =>
      db
        .selectFrom('digital_employees')
        .select(['id', 'name', 'company_id'])
        .where('company_id', '=', arg('company_id'))
        .where('is_default', '=', 1),
    );
  }

  /** A new conversation of the session, and of the verified visitor it acts for (if any). */
  async create(
    scope: SessionScope,
    digitalEmployeeId: string,
    visitor?: Visitor,
    options: { attributes?: VisitorAttributes; pageUrl?: string } = {},
  ): Promise<Conversation> {
    const at = now();
    // The token's attributes win over what the page's SDK said (the token is the integrator's signed word).
    const attributes = { ...options.attributes, ...visitor?.attributes };
    const row: ConversationRow = {
      id: randomUUID(),
      company_id: scope.companyId,
      channel_id: scope.channelId ?? null,
      session_id: scope.sessionId,
      digital_employee_id: digitalEmployeeId,
      status: 'open',
      handled_by: 'digital_employee',
      agent_name: null,
      last_position: 0,
      created_at: at,
      updated_at: at,
      visitor_key: visitor?.key ?? null,
      visitor_id: visitor?.id ?? null,
      visitor_name: visitor?.name ?? null,
      visitor_email: visitor?.email ?? null,
      visitor_read_position: 0,
      agent_read_position: 0,
      queued_at: null,
      assignee_id: null,
      assigned_at: null,
      workspace_status: 'open',
      snoozed_until: null,
      visitor_attributes:
        attributes && Object.keys(attributes).length > 0 ? JSON.stringify(attributes) : null,
      page_url: options.pageUrl ?? null,
      labels: null,
    };
    // Kysely's building of a 26-column insert cost more than SQLite's running it (docs/operations.md "Capacity").
    this.insertRow ??= compileOnce<ConversationRow>((arg) =>
      this.db
        .insertInto('conversations')
        .values(
          Object.fromEntries(
            Object.keys(row).map((column) => [column, arg(column as keyof ConversationRow & string)]),
          ) as ConversationRow,
        ),
    );
    const insert = this.insertRow(row);
    const created = {
      type: 'conversation.created',
      companyId: row.company_id,
      data: {
        conversation_id: row.id,
        channel_id: row.channel_id,
        digital_employee_id: row.digital_employee_id,
      },
    } as const;
    // Mostly the insert is all there is to write (no attributes, no webhook endpoint subscribed): then it needs no
    // transaction of its own (on PostgreSQL one statement instead of three round trips). An endpoint added after this
    // look is the creation's concurrent change: only one added before the creation was asked must be seen.
    if (this.writes && !hasAttributes(attributes) && !(await this.events.wouldRecord?.(this.db, created))) {
      await this.writes.statement(insert);
      return toConversation(row);
    }
    const write = async (trx: Transaction<Database>) => {
      await trx.executeQuery(insert);
      // A new conversation has no attribute rows to replace: only the inserts.
      await insertAttributeRows(trx, row.id, attributes);
      await this.events.record(trx, created);
    };
    // Answered only once committed, shared commit or not (group-commit.ts settles after the commit).
    await (this.writes ? this.writes.run(write) : this.db.transaction().execute(write));
    return toConversation(row);
  }

  /** The conversation if this session (or the visitor it acts for, and channel) may see it; `undefined` otherwise. */
  async findForSession(scope: SessionScope, id: string): Promise<Conversation | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.db.executeQuery<ConversationRow>(this.byId({ id }));
    const row = rows[0];
    if (!row || row.company_id !== scope.companyId) return undefined;
    if (scope.channelId && row.channel_id !== scope.channelId) return undefined;
    const visible = scope.visitorKey
      ? row.visitor_key === scope.visitorKey
      : row.session_id === scope.sessionId && row.visitor_key === null;
    return visible ? toConversation(row) : undefined;
  }

  async listForSession(scope: SessionScope, limit = 100): Promise<Conversation[]> {
    let query = this.db.selectFrom('conversations').selectAll().where('company_id', '=', scope.companyId);
    query = scope.visitorKey
      ? query.where('visitor_key', '=', scope.visitorKey)
      : query.where('session_id', '=', scope.sessionId).where('visitor_key', 'is', null);
    if (scope.channelId) query = query.where('channel_id', '=', scope.channelId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toConversation);
  }

  /** Whether the session has conversations in the channel that belong to no verified visitor yet. */
  async hasAnonymousConversations(companyId: string, sessionId: string, channelId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('conversations')
      .select('id')
      .where('company_id', '=', companyId)
      .where('session_id', '=', sessionId)
      .where('channel_id', '=', channelId)
      .where('visitor_key', 'is', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Gives the visitor the conversations this session started anonymously in the visitor's channel (docs/design.md
   * "Visitor identity": an anonymous session that identifies keeps its conversations). Conversations of another
   * visitor stay theirs. Answers the ids of the conversations attached (the session's connections lose them).
   */
  async attachSessionToVisitor(companyId: string, sessionId: string, visitor: Visitor): Promise<string[]> {
    const rows = await this.db
      .updateTable('conversations')
      .set({
        visitor_key: visitor.key,
        visitor_id: visitor.id,
        visitor_name: visitor.name,
        visitor_email: visitor.email,
      })
      .where('company_id', '=', companyId)
      .where('session_id', '=', sessionId)
      .where('channel_id', '=', visitor.channelId)
      .where('visitor_key', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** The name and email the visitor's newest conversation holds (what their earlier tokens said). */
  async knownVisitorProfile(
    companyId: string,
    visitorKey: string,
  ): Promise<{ name: string | null; email: string | null } | undefined> {
    const row = await this.db
      .selectFrom('conversations')
      .select(['visitor_name', 'visitor_email'])
      .where('company_id', '=', companyId)
      .where('visitor_key', '=', visitorKey)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && { name: row.visitor_name, email: row.visitor_email };
  }

  /**
   * Records the name and email of the visitor's latest token on all their conversations (what agents see); a token
   * without one of them leaves the known value.
   */
  async updateVisitorProfile(companyId: string, visitor: Visitor): Promise<void> {
    const attributes = visitor.attributes ?? null;
    if (visitor.name === null && visitor.email === null && attributes === null) return;
    await this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('conversations')
        .set({
          ...(visitor.name !== null ? { visitor_name: visitor.name } : {}),
          ...(visitor.email !== null ? { visitor_email: visitor.email } : {}),
          // A token with attributes says all of them: they replace what an earlier token or the SDK said.
          ...(attributes !== null ? { visitor_attributes: JSON.stringify(attributes) } : {}),
        })
        .where('company_id', '=', companyId)
        .where('visitor_key', '=', visitor.key)
        .returning('id')
        .execute();
      if (attributes === null) return;
      for (const row of rows) await replaceAttributeRows(trx, row.id, attributes);
    });
  }

  async find(id: string): Promise<Conversation | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.db.executeQuery<ConversationRow>(this.byId({ id }));
    return rows[0] && toConversation(rows[0]);
  }

  /** Several conversations by id in one statement (unknown ids are left out; order not kept). */
  async findMany(ids: readonly string[]): Promise<Conversation[]> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    const rows = await this.db.selectFrom('conversations').selectAll().where('id', 'in', valid).execute();
    return rows.map(toConversation);
  }

  async findInCompany(companyId: string, id: string): Promise<Conversation | undefined> {
    const conversation = await this.find(id);
    return conversation?.companyId === companyId ? conversation : undefined;
  }

  /** A company's conversations, most recently active first; `before` is the `updated_at|id` cursor of the last row. */
  async listForCompany(
    companyId: string,
    options: { limit: number; before?: { updatedAt: string; id: string }; status?: ConversationStatus },
  ): Promise<Conversation[]> {
    let query = this.db.selectFrom('conversations').selectAll().where('company_id', '=', companyId);
    if (options.status) query = query.where('status', '=', options.status);
    const before = options.before;
    if (before) {
      query = query.where((eb) =>
        eb.or([
          eb('updated_at', '<', before.updatedAt),
          eb.and([eb('updated_at', '=', before.updatedAt), eb('id', '<', before.id)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map(toConversation);
  }

  /**
   * Moves the conversation to `handledBy`; with its `conversation.handed_over`/`handed_back` event when it was not
   * there already (a concurrent duplicate changes nothing and reports nothing). Either way the conversation leaves
   * the routing queue; back to the digital employee it also loses its assignee (hand back frees the agent).
   */
  async setHandler(id: string, handledBy: ConversationHandler, agentName: string | null): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('conversations')
        .set({
          queued_at: null,
          ...(handledBy === 'digital_employee' ? { assignee_id: null, assigned_at: null } : {}),
        })
        .where('id', '=', id)
        .execute();
      const changed = await trx
        .updateTable('conversations')
        .set({ handled_by: handledBy, agent_name: agentName, updated_at: now() })
        .where('id', '=', id)
        .where('handled_by', '!=', handledBy)
        .returning('company_id')
        .executeTakeFirst();
      if (!changed) return;
      await this.events.record(
        trx,
        handledBy === 'agent'
          ? {
              type: 'conversation.handed_over',
              companyId: changed.company_id,
              data: { conversation_id: id, agent: agentName },
            }
          : {
              type: 'conversation.handed_back',
              companyId: changed.company_id,
              data: { conversation_id: id },
            },
      );
    });
  }

  /** Closes the conversation, with its `conversation.closed` event the first time. */
  async close(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const changed = await trx
        .updateTable('conversations')
        .set({ status: 'closed', updated_at: now() })
        .where('id', '=', id)
        .where('status', '!=', 'closed')
        .returning('company_id')
        .executeTakeFirst();
      if (changed) {
        await this.events.record(trx, {
          type: 'conversation.closed',
          companyId: changed.company_id,
          data: { conversation_id: id },
        });
      }
    });
  }

  /** The company's default digital employee (created with the company by the digital-employees capability). */
  async defaultDigitalEmployee(companyId: string): Promise<DigitalEmployeeRef> {
    if (this.employees) {
      const found = await this.employees.findDefault(companyId);
      if (!found) throw noDigitalEmployee();
      return found;
    }
    const { rows } = await this.db.executeQuery<{ id: string; name: string; company_id: string }>(
      this.defaultEmployee({ company_id: companyId }),
    );
    const row = rows[0];
    if (!row) throw noDigitalEmployee();
    return { id: row.id, name: row.name, companyId: row.company_id };
  }
}

/** Rewrites the rows the inbox filters attributes by (`attr.KEY=VALUE`, one per key) to match `attributes`. */
export async function replaceAttributeRows(
  db: Kysely<Database> | Transaction<Database>,
  conversationId: string,
  attributes: VisitorAttributes,
): Promise<void> {
  await db.deleteFrom('conversation_attributes').where('conversation_id', '=', conversationId).execute();
  await insertAttributeRows(db, conversationId, attributes);
}

/** Adds one row per attribute (the caller removed the old ones, or there are none yet). */
async function insertAttributeRows(
  db: Kysely<Database> | Transaction<Database>,
  conversationId: string,
  attributes: VisitorAttributes,
): Promise<void> {
  const rows = Object.entries(attributes).map(([key, value]) => ({
    conversation_id: conversationId,
    key,
    value: attributeText(value),
  }));
  if (rows.length > 0) await db.insertInto('conversation_attributes').values(rows).execute();
}

const hasAttributes = (attributes: VisitorAttributes): boolean => Object.keys(attributes).length > 0;
