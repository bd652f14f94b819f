import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { App } from '../http/types.ts';
import { principalOf } from '../oauth/principal.ts';
import type { Database } from '../storage/schema.ts';
import type { DigitalEmployeesService } from './digital-employees.service.ts';
import { OUTCOME_DAYS_DEFAULT, OUTCOME_DAYS_MAX, outcomesOf } from './outcomes.ts';

export const OutcomesParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
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

/**
 * `GET /platform/v1/digital-employees/{id}/outcomes` (scope `digital_employees:read`): the metrics of
 * docs/outcomes.md for the token's company; another company's employee answers 404 like an unknown one.
 */
export function registerOutcomeRoutes(
  app: App,
  deps: { db: Kysely<Database>; digitalEmployees: DigitalEmployeesService },
): void {
  app.get(
    '/platform/v1/digital-employees/:id/outcomes',
    {
      config: { requiredScope: 'digital_employees:read' },
      schema: {
        tags: ['digital-employees'],
        summary: 'Outcomes of a digital employee',
        description:
          'Conversations, answered from knowledge, handed over, resolved without a person, feedback and CSAT — ' +
          'each the query printed in docs/outcomes.md.',
        params: OutcomesParams,
        querystring: OutcomesQuery,
      },
    },
    async (request) => {
      const { companyId } = principalOf(request);
      const employee = await deps.digitalEmployees.get(companyId, request.params.id);
      return outcomesOf(deps.db, companyId, employee.id, outcomeDays(request.query));
    },
  );
}
