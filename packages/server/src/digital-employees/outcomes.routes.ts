import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { App } from '../http/types.ts';
import { principalOf } from '../oauth/principal.ts';
import type { Database } from '../storage/schema.ts';
import type { DigitalEmployeesService } from './digital-employees.service.ts';
import { OUTCOME_DAYS_DEFAULT, OUTCOME_DAYS_MAX, outcomesOf } from './outcomes.ts';

export const OutcomesParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const OutcomesQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: OUTCOME_DAYS_MAX,
      default: OUTCOME_DAYS_DEFAULT,
      description: 'The window: conversations started in the last `days` days (default 30).',
    }),
  ),
});

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
      return outcomesOf(deps.db, companyId, employee.id, request.query.days ?? OUTCOME_DAYS_DEFAULT);
    },
  );
}
