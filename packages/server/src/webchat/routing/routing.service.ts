import { type Kysely, sql, type Transaction } from 'kysely';
import { NotFoundError } from '../../errors/app-error.ts';
import { now } from '../../storage/columns.ts';
import type { Dialect } from '../../storage/database.ts';
import type { Database } from '../../storage/schema.ts';
import { displayNameOf } from '../../users/display-name.ts';
import { type Conversation, toConversation } from '../conversation.ts';
import type { Availability } from './routing.tables.ts';
import type { RoutingSettingsStore } from './routing-settings.ts';

export interface AgentState {
  userId: string;
  name: string;
  email: string;
  role: string;
  availability: Availability;
  /** Open conversations assigned to the agent now. */
  load: number;
  lastAssignedAt: string | null;
}

/** Whom a conversation goes to: one portal user, or the next agent in round-robin order. */
export type AssignTarget = { userId: string } | 'next';

export interface Assignment {
  userId: string;
  name: string;
}

const agentNotFound = () =>
  new NotFoundError('agent_not_found', 'No portal user of this company has that id.');

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The queue, agents' availability and assignment (docs/routing.md). Assignment runs in one transaction that first
 * locks the company (PostgreSQL `FOR UPDATE`; SQLite runs write transactions one at a time), so two nodes routing
 * the same queue never give one conversation twice nor push an agent past capacity; the conversation row is
 * updated only if it is still in the state the choice was made on.
 */
export class RoutingService {
  constructor(
    private readonly deps: { db: Kysely<Database>; dialect: Dialect; settings: RoutingSettingsStore },
  ) {}

