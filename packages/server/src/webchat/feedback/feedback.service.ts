import type {
  Csat,
  CsatView,
  FeedbackRating,
  MessageFeedback,
  MessageFeedbackView,
} from '@parley/webchat-protocol';
import type { DigitalEmployeeStatsView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import { isUuid } from '../../companies/companies.service.ts';
import type { EventRecorder } from '../../events/domain-events.ts';
import { now } from '../../storage/columns.ts';
import type { Database } from '../../storage/schema.ts';
import type { Conversation } from '../conversation.ts';
import { conversationOpen, feedbackNotAllowed, messageNotFound } from '../webchat.errors.ts';

/** Roles whose messages a visitor may rate (docs/design.md "Feedback, CSAT and read state"). */
const RATABLE_ROLES = new Set(['digital_employee', 'agent']);

/** How a digital employee is doing: thumbs on its messages and the CSAT of its conversations (the portal's answer). */
export type DigitalEmployeeStats = DigitalEmployeeStatsView;

/**
 * Visitors' ratings: a thumb (and an optional comment) on a digital-employee or agent message, and a CSAT score
 * (1–5, optional comment) on a closed conversation. Rating again replaces the previous rating. Each change is one
 * transaction of its own, with its event for the company's webhooks (events/domain-events.ts).
 */
export class FeedbackService {
  constructor(
    private readonly db: Kysely<Database>,
    /** `message.feedback` and `conversation.csat` webhook events, in the rating's transaction. */
    private readonly events: EventRecorder,
  ) {}

  async rateMessage(
    conversation: Conversation,
    messageId: string,
    input: { rating: FeedbackRating; comment?: string | null },
  ): Promise<MessageFeedbackView> {
    const comment = cleanComment(input.comment);
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      const message = isUuid(messageId)
        ? await trx
            .selectFrom('messages')
            .select(['id', 'role', 'status'])
            .where('conversation_id', '=', conversation.id)
            .where('id', '=', messageId.toLowerCase())
            .executeTakeFirst()
        : undefined;
      if (!message) throw messageNotFound();
      if (!RATABLE_ROLES.has(message.role) || message.status !== 'complete') throw feedbackNotAllowed();
      await trx
        .insertInto('message_feedback')
        .values({
          message_id: message.id,
          conversation_id: conversation.id,
          company_id: conversation.companyId,
          rating: input.rating,
          comment,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) =>
          oc.column('message_id').doUpdateSet({ rating: input.rating, comment, updated_at: at }),
        )
        .execute();
      await this.events.record(trx, {
        type: 'message.feedback',
        companyId: conversation.companyId,
        data: { conversation_id: conversation.id, message_id: message.id, rating: input.rating, comment },
      });
      return { message_id: message.id, rating: input.rating, comment, updated_at: at };
    });
  }

  /** The visitor's CSAT of a closed conversation (`conversation_open` before it is closed). */
  async rateConversation(
    conversation: Conversation,
    input: { score: number; comment?: string | null },
  ): Promise<CsatView> {
    if (conversation.status !== 'closed') throw conversationOpen();
    const comment = cleanComment(input.comment);
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('conversation_csat')
        .values({
          conversation_id: conversation.id,
          company_id: conversation.companyId,
          score: input.score,
          comment,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) =>
          oc.column('conversation_id').doUpdateSet({ score: input.score, comment, updated_at: at }),
        )
        .execute();
      await this.events.record(trx, {
        type: 'conversation.csat',
        companyId: conversation.companyId,
        data: { conversation_id: conversation.id, score: input.score, comment },
      });
      return { conversation_id: conversation.id, score: input.score, comment, updated_at: at };
    });
  }

  /** The ratings of these messages (the rated ones only), for message reads. */
  async feedbackOf(messageIds: readonly string[]): Promise<Map<string, MessageFeedback>> {
    const ratings = new Map<string, MessageFeedback>();
    if (messageIds.length === 0) return ratings;
    const rows = await this.db
      .selectFrom('message_feedback')
      .select(['message_id', 'rating', 'comment'])
      .where('message_id', 'in', [...messageIds])
      .execute();
    for (const row of rows)
      ratings.set(row.message_id, { rating: row.rating as FeedbackRating, comment: row.comment });
    return ratings;
  }

  /** The CSAT of these conversations (the rated ones only). */
  async csatOf(conversationIds: readonly string[]): Promise<Map<string, Csat>> {
    const ratings = new Map<string, Csat>();
    if (conversationIds.length === 0) return ratings;
    const rows = await this.db
      .selectFrom('conversation_csat')
      .select(['conversation_id', 'score', 'comment'])
      .where('conversation_id', 'in', [...conversationIds])
      .execute();
    for (const row of rows)
      ratings.set(row.conversation_id, { score: Number(row.score), comment: row.comment });
    return ratings;
  }

  /**
   * Per digital employee of the company: thumbs on its own messages (agents' messages count for no digital
   * employee) and the CSAT of the conversations routed to it. Employees without ratings are absent (see `emptyStats`).
   */
  async statsByEmployee(companyId: string): Promise<Map<string, DigitalEmployeeStats>> {
    const thumbs = await this.db
      .selectFrom('message_feedback as f')
      .innerJoin('messages as m', 'm.id', 'f.message_id')
      .select(['m.author_id', 'f.rating', (eb) => eb.fn.countAll().as('n')])
      .where('f.company_id', '=', companyId)
      .where('m.role', '=', 'digital_employee')
      .groupBy(['m.author_id', 'f.rating'])
      .execute();
    const csat = await this.db
      .selectFrom('conversation_csat as s')
      .innerJoin('conversations as c', 'c.id', 's.conversation_id')
      .select([
        'c.digital_employee_id',
        (eb) => eb.fn.countAll().as('n'),
        (eb) => eb.fn.sum('s.score').as('total'),
      ])
      .where('s.company_id', '=', companyId)
      .groupBy('c.digital_employee_id')
      .execute();
    const stats = new Map<string, { up: number; down: number; csatCount: number; csatTotal: number }>();
    const entry = (id: string) => {
      const found = stats.get(id);
      if (found) return found;
      const created = { up: 0, down: 0, csatCount: 0, csatTotal: 0 };
      stats.set(id, created);
      return created;
    };
    for (const t of thumbs) {
      if (t.author_id === null) continue;
      const e = entry(t.author_id);
      if (t.rating === 'up') e.up += Number(t.n);
      else e.down += Number(t.n);
    }
    for (const c of csat) {
      const e = entry(c.digital_employee_id);
      e.csatCount += Number(c.n);
      e.csatTotal += Number(c.total ?? 0);
    }
    return new Map(
      [...stats].map(([id, e]) => [
        id,
        {
          digital_employee_id: id,
          thumbs_up: e.up,
          thumbs_down: e.down,
          thumbs_up_share: e.up + e.down > 0 ? e.up / (e.up + e.down) : null,
          csat_count: e.csatCount,
          csat_average: e.csatCount > 0 ? e.csatTotal / e.csatCount : null,
        },
      ]),
    );
  }
}

/** The stats of a digital employee nobody has rated yet. */
export const emptyStats = (digitalEmployeeId: string): DigitalEmployeeStats => ({
  digital_employee_id: digitalEmployeeId,
  thumbs_up: 0,
  thumbs_down: 0,
  thumbs_up_share: null,
  csat_count: 0,
  csat_average: null,
});

/** A comment is kept as written but trimmed; an empty one is no comment. */
function cleanComment(comment: string | null | undefined): string | null {
  const trimmed = comment?.trim();
  return trimmed ? trimmed : null;
}
