import type { DigitalEmployeeOutcomes } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import { type QueryExecutorProvider, type RawBuilder, sql } from 'kysely';

/**
 * The outcomes of one digital employee, each metric one SQL query. docs/outcomes.md prints these very texts (a test
 * checks it word for word), so anyone can re-run them against the database; the routes run them through Kysely with
 * `:company_id`, `:employee_id` and `:since` bound as parameters (never spliced into the text). The queries use only
 * SQL that SQLite and PostgreSQL read alike: timestamps are ISO-8601 text (storage/columns.ts), so `>=` compares them
 * in time order, and message blocks are JSON text, so a `sources` block is found with LIKE.
 */
export const OUTCOME_QUERIES = {
  conversations: `SELECT COUNT(*) AS conversations
FROM conversations c
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since`,
  replies: `SELECT COUNT(*) AS replies,
  COUNT(CASE WHEN m.blocks LIKE '%"type":"sources"%' THEN 1 END) AS answered_from_knowledge
FROM messages m
JOIN conversations c ON c.id = m.conversation_id
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since
  AND m.role = 'digital_employee'
  AND m.status = 'complete'`,
  handed_over: `SELECT COUNT(*) AS handed_over
FROM conversations c
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since
  AND (c.handled_by = 'agent'
    OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'agent'))`,
  resolved_without_person: `SELECT COUNT(*) AS resolved_without_person
FROM conversations c
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since
  AND c.status = 'closed'
  AND c.handled_by = 'digital_employee'
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'agent')`,
  feedback: `SELECT COUNT(CASE WHEN f.rating = 'up' THEN 1 END) AS thumbs_up,
  COUNT(CASE WHEN f.rating = 'down' THEN 1 END) AS thumbs_down
FROM message_feedback f
JOIN messages m ON m.id = f.message_id
JOIN conversations c ON c.id = m.conversation_id
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since
  AND m.role = 'digital_employee'`,
  csat: `SELECT COUNT(*) AS csat_count, SUM(s.score) AS csat_total
FROM conversation_csat s
JOIN conversations c ON c.id = s.conversation_id
WHERE c.company_id = :company_id
  AND c.digital_employee_id = :employee_id
  AND c.created_at >= :since`,
} as const;

export type OutcomeQueryName = keyof typeof OUTCOME_QUERIES;

export interface OutcomeParams {
  company_id: string;
  employee_id: string;
  /** ISO-8601: conversations started at or after this instant count. */
  since: string;
}

export type { DigitalEmployeeOutcomes };

export const OUTCOME_DAYS_DEFAULT = 30;
export const OUTCOME_DAYS_MAX = 365;

// Query strings arrive as text (no coercion in this app): 1–365 spelled as a plain decimal number.
export const OutcomesQuery = Type.Object(
  {
    days: Type.Optional(
      Type.String({
        pattern: '^(?:[1-9]|[1-9][0-9]|[12][0-9]{2}|3[0-5][0-9]|36[0-5])$',
        description: `The window: conversations started in the last \`days\` days, 1–${OUTCOME_DAYS_MAX} (default ${OUTCOME_DAYS_DEFAULT}).`,
      }),
    ),
  },
  { additionalProperties: false },
);

/** The window a request asks for (the schema has checked it is 1–365). */
export const outcomeDays = (query: { days?: string }): number =>
  query.days === undefined ? OUTCOME_DAYS_DEFAULT : Number(query.days);

/** The query text with each `:name` bound as a parameter (the text itself is a constant above, never input). */
export function bindOutcomeQuery(text: string, params: OutcomeParams): RawBuilder<Record<string, unknown>> {
  const parts = text.split(/:(company_id|employee_id|since)\b/);
  const pieces: RawBuilder<unknown>[] = [];
  parts.forEach((part, i) => {
    // split with a capture group alternates text and captured names: odd indexes are the names.
    pieces.push(i % 2 === 1 ? sql`${params[part as keyof OutcomeParams]}` : sql.raw(part));
  });
  return sql<Record<string, unknown>>`${sql.join(pieces, sql``)}`;
}

async function one(
  db: QueryExecutorProvider,
  name: OutcomeQueryName,
  params: OutcomeParams,
): Promise<Record<string, unknown>> {
  const { rows } = await bindOutcomeQuery(OUTCOME_QUERIES[name], params).execute(db);
  return rows[0] ?? {};
}

// PostgreSQL returns COUNT and SUM as bigint/numeric text; SQLite as numbers. SUM over no rows is NULL.
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** Runs every query of OUTCOME_QUERIES for one employee and window (the caller has checked the employee exists). */
export async function outcomesOf(
  db: QueryExecutorProvider,
  companyId: string,
  employeeId: string,
  days: number,
  at: Date = new Date(),
): Promise<DigitalEmployeeOutcomes> {
  const since = new Date(at.getTime() - days * 24 * 60 * 60 * 1000).toISOString();
  const params: OutcomeParams = { company_id: companyId, employee_id: employeeId, since };
  const [conversations, replies, handedOver, resolved, feedback, csat] = await Promise.all([
    one(db, 'conversations', params),
    one(db, 'replies', params),
    one(db, 'handed_over', params),
    one(db, 'resolved_without_person', params),
    one(db, 'feedback', params),
    one(db, 'csat', params),
  ]);
  const csatCount = num(csat.csat_count);
  return {
    digital_employee_id: employeeId,
    days,
    since,
    conversations: num(conversations.conversations),
    replies: num(replies.replies),
    answered_from_knowledge: num(replies.answered_from_knowledge),
    handed_over: num(handedOver.handed_over),
    resolved_without_person: num(resolved.resolved_without_person),
    thumbs_up: num(feedback.thumbs_up),
    thumbs_down: num(feedback.thumbs_down),
    csat_count: csatCount,
    csat_average: csatCount > 0 ? num(csat.csat_total) / csatCount : null,
  };
}
