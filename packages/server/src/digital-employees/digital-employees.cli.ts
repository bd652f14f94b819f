import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { DigitalEmployeesService, digitalEmployeeToJson } from './digital-employees.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
interface DigitalEmployeeCommandDeps {
  digitalEmployees: DigitalEmployeesService;
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
  },
  async run(options, ctx) {
    const greeting = optionalString(options.greeting);
    const employee = await ctx.digitalEmployees.create({
      companyId: requireString(options, 'company'),
      name: requireString(options, 'name'),
      responder: requireString(options, 'responder'),
      connectorId: optionalString(options.connector) ?? null,
      model: optionalString(options.model) ?? null,
      systemPrompt: optionalString(options['system-prompt']) ?? null,
      settings: greeting ? { greeting } : {},
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

export const digitalEmployeeCommands = [create, list, setDefault];
