import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import type { Kysely } from 'kysely';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors/app-error.ts';
import { now } from '../../storage/columns.ts';
import type { Database } from '../../storage/schema.ts';
import type { ConnectorDirectory } from '../connector-ports.ts';
import {
  ConnectorNotFoundForDigitalEmployeeError,
  DigitalEmployeeNotFoundError,
} from '../digital-employees.errors.ts';
import type { DigitalEmployeeActionsTable } from '../digital-employees.tables.ts';

/** The name a model calls an action by (the tool's `function.name`). */
export const ACTION_NAME = /^[a-z0-9_]{1,64}$/;
/** Reserved for the built-in tool that hands the conversation to a person. */
export const HANDOVER_TOOL = 'handover';
export const ACTION_METHODS = ['GET', 'POST'] as const;
export type ActionMethod = (typeof ACTION_METHODS)[number];
const MAX_DESCRIPTION = 1024;
const MAX_PATH = 512;
const MAX_STATUS = 100;
const MAX_SCHEMA_BYTES = 16 * 1024;
/** Most actions one employee offers (each is a tool in every request to the model). */
export const MAX_ACTIONS_PER_EMPLOYEE = 32;

export interface Action {
  id: string;
  digital_employee_id: string;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  connector_id: string;
  method: ActionMethod;
  path: string;
  status_text: string | null;
  created_at: string;
}

export interface NewAction {
  name: string;
  description: string;
  parameters: unknown;
  connector_id: string;
  method: string;
  path: string;
  status_text?: string | null;
}

export class ActionNotFoundError extends NotFoundError {
  constructor() {
    super('action_not_found', 'No such action of this digital employee.');
  }
}

/** A field of an action failed validation; `field` names it. */
export class InvalidActionError extends BadRequestError {
  constructor(field: string, detail: string) {
    super('invalid_action', `Invalid action: ${field} ${detail}`, { errors: [{ field, message: detail }] });
  }
}

export class ActionNameTakenError extends ConflictError {
  constructor() {
    super('action_name_taken', 'This digital employee already has an action with that name.');
  }
}

/**
 * One validator for JSON Schemas (the action's `parameters`) and for the model's arguments against them: Ajv, which
 * implements JSON Schema draft-07 (and 2019-09/2020-12 via its other builds). `strict: false` accepts keywords Ajv
 * does not know (OpenAI tool schemas often carry some) instead of refusing the schema.
 */
const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

