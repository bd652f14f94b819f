import { readFileSync } from 'node:fs';
import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Action, ActionsService } from './actions/actions.service.ts';
import type { DigitalEmployeesService, digitalEmployeeToJson } from './digital-employees.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface DigitalEmployeeCommandDeps {
  digitalEmployees: DigitalEmployeesService;
  actions: ActionsService;
  companies: Pick<CompaniesService, 'get'>;
  audit: Pick<AuditLog, 'record'>;
}

const optionalString = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

const create: Command<{ id: string }, DigitalEmployeeCommandDeps> = {
  name: 'digital-employees create',
  summary: 'create a digital employee (builtin bot, webhook or OpenAI-compatible model)',
  options: {
    company: { description: 'company id', required: true },
    name: { description: 'display name shown to visitors', required: true },
    responder: { description: 'builtin | webhook | openai', required: true },
    connector: { description: 'connector id (webhook/openai: a connector of the same type)' },
    model: { description: 'model name (openai)' },
    'system-prompt': { description: 'system prompt (openai)' },
    greeting: { description: 'message posted when a conversation starts' },
    default: { description: "make it the company's default digital employee", flag: true },
    'no-handover-tool': {
      description: 'openai: do not offer the model the built-in handover tool (settings.handover_tool false)',
      flag: true,
    },
  },
  async run(options, ctx) {
    const greeting = optionalString(options.greeting);
    const withoutHandover = options['no-handover-tool'] === true;
    const employee = await ctx.digitalEmployees.create({
      companyId: requireString(options, 'company'),
      name: requireString(options, 'name'),
      responder: requireString(options, 'responder'),
      connectorId: optionalString(options.connector) ?? null,
      model: optionalString(options.model) ?? null,
      systemPrompt: optionalString(options['system-prompt']) ?? null,
      settings: { ...(greeting ? { greeting } : {}), ...(withoutHandover ? { handover_tool: false } : {}) },
      isDefault: options.default === true,
    });
    await ctx.audit.record({
      type: 'digital_employee.created',
      companyId: employee.companyId,
      actor: 'cli',
      subject: employee.id,
      details: {
        responder: employee.responder,
        connector_id: employee.connectorId,
        is_default: employee.isDefault,
      },
    });
    return { id: employee.id };
  },
  format: (r) => `created digital employee\nid: ${r.id}`,
};

const list: Command<
  { digital_employees: Array<ReturnType<typeof digitalEmployeeToJson>> },
  DigitalEmployeeCommandDeps
> = {
  name: 'digital-employees list',
  summary: "list a company's digital employees",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const employees = await ctx.digitalEmployees.list(companyId);
    // Loaded when the command runs, not when `parley` starts: `--help` and the other commands need none of it.
    const { digitalEmployeeToJson } = await import('./digital-employees.service.ts');
    return { digital_employees: employees.map(digitalEmployeeToJson) };
  },
  format: (r) =>
    r.digital_employees
      .map(
        (e) =>
          `${e.id}  ${e.name}  ${e.responder}${e.connector_id ? ` (connector ${e.connector_id})` : ''}${e.is_default ? '  [default]' : ''}`,
      )
      .join('\n') || '(no digital employees)',
};

const setDefault: Command<{ id: string }, DigitalEmployeeCommandDeps> = {
  name: 'digital-employees set-default',
  summary: "make a digital employee the company's default (answers new conversations)",
  options: {
    company: { description: 'company id', required: true },
    id: { description: 'digital employee id', required: true },
  },
  async run(options, ctx) {
    const employee = await ctx.digitalEmployees.setDefault(
      requireString(options, 'company'),
      requireString(options, 'id'),
    );
    await ctx.audit.record({
      type: 'digital_employee.made_default',
      companyId: employee.companyId,
      actor: 'cli',
      subject: employee.id,
    });
    return { id: employee.id };
  },
  format: (r) => `default digital employee: ${r.id}`,
};

// Actions of a digital employee (docs/design.md "Actions").
/** `--parameters '{"type":"object",…}'` or `--parameters-file schema.json`. */
function parametersOf(options: Record<string, string | boolean | undefined>): unknown {
  const file = optionalString(options['parameters-file']);
  const text = file
    ? readFileSync(file, 'utf8')
    : (optionalString(options.parameters) ?? '{"type":"object"}');
  try {
    return JSON.parse(text);
  } catch {
    // The service reports it like any schema that is not an object.
    return text;
  }
}

const addAction: Command<Action, DigitalEmployeeCommandDeps> = {
  name: 'digital-employees actions add',
  summary: 'add an action a digital employee’s model may call through an http connector',
  options: {
    company: { description: 'company id', required: true },
    employee: { description: 'digital employee id', required: true },
    name: { description: 'tool name (a–z, 0–9, _; at most 64)', required: true },
    description: { description: 'what it does, for the model', required: true },
    parameters: { description: 'JSON Schema (type object) of the arguments, as JSON' },
    'parameters-file': { description: 'file holding that JSON Schema' },
    connector: { description: 'http connector id', required: true },
    method: { description: 'GET | POST', required: true },
    path: {
      description: 'path template appended to the connector URL, e.g. /orders/{order_id}',
      required: true,
    },
    'status-text': { description: 'what the visitor sees while it runs' },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    const action = await ctx.actions.create(companyId, requireString(options, 'employee'), {
      name: requireString(options, 'name'),
      description: requireString(options, 'description'),
      parameters: parametersOf(options),
      connector_id: requireString(options, 'connector'),
      method: requireString(options, 'method').toUpperCase(),
      path: requireString(options, 'path'),
      status_text: optionalString(options['status-text']) ?? null,
    });
    await ctx.audit.record({
      type: 'digital_employee.action_added',
      companyId,
      actor: 'cli',
      subject: action.digital_employee_id,
      details: { action_id: action.id, name: action.name, connector_id: action.connector_id },
    });
    return action;
  },
  format: (a) => `added action ${a.name}\nid: ${a.id}`,
};

const listActions: Command<{ actions: Action[] }, DigitalEmployeeCommandDeps> = {
  name: 'digital-employees actions list',
  summary: 'list the actions of a digital employee',
  options: {
    company: { description: 'company id', required: true },
    employee: { description: 'digital employee id', required: true },
  },
  async run(options, ctx) {
    return {
      actions: await ctx.actions.list(requireString(options, 'company'), requireString(options, 'employee')),
    };
  },
  format: (r) =>
    r.actions
      .map((a) => `${a.id}  ${a.name}  ${a.method} ${a.path}  (connector ${a.connector_id})`)
      .join('\n') || '(no actions)',
};

const deleteAction: Command<{ deleted: string }, DigitalEmployeeCommandDeps> = {
  name: 'digital-employees actions delete',
  summary: 'delete an action of a digital employee',
  options: {
    company: { description: 'company id', required: true },
    employee: { description: 'digital employee id', required: true },
    'action-id': { description: 'action id', required: true },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    const employeeId = requireString(options, 'employee');
    const actionId = requireString(options, 'action-id');
    await ctx.actions.delete(companyId, employeeId, actionId);
    await ctx.audit.record({
      type: 'digital_employee.action_deleted',
      companyId,
      actor: 'cli',
      subject: employeeId,
      details: { action_id: actionId },
    });
    return { deleted: actionId };
  },
  format: (r) => `deleted action ${r.deleted}`,
};

export const digitalEmployeeCommands = [create, list, setDefault, addAction, listActions, deleteAction];
