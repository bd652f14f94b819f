import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.ts';
import { principalOf } from '../../oauth/principal.ts';
import { type DigitalEmployeesService, OutcomesQuery, outcomeDays } from '../digital-employees.service.ts';
import { ACTION_METHODS, type ActionsService } from './actions.service.ts';

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const ActionParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  actionId: Type.String({ maxLength: 100 }),
});
const ActionBody = Type.Object(
  {
    name: Type.String({ description: 'a–z, 0–9 and _, at most 64: the tool name the model calls.' }),
    description: Type.String({ description: 'What the action does, for the model.' }),
    parameters: Type.Object({}, { additionalProperties: true, description: 'A JSON Schema of type object.' }),
    connector_id: Type.String({ description: 'An http connector of the company.' }),
    method: Type.Union(
      ACTION_METHODS.map((m) => Type.Literal(m)),
      { description: 'GET: the remaining arguments as the query; POST: as a JSON body.' },
    ),
    path: Type.String({ description: 'Appended to the connector URL; `{param}` is filled in URL-encoded.' }),
    status_text: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'What the visitor sees while it runs.' }),
    ),
  },
  { additionalProperties: false },
);
const docs = (summary: string, description?: string) => ({
  tags: ['digital-employees'],
  summary,
  ...(description ? { description } : {}),
});

/**
 * `/platform/v1/digital-employees/{id}/actions` (docs/design.md "Actions"): scopes `digital_employees:read` /
 * `digital_employees:write`, always the token's company (another company's employee answers 404).
 */
export function registerActionRoutes(
  app: App,
  actions: ActionsService,
  employees: DigitalEmployeesService,
): void {
  // Beside the actions because both are the platform's digital-employee routes (one registration in app.ts).
  app.get(
    '/platform/v1/digital-employees/:id/outcomes',
    {
      config: { requiredScope: 'digital_employees:read' },
      schema: {
        ...docs(
          'Outcomes of a digital employee',
          'Conversations, answered from knowledge, handed over, resolved without a person, feedback and CSAT over ' +
            'the last `days` days — each the query printed in docs/outcomes.md.',
        ),
        params: Params,
        querystring: OutcomesQuery,
      },
    },
    async (request) =>
      employees.outcomes(principalOf(request).companyId, request.params.id, outcomeDays(request.query)),
  );

  app.post(
    '/platform/v1/digital-employees/:id/actions',
    {
      config: { requiredScope: 'digital_employees:write' },
      schema: {
        ...docs(
          'Add an action',
          'The `openai` digital employee offers its actions to its model as tools; a call is validated against ' +
            '`parameters` and sent through the http connector with its current key.',
        ),
        params: Params,
        body: ActionBody,
      },
    },
    async (request, reply) => {
      const { companyId } = principalOf(request);
      const action = await actions.create(companyId, request.params.id, request.body);
      return reply.status(201).send(action);
    },
  );

  app.get(
    '/platform/v1/digital-employees/:id/actions',
    {
      config: { requiredScope: 'digital_employees:read' },
      schema: { ...docs('List the actions of a digital employee'), params: Params },
    },
    async (request) => ({ actions: await actions.list(principalOf(request).companyId, request.params.id) }),
  );

  app.delete(
    '/platform/v1/digital-employees/:id/actions/:actionId',
    {
      config: { requiredScope: 'digital_employees:write' },
      schema: { ...docs('Delete an action'), params: ActionParams },
    },
    async (request, reply) => {
      await actions.delete(principalOf(request).companyId, request.params.id, request.params.actionId);
      return reply.status(204).send();
    },
  );
}