/** Checks `args` against the action's schema; returns why not (safe to show to the model), or `undefined`. */
export function argumentsProblem(
  action: Pick<Action, 'id' | 'parameters'>,
  args: unknown,
): string | undefined {
  const key = `${action.id}:${JSON.stringify(action.parameters)}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(action.parameters);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, validate);
  }
  return validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'arguments' });
}

/** Placeholders of a path template: `{order_id}`. */
export const pathParams = (path: string): string[] =>
  [...path.matchAll(/\{([a-z0-9_]{1,64})\}/g)].map((m) => m[1]!);

/**
 * Actions of digital employees (docs/design.md "Actions"): validated on write — the name, a JSON Schema object for
 * the parameters (valid as a schema), a method, a path template whose placeholders are parameters, an `http`
 * connector of the same company.
 */
export class ActionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly connectors: ConnectorDirectory,
  ) {}

  async create(companyId: string, employeeId: string, input: NewAction): Promise<Action> {
    await this.employeeOf(companyId, employeeId);
    const action = await this.validate(companyId, input);
    const count = await this.db
      .selectFrom('digital_employee_actions')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('digital_employee_id', '=', employeeId)
      .executeTakeFirst();
    if (Number(count?.n ?? 0) >= MAX_ACTIONS_PER_EMPLOYEE)
      throw new InvalidActionError(
        'name',
        `a digital employee has at most ${MAX_ACTIONS_PER_EMPLOYEE} actions.`,
      );
    const row: DigitalEmployeeActionsTable = {
      id: randomUUID(),
      company_id: companyId,
      digital_employee_id: employeeId,
      name: action.name,
      description: action.description,
      parameters: JSON.stringify(action.parameters),
      connector_id: action.connector_id,
      method: action.method,
      path: action.path,
      status_text: action.status_text,
      created_at: now(),
    };
    try {
      await this.db.insertInto('digital_employee_actions').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ActionNameTakenError();
      throw err;
    }
    return toAction(row);
  }

  async list(companyId: string, employeeId: string): Promise<Action[]> {
    await this.employeeOf(companyId, employeeId);
    return this.listFor(companyId, employeeId);
  }

  /** The actions a reply offers (no check of the employee: the caller holds it). */
  async listFor(companyId: string, employeeId: string): Promise<Action[]> {
    const rows = await this.db
      .selectFrom('digital_employee_actions')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('digital_employee_id', '=', employeeId)
      .orderBy('created_at')
      .orderBy('name')
      .execute();
    return rows.map(toAction);
  }

  async delete(companyId: string, employeeId: string, actionId: string): Promise<void> {
    await this.employeeOf(companyId, employeeId);
    if (!UUID.test(actionId)) throw new ActionNotFoundError();
    const result = await this.db
      .deleteFrom('digital_employee_actions')
      .where('company_id', '=', companyId)
      .where('digital_employee_id', '=', employeeId)
      .where('id', '=', actionId.toLowerCase())
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw new ActionNotFoundError();
  }

  private async employeeOf(companyId: string, employeeId: string): Promise<void> {
    const found =
      UUID.test(employeeId) &&
      (await this.db
        .selectFrom('digital_employees')
        .select('id')
        .where('company_id', '=', companyId)
        .where('id', '=', employeeId.toLowerCase())
        .executeTakeFirst());
    if (!found) throw new DigitalEmployeeNotFoundError();
  }

  private async validate(
    companyId: string,
    input: NewAction,
  ): Promise<Omit<Action, 'id' | 'digital_employee_id' | 'created_at'>> {
    if (typeof input.name !== 'string' || !ACTION_NAME.test(input.name))
      throw new InvalidActionError('name', 'must be 1–64 characters of a–z, 0–9 and _.');
    if (input.name === HANDOVER_TOOL)
      throw new InvalidActionError('name', `"${HANDOVER_TOOL}" is the built-in hand-over tool.`);
    if (
      typeof input.description !== 'string' ||
      input.description.trim() === '' ||
      input.description.length > MAX_DESCRIPTION
    )
      throw new InvalidActionError('description', `must be 1–${MAX_DESCRIPTION} characters.`);
    const parameters = input.parameters;
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters))
      throw new InvalidActionError('parameters', 'must be a JSON Schema object.');
    const schema = parameters as Record<string, unknown>;
    if (schema.type !== 'object')
      throw new InvalidActionError(
        'parameters',
        'must be a schema of type "object" (tool arguments are an object).',
      );
    if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES)
      throw new InvalidActionError('parameters', `holds at most ${MAX_SCHEMA_BYTES} bytes.`);
    if (!ajv.validateSchema(schema))
      throw new InvalidActionError(
        'parameters',
        `is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}.`,
      );
    try {
      ajv.compile(schema);
    } catch (err) {
      throw new InvalidActionError('parameters', `cannot be used: ${(err as Error).message}.`);
    }
    if (!(ACTION_METHODS as readonly string[]).includes(input.method))
      throw new InvalidActionError('method', 'must be GET or POST.');
    if (
      typeof input.path !== 'string' ||
      !input.path.startsWith('/') ||
      input.path.length > MAX_PATH ||
      /[\s?#]|\.\./.test(input.path)
    )
      throw new InvalidActionError(
        'path',
        `must start with /, hold no spaces, ?, # or .., and at most ${MAX_PATH} characters.`,
      );
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const param of pathParams(input.path))
      if (!(param in properties) || !required.has(param))
        throw new InvalidActionError('path', `{${param}} must be a required property of parameters.`);
    if (
      input.status_text != null &&
      (typeof input.status_text !== 'string' || input.status_text.length > MAX_STATUS)
    )
      throw new InvalidActionError('status_text', `must be at most ${MAX_STATUS} characters.`);
    const connector =
      typeof input.connector_id === 'string' && UUID.test(input.connector_id)
        ? await this.connectors.find(companyId, input.connector_id.toLowerCase())
        : undefined;
    if (!connector) throw new ConnectorNotFoundForDigitalEmployeeError();
    if (connector.type !== 'http')
      throw new InvalidActionError(
        'connector_id',
        `must be an http connector (this one is ${connector.type}).`,
      );
    return {
      name: input.name,
      description: input.description.trim(),
      parameters: schema,
      connector_id: connector.id,
      method: input.method as ActionMethod,
      path: input.path,
      status_text: input.status_text?.trim() || null,
    };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/i.test(e.message ?? '')
  );
}

function toAction(row: DigitalEmployeeActionsTable): Action {
  return {
    id: row.id,
    digital_employee_id: row.digital_employee_id,
    name: row.name,
    description: row.description,
    parameters: JSON.parse(row.parameters),
    connector_id: row.connector_id,
    method: row.method as ActionMethod,
    path: row.path,
    status_text: row.status_text,
    created_at: row.created_at,
  };
}
