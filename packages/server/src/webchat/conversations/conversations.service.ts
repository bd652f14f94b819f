import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUuid } from '../../companies/companies.service.ts';
import { now } from '../../storage/columns.ts';
import { compileOnce } from '../../storage/compiled.ts';
import type { Database } from '../../storage/schema.ts';
import { noDigitalEmployee } from '../webchat.errors.ts';
import {
  type Conversation,
  type ConversationHandler,
  type ConversationStatus,
  toConversation,
} from './conversation.ts';

/** Who may see a conversation over the SDK: the session that created it, in its company, from its channel. */
export interface SessionScope {
  companyId: string;
  sessionId: string;
  /** When set (X-Channel-Id), only that channel's conversations are visible. */
  channelId?: string;
}

export interface DigitalEmployeeRef {
  id: string;
  name: string;
  companyId: string;
}

type ConversationRow = Database['conversations'];

export class ConversationsService {
  // Read on every chat message (the publish hook, the reply), so compiled once (see compileOnce).
  private readonly byId;
  private readonly bySession;

  constructor(private readonly db: Kysely<Database>) {
    this.byId = compileOnce<{ id: string }>((arg) =>
      db.selectFrom('conversations').selectAll().where('id', '=', arg('id')),
    );
    this.bySession = compileOnce<{ id: string; company_id: string; session_id: string }>((arg) =>
      db
        .selectFrom('conversations')
        .selectAll()
        .where('id', '=', arg('id'))
        .where('company_id', '=', arg('company_id'))
        .where('session_id', '=', arg('session_id')),
    );
  }

  async create(scope: SessionScope, digitalEmployeeId: string): Promise<Conversation> {
    const at = now();
    const row = {
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
    };
    await this.db.insertInto('conversations').values(row).execute();
    return toConversation(row);
  }

  /** The conversation if this session (and channel, when given) may see it; `undefined` otherwise. */
  async findForSession(scope: SessionScope, id: string): Promise<Conversation | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.db.executeQuery<ConversationRow>(
      this.bySession({ id, company_id: scope.companyId, session_id: scope.sessionId }),
    );
    const row = rows[0];
    if (!row || (scope.channelId && row.channel_id !== scope.channelId)) return undefined;
    return toConversation(row);
  }

  async listForSession(scope: SessionScope, limit = 100): Promise<Conversation[]> {
    let query = this.db
      .selectFrom('conversations')
      .selectAll()
      .where('company_id', '=', scope.companyId)
      .where('session_id', '=', scope.sessionId);
    if (scope.channelId) query = query.where('channel_id', '=', scope.channelId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toConversation);
  }

  async find(id: string): Promise<Conversation | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.db.executeQuery<ConversationRow>(this.byId({ id }));
    return rows[0] && toConversation(rows[0]);
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

  async setHandler(id: string, handledBy: ConversationHandler, agentName: string | null): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ handled_by: handledBy, agent_name: agentName, updated_at: now() })
      .where('id', '=', id)
      .execute();
  }

  async close(id: string): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ status: 'closed', updated_at: now() })
      .where('id', '=', id)
      .execute();
  }

  /** The company's default digital employee (created with the company by the digital-employees capability). */
  async defaultDigitalEmployee(companyId: string): Promise<DigitalEmployeeRef> {
    const row = await this.db
      .selectFrom('digital_employees')
      .select(['id', 'name', 'company_id'])
      .where('company_id', '=', companyId)
      .where('is_default', '=', 1)
      .executeTakeFirst();
    if (!row) throw noDigitalEmployee();
    return { id: row.id, name: row.name, companyId: row.company_id };
  }
}