  async setAvailability(user: { id: string; companyId: string }, availability: Availability): Promise<void> {
    const at = now();
    await this.deps.db
      .insertInto('agent_availability')
      .values({
        user_id: user.id,
        company_id: user.companyId,
        availability,
        last_assigned_at: null,
        updated_at: at,
      })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ availability, updated_at: at }))
      .execute();
  }

  /** Every portal user of the company with availability and load, available first, then by name. */
  async agents(companyId: string): Promise<AgentState[]> {
    const rows = await this.agentRows(this.deps.db, companyId);
    return rows.sort(
      (a, b) =>
        Number(b.availability === 'available') - Number(a.availability === 'available') ||
        a.name.localeCompare(b.name),
    );
  }

  /** Puts an open conversation the digital employee handles into the queue; false when it already waits or is not. */
  async enqueue(conversationId: string): Promise<boolean> {
    const at = now();
    const result = await this.deps.db
      .updateTable('conversations')
      .set({ queued_at: at, updated_at: at })
      .where('id', '=', conversationId)
      .where('status', '=', 'open')
      .where('handled_by', '=', 'digital_employee')
      .where('queued_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The company's waiting conversations, longest waiting first. */
  async queue(companyId: string, limit = 100): Promise<Conversation[]> {
    const rows = await this.queuedQuery(companyId).selectAll().limit(limit).execute();
    return rows.map(toConversation);
  }

  /**
   * Assigns the conversation: to `target`, or (`'next'`) to the available agent under capacity who was assigned
   * least recently (never assigned first; ties by id). `'next'` takes only a conversation still waiting in the
   * queue; a named user gets any open conversation (take, reassign). Answers undefined when nothing was assigned:
   * no agent free, or the conversation changed meanwhile (another node assigned it, it was closed).
   */
  async assign(
    companyId: string,
    conversationId: string,
    target: AssignTarget,
  ): Promise<Assignment | undefined> {
    // Read before the transaction: on SQLite it holds the one connection, so a read outside it would wait forever.
    const { agentCapacity } = await this.deps.settings.get(companyId);
    return this.deps.db.transaction().execute(async (trx) => {
      await this.lockCompany(trx, companyId);
      const agent =
        target === 'next'
          ? await this.nextAgent(trx, companyId, agentCapacity)
          : await this.member(trx, companyId, target.userId);
      if (!agent) return undefined;
      const at = now();
      let update = trx
        .updateTable('conversations')
        .set({
          assignee_id: agent.userId,
          assigned_at: at,
          queued_at: null,
          // `handled_by` moves with the handover that follows (ConversationEngine.handover), which reports it.
          agent_name: agent.name,
          updated_at: at,
        })
        .where('id', '=', conversationId)
        .where('company_id', '=', companyId)
        .where('status', '=', 'open');
      if (target === 'next')
        update = update.where('queued_at', 'is not', null).where('assignee_id', 'is', null);
      const changed = await update.executeTakeFirst();
      if (Number(changed.numUpdatedRows) !== 1) return undefined;
      await trx
        .insertInto('agent_availability')
        .values({
          user_id: agent.userId,
          company_id: companyId,
          availability: 'away',
          last_assigned_at: at,
          updated_at: at,
        })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ last_assigned_at: at }))
        .execute();
      return { userId: agent.userId, name: agent.name };
    });
  }

  /** The conversation that has waited longest, if any. */
  async oldestQueued(companyId: string): Promise<string | undefined> {
    const row = await this.queuedQuery(companyId).select('id').limit(1).executeTakeFirst();
    return row?.id;
  }

  /** The portal user's routing state if they belong to the company; `agent_not_found` otherwise. */
  agent(companyId: string, userId: string): Promise<AgentState> {
    return this.member(this.deps.db, companyId, userId);
  }

  private async member(db: Db, companyId: string, userId: string): Promise<AgentState> {
    const [agent] = await this.agentRows(db, companyId, { userId });
    if (!agent) throw agentNotFound();
    return agent;
  }

  private queuedQuery(companyId: string) {
    return this.deps.db
      .selectFrom('conversations')
      .where('company_id', '=', companyId)
      .where('status', '=', 'open')
      .where('queued_at', 'is not', null)
      .where('assignee_id', 'is', null)
      .orderBy('queued_at', 'asc')
      .orderBy('id', 'asc');
  }

  private async nextAgent(db: Db, companyId: string, agentCapacity: number): Promise<AgentState | undefined> {
    const available = await this.agentRows(db, companyId, { onlyAvailable: true });
    return available
      .filter((a) => a.load < agentCapacity)
      .sort(
        (a, b) =>
          (a.lastAssignedAt ?? '').localeCompare(b.lastAssignedAt ?? '') || a.userId.localeCompare(b.userId),
      )[0];
  }

  /** The company's portal users with their routing state: all, only the available ones, or the one `userId`. */
  private async agentRows(
    db: Db,
    companyId: string,
    only: { onlyAvailable?: boolean; userId?: string } = {},
  ): Promise<AgentState[]> {
    let query = db
      .selectFrom('portal_users as u')
      .leftJoin('agent_availability as a', 'a.user_id', 'u.id')
      .select((eb) => [
        'u.id',
        'u.email',
        'u.name',
        'u.role',
        'a.availability',
        'a.last_assigned_at',
        eb
          .selectFrom('conversations as c')
          .select(sql<number>`count(*)`.as('n'))
          .whereRef('c.assignee_id', '=', 'u.id')
          .where('c.status', '=', 'open')
          .as('load'),
      ])
      .where('u.company_id', '=', companyId);
    if (only.onlyAvailable) query = query.where('a.availability', '=', 'available');
    if (only.userId !== undefined) query = query.where('u.id', '=', only.userId);
    const rows = await query.execute();
    return rows.map((r) => ({
      userId: r.id,
      email: r.email,
      name: displayNameOf(r),
      role: r.role,
      availability: r.availability === 'available' ? 'available' : 'away',
      load: Number(r.load ?? 0),
      lastAssignedAt: r.last_assigned_at ?? null,
    }));
  }

  /** PostgreSQL (READ COMMITTED) needs the lock; SQLite already runs write transactions one at a time. */
  private async lockCompany(trx: Transaction<Database>, companyId: string): Promise<void> {
    if (this.deps.dialect !== 'postgres') return;
    await trx.selectFrom('companies').select('id').where('id', '=', companyId).forUpdate().execute();
  }
}
