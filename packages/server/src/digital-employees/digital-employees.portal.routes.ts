import type { DigitalEmployeeListing, DigitalEmployeeStatsView } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit/audit.service.ts';
import { PageQuery, pageOf } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import type { ConnectorsService } from '../integrations/connectors.service.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import {
  type DigitalEmployee,
  type DigitalEmployeesService,
  digitalEmployeeToJson,
  OutcomesQuery,
  outcomeDays,
} from './digital-employees.service.ts';
import type { DigitalEmployeeSettings } from './digital-employees.settings.ts';
import { RESPONDERS } from './digital-employees.settings.ts';

// Field rules live in the digital-employees service (its codes name the field); these bounds only stop absurd bodies.
const Fields = {
  name: Type.String({ maxLength: 1000 }),
  responder: Type.String({ maxLength: 50 }),
  connector_id: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  model: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
  system_prompt: Type.Union([Type.String({ maxLength: 30_000 }), Type.Null()]),
  greeting: Type.Union([Type.String({ maxLength: 5000 }), Type.Null()]),
  /** `settings.handover_tool` of an openai employee (docs/config.md "Digital employees"). */
  handover_tool: Type.Boolean(),
};
const CreateEmployee = Type.Object(
  {
    name: Fields.name,
    responder: Fields.responder,
    connector_id: Type.Optional(Fields.connector_id),
    model: Type.Optional(Fields.model),
    system_prompt: Type.Optional(Fields.system_prompt),
    greeting: Type.Optional(Fields.greeting),
    handover_tool: Type.Optional(Fields.handover_tool),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const UpdateEmployee = Type.Partial(Type.Object(Fields), { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const blankToNull = (v: string | null | undefined): string | null | undefined =>
  typeof v === 'string' && v.trim() === '' ? null : v;

/** The settings the portal edits; the others stay as they are. */
interface PortalSettings {
  greeting?: string | null;
  handover_tool?: boolean;
}

/**
 * The portal edits the greeting and, of an openai employee, whether the model may hand over; a change of
 * responder keeps only the greeting. `handover_tool` is stored only when switched off (on is the default).
 */
function portalSettings(
  base: DigitalEmployeeSettings,
  { greeting, handover_tool }: PortalSettings,
  responderChanged: boolean,
): DigitalEmployeeSettings {
  const next: DigitalEmployeeSettings = responderChanged
    ? base.greeting
      ? { greeting: base.greeting }
      : {}
    : { ...base };
  if (greeting === null || greeting?.trim() === '') delete next.greeting;
  else if (greeting !== undefined) next.greeting = greeting;
  if (handover_tool === true) delete next.handover_tool;
  else if (handover_tool === false) next.handover_tool = false;
  return next;
}

/**
 * Settings → Digital employees, over the digital-employees service (validation, the one-default invariant).
 * Changes are audited here because the service leaves auditing to its callers (as the CLI does).
 */
/**
 * How visitors rate each digital employee (the webchat's feedback, webchat/feedback/feedback.service.ts), typed here:
 * the webchat builds on this capability, so the composition root hands the ratings in.
 */
export interface EmployeeRatings {
  /** Per employee id; employees nobody rated yet are absent. */
  statsByEmployee(companyId: string): Promise<ReadonlyMap<string, DigitalEmployeeStatsView>>;
  /** The stats of an employee nobody rated yet. */
  unrated(employeeId: string): DigitalEmployeeStatsView;
}

/** What Settings → Digital employees uses. */
export interface DigitalEmployeePortalDeps {
  employees: DigitalEmployeesService;
  connectors: Pick<ConnectorsService, 'list'>;
  ratings: EmployeeRatings;
  audit: Pick<AuditLog, 'record'>;
}

export function registerDigitalEmployeePortalRoutes(app: App, deps: DigitalEmployeePortalDeps): void {
  const { employees, ratings } = deps;
  const audit = (
    request: FastifyRequest,
    type: string,
    e: Pick<DigitalEmployee, 'id' | 'companyId'>,
    details: Record<string, unknown> = {},
  ) =>
    deps.audit.record({
      type,
      companyId: e.companyId,
      actor: actorOf(request),
      subject: e.id,
      ip: request.ip,
      details,
    });

  app.get(
    '/digital-employees',
    { schema: { querystring: PageQuery } },
    async (request): Promise<DigitalEmployeeListing> => {
      const companyId = sessionOf(request).user.companyId;
      const connectors = (await deps.connectors.list(companyId)).map((c) => ({
        id: c.id,
        name: c.name,
        type: c.type,
      }));
      const page = pageOf(await employees.list(companyId), request.query);
      // How visitors rate each one: share of thumbs up on its messages, CSAT average of its conversations.
      const stats = await ratings.statsByEmployee(companyId);
      const items = page.items.map((e) => ({
        ...digitalEmployeeToJson(e),
        stats: stats.get(e.id) ?? ratings.unrated(e.id),
      }));
      return { ...page, items, connectors, responders: RESPONDERS };
    },
  );

  app.get('/digital-employees/:id/stats', { schema: { params: IdParams } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const employee = await employees.get(companyId, request.params.id);
    return (await ratings.statsByEmployee(companyId)).get(employee.id) ?? ratings.unrated(employee.id);
  });

  // The portal's "Outcomes" section: the same queries (docs/outcomes.md) as the platform route.
  app.get(
    '/digital-employees/:id/outcomes',
    { schema: { params: IdParams, querystring: OutcomesQuery } },
    async (request) => {
      return employees.outcomes(
        sessionOf(request).user.companyId,
        request.params.id,
        outcomeDays(request.query),
      );
    },
  );

  app.post('/digital-employees', { schema: { body: CreateEmployee } }, async (request, reply) => {
    const b = request.body;
    const employee = await employees.create({
      companyId: sessionOf(request).user.companyId,
      name: b.name,
      responder: b.responder,
      connectorId: blankToNull(b.connector_id) ?? null,
      model: blankToNull(b.model) ?? null,
      systemPrompt: blankToNull(b.system_prompt) ?? null,
      settings: portalSettings({}, b, false),
      isDefault: b.is_default === true,
    });
    await audit(request, 'digital_employee.created', employee, {
      responder: employee.responder,
      connector_id: employee.connectorId,
      is_default: employee.isDefault,
    });
    return reply.status(201).send(digitalEmployeeToJson(employee));
  });

  app.patch(
    '/digital-employees/:id',
    { schema: { params: IdParams, body: UpdateEmployee } },
    async (request) => {
      const companyId = sessionOf(request).user.companyId;
      const current = await employees.get(companyId, request.params.id);
      const b = request.body;
      const responderChanged = b.responder !== undefined && b.responder !== current.responder;
      const updated = await employees.update(companyId, current.id, {
        name: b.name,
        responder: b.responder,
        connectorId: blankToNull(b.connector_id),
        model: blankToNull(b.model),
        systemPrompt: blankToNull(b.system_prompt),
        settings: portalSettings(current.settings, b, responderChanged),
      });
      await audit(request, 'digital_employee.updated', updated, {
        responder: updated.responder,
        connector_id: updated.connectorId,
      });
      return digitalEmployeeToJson(updated);
    },
  );

  app.post('/digital-employees/:id/default', { schema: { params: IdParams } }, async (request) => {
    const updated = await employees.setDefault(sessionOf(request).user.companyId, request.params.id);
    await audit(request, 'digital_employee.default_changed', updated);
    return digitalEmployeeToJson(updated);
  });

  app.delete('/digital-employees/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const companyId = sessionOf(request).user.companyId;
    await employees.remove(companyId, request.params.id);
    await audit(request, 'digital_employee.deleted', { id: request.params.id, companyId });
    return reply.status(204).send();
  });
}
