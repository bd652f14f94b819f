import { randomUUID } from 'node:crypto';
import type { DigitalEmployeeView } from '@parley/wire-types';
import type { Kysely, Selectable } from 'kysely';
import type { Company } from '../companies/companies.service.ts';
import { isUuid } from '../companies/companies.service.ts';
import type { CompanyCache } from '../companies/company-cache.ts';
import { lockCompany } from '../companies/company-lock.ts';
import { requireCompany } from '../companies/require-company.ts';
import { now, toBool } from '../storage/columns.ts';
import { compileOnce } from '../storage/compiled.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import type { ConnectorDirectory } from './connector-ports.ts';
import { defaultDigitalEmployeeFor } from './default-digital-employee.ts';
import {
  ConnectorNotFoundForDigitalEmployeeError,
  ConnectorTypeMismatchError,
  DefaultRequiredError,
  DigitalEmployeeInUseError,
  DigitalEmployeeNotFoundError,
  InvalidDigitalEmployeeError,
} from './digital-employees.errors.ts';
import {
  type DigitalEmployeeSettings,
  isResponderKind,
  RESPONDERS,
  type ResponderKind,
  SETTINGS_REFUSED_BY,
  validateSettings,
} from './digital-employees.settings.ts';
import type { DigitalEmployeesTable } from './digital-employees.tables.ts';
import { type DigitalEmployeeOutcomes, outcomesOf } from './outcomes.ts';

// The routes of both APIs take the outcomes window's schema from here (docs/outcomes.md).
export { OutcomesQuery, outcomeDays } from './outcomes.ts';

export interface DigitalEmployee {
  id: string;
  companyId: string;
  name: string;
  responder: ResponderKind;
  connectorId: string | null;
  model: string | null;
  systemPrompt: string | null;
  settings: DigitalEmployeeSettings;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface CreateDigitalEmployeeInput {
  companyId: string;
  name: string;
  responder: string;
  connectorId?: string | null;
  model?: string | null;
  systemPrompt?: string | null;
  settings?: unknown;
  /** Make it the company's default (the first digital employee of a company always is). */
  isDefault?: boolean;
}

export type UpdateDigitalEmployeeInput = Partial<
  Pick<
    CreateDigitalEmployeeInput,
    'name' | 'responder' | 'connectorId' | 'model' | 'systemPrompt' | 'settings'
  >
>;

export const NAME_MAX = 100;
export const MODEL_MAX = 200;
export const SYSTEM_PROMPT_MAX = 20_000;

type Row = Selectable<DigitalEmployeesTable>;
type Db = Kysely<Database>;

/**
 * Digital employees of a company: who answers a conversation (builtin bot, webhook, OpenAI-compatible model).
 * Invariant: a company that has digital employees has exactly one default (partial unique index + these methods).
 */
export class DigitalEmployeesService {
  /** Read for every reply a digital employee writes, so compiled once (see compileOnce). */
  private readonly byId;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly connectors: ConnectorDirectory,
    /**
     * This node's cache of company rows (packages/server/src/companies/company-cache.ts): `find` and `getDefault`
     * read through it, and every change here invalidates the company's entries once committed.
     */
    private readonly cache?: Pick<CompanyCache, 'get' | 'invalidate'>,
  ) {
    this.byId = compileOnce<{ company_id: string; id: string }>((arg) =>
      db
        .selectFrom('digital_employees')
        .selectAll()
        .where('company_id', '=', arg('company_id'))
        .where('id', '=', arg('id')),
    );
  }

  /** The company-created hook: every company starts with a builtin default, so a new install chats at once. */
  readonly createDefaultFor = async (trx: Db, company: Company): Promise<void> => {
    const row = toRow({ ...defaultDigitalEmployeeFor(company), isDefault: true });
    await trx.insertInto('digital_employees').values(row).execute();
  };

  async create(input: CreateDigitalEmployeeInput): Promise<DigitalEmployee> {
    await requireCompany(this.db, input.companyId);
    const fields = await this.validated({
      name: input.name,
      responder: input.responder,
      connectorId: input.connectorId ?? null,
      model: input.model ?? null,
      systemPrompt: input.systemPrompt ?? null,
      settings: input.settings ?? {},
      companyId: input.companyId,
    });
    const timestamp = now();
    const created = await this.db.transaction().execute(async (trx) => {
      await lockCompany(trx, this.dialect, input.companyId);
      const hasDefault = await findDefaultRow(trx, input.companyId);
      const isDefault = input.isDefault === true || !hasDefault;
      if (isDefault) await clearDefault(trx, input.companyId);
      const employee: DigitalEmployee = {
        id: randomUUID(),
        companyId: input.companyId,
        ...fields,
        isDefault,
        createdAt: timestamp,
        updatedAt: timestamp,
      };
      await trx.insertInto('digital_employees').values(toRow(employee)).execute();
      return employee;
    });
    await this.changed(input.companyId);
    return created;
  }

  async update(companyId: string, id: string, patch: UpdateDigitalEmployeeInput): Promise<DigitalEmployee> {
    // From the store, not the cache: the patch applies to the row as it is.
    const row = isUuid(companyId) && isUuid(id) ? await findRow(this.db, companyId, id) : undefined;
    if (!row) throw new DigitalEmployeeNotFoundError();
    const current = fromRow(row);
    const responder = patch.responder ?? current.responder;
    // Switching responder drops what the new one cannot use, unless the patch sets it explicitly.
    const kept = responder === current.responder ? current : keepApplicable(current, responder);
    const fields = await this.validated({
      companyId,
      name: patch.name ?? current.name,
      responder,
      connectorId: patch.connectorId !== undefined ? patch.connectorId : kept.connectorId,
      model: patch.model !== undefined ? patch.model : kept.model,
      systemPrompt: patch.systemPrompt !== undefined ? patch.systemPrompt : kept.systemPrompt,
      settings: patch.settings !== undefined ? patch.settings : kept.settings,
    });
    const updated: DigitalEmployee = { ...current, ...fields, updatedAt: now() };
    const { id: _id, company_id: _c, created_at: _t, is_default: _d, ...values } = toRow(updated);
    await this.db
      .updateTable('digital_employees')
      .set(values)
      .where('company_id', '=', companyId)
      .where('id', '=', id)
      .execute();
    await this.changed(companyId);
    return updated;
  }

  async list(companyId: string): Promise<DigitalEmployee[]> {
    if (!isUuid(companyId)) return [];
    const rows = await this.db
      .selectFrom('digital_employees')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(fromRow);
  }

  /** From this node's cache when it holds it (read for every greeting and every reply). */
  async find(companyId: string, id: string): Promise<DigitalEmployee | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    const load = async () => {
      const { rows } = await this.db.executeQuery<DigitalEmployeesTable>(
        this.byId({ company_id: companyId, id }),
      );
      return rows[0] && fromRow(rows[0]);
    };
    return this.cache ? this.cache.get(companyId, `employee:${id}`, load) : load();
  }

  /** The metrics of docs/outcomes.md over the last `days` days; 404 for an unknown or another company's employee. */
  async outcomes(companyId: string, id: string, days: number): Promise<DigitalEmployeeOutcomes> {
    const employee = await this.get(companyId, id);
    return outcomesOf(this.db, companyId, employee.id, days);
  }

  async get(companyId: string, id: string): Promise<DigitalEmployee> {
    const employee = await this.find(companyId, id);
    if (!employee) throw new DigitalEmployeeNotFoundError();
    return employee;
  }

  /** The company's default digital employee (every company has one: created with the company). */
  async getDefault(companyId: string): Promise<DigitalEmployee> {
    const employee = await this.findDefault(companyId);
    if (!employee) throw new DigitalEmployeeNotFoundError();
    return employee;
  }

  /**
   * The company's default digital employee, from this node's cache when it holds it (every conversation opened
   * without a channel is routed to it); `undefined` for an unknown company.
   */
  async findDefault(companyId: string): Promise<DigitalEmployee | undefined> {
    if (!isUuid(companyId)) return undefined;
    const load = async () => {
      const row = await findDefaultRow(this.db, companyId);
      return row && fromRow(row);
    };
    return this.cache ? this.cache.get(companyId, 'default-employee', load) : load();
  }

  /**
   * Makes it the company's default. Decided under the company's lock (companies/company-lock.ts), like `remove`: a
   * digital employee deleted meanwhile is not found, rather than the company left without a default.
   */
  async setDefault(companyId: string, id: string): Promise<DigitalEmployee> {
    if (!isUuid(companyId) || !isUuid(id)) throw new DigitalEmployeeNotFoundError();
    const employee = await this.db.transaction().execute(async (trx) => {
      await lockCompany(trx, this.dialect, companyId);
      const row = await findRow(trx, companyId, id);
      if (!row) throw new DigitalEmployeeNotFoundError();
      if (toBool(row.is_default)) return fromRow(row);
      const updatedAt = now();
      await clearDefault(trx, companyId);
      await trx
        .updateTable('digital_employees')
        .set({ is_default: 1, updated_at: updatedAt })
        .where('company_id', '=', companyId)
        .where('id', '=', id)
        .execute();
      return { ...fromRow(row), isDefault: true, updatedAt };
    });
    await this.changed(companyId);
    return employee;
  }

  /**
   * Removes a digital employee. The default cannot be removed (make another one the default first), nor one a
   * channel routes to. Its past conversations keep their messages; a reply they still need fails visibly. Decided
   * under the company's lock (companies/company-lock.ts), which `setDefault` and channel creation take too: neither
   * can make the checks below false before the row is gone.
   */
  async remove(companyId: string, id: string): Promise<void> {
    if (!isUuid(companyId) || !isUuid(id)) throw new DigitalEmployeeNotFoundError();
    await this.db.transaction().execute(async (trx) => {
      await lockCompany(trx, this.dialect, companyId);
      const row = await findRow(trx, companyId, id);
      if (!row) throw new DigitalEmployeeNotFoundError();
      if (toBool(row.is_default)) throw new DefaultRequiredError();
      // A channel routing to it would start conversations nobody answers; re-route the channel first.
      const channel = await trx
        .selectFrom('channels')
        .select('id')
        .where('company_id', '=', companyId)
        .where('digital_employee_id', '=', id)
        .executeTakeFirst();
      if (channel) throw new DigitalEmployeeInUseError();
      await trx
        .deleteFrom('digital_employees')
        .where('company_id', '=', companyId)
        .where('id', '=', id)
        .where('is_default', '=', 0)
        .execute();
    });
    await this.changed(companyId);
  }

  /** A change of the company's digital employees committed: this node's cache and the other nodes' forget them. */
  private async changed(companyId: string): Promise<void> {
    await this.cache?.invalidate(companyId);
  }

  private async validated(input: {
    companyId: string;
    name: string;
    responder: string;
    connectorId: string | null;
    model: string | null;
    systemPrompt: string | null;
    settings: unknown;
  }): Promise<
    Pick<DigitalEmployee, 'name' | 'responder' | 'connectorId' | 'model' | 'systemPrompt' | 'settings'>
  > {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length === 0 || name.length > NAME_MAX) {
      throw new InvalidDigitalEmployeeError(
        'invalid_name',
        'name',
        `name must be 1 to ${NAME_MAX} characters`,
      );
    }
    const responder = input.responder;
    if (!isResponderKind(responder)) {
      throw new InvalidDigitalEmployeeError(
        'invalid_responder',
        'responder',
        `responder must be one of ${RESPONDERS.join(', ')}`,
      );
    }
    const model = validateModel(responder, input.model);
    const systemPrompt = validateSystemPrompt(responder, input.systemPrompt);
    const settings = validateSettings(responder, input.settings);
    const connectorId = await this.validateConnector(input.companyId, responder, input.connectorId);
    return { name, responder, connectorId, model, systemPrompt, settings };
  }

  private async validateConnector(
    companyId: string,
    responder: ResponderKind,
    connectorId: string | null,
  ): Promise<string | null> {
    if (responder === 'builtin') {
      if (connectorId) {
        throw new InvalidDigitalEmployeeError(
          'connector_not_allowed',
          'connector_id',
          'a builtin digital employee uses no connector',
        );
      }
      return null;
    }
    if (!connectorId) {
      throw new InvalidDigitalEmployeeError(
        'connector_required',
        'connector_id',
        `a ${responder} digital employee needs a connector`,
      );
    }
    const connector = await this.connectors.find(companyId, connectorId);
    if (!connector) throw new ConnectorNotFoundForDigitalEmployeeError();
    if (connector.type !== responder) throw new ConnectorTypeMismatchError(responder, connector.type);
    return connectorId;
  }
}

/** The fields of `current` a digital employee with responder `next` can still use (others become null/absent). */
function keepApplicable(
  current: DigitalEmployee,
  next: string,
): Pick<DigitalEmployee, 'connectorId' | 'model' | 'systemPrompt' | 'settings'> {
  const settings = { ...current.settings };
  const dropped = isResponderKind(next) ? SETTINGS_REFUSED_BY[next] : [];
  for (const key of dropped) delete settings[key];
  return {
    connectorId: next === 'builtin' ? null : current.connectorId,
    model: next === 'openai' ? current.model : null,
    systemPrompt: next === 'openai' ? current.systemPrompt : null,
    settings,
  };
}

function validateModel(responder: ResponderKind, model: string | null): string | null {
  const value = typeof model === 'string' ? model.trim() : model;
  if (responder !== 'openai') {
    if (value)
      throw new InvalidDigitalEmployeeError(
        'invalid_model',
        'model',
        'only an openai digital employee has a model',
      );
    return null;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > MODEL_MAX) {
    throw new InvalidDigitalEmployeeError(
      'invalid_model',
      'model',
      `an openai digital employee needs a model name of 1 to ${MODEL_MAX} characters`,
    );
  }
  return value;
}

function validateSystemPrompt(responder: ResponderKind, prompt: string | null): string | null {
  if (prompt === null || prompt === undefined || prompt === '') return null;
  if (responder !== 'openai') {
    throw new InvalidDigitalEmployeeError(
      'invalid_system_prompt',
      'system_prompt',
      'only an openai digital employee has a system prompt',
    );
  }
  if (typeof prompt !== 'string' || prompt.length > SYSTEM_PROMPT_MAX) {
    throw new InvalidDigitalEmployeeError(
      'invalid_system_prompt',
      'system_prompt',
      `system_prompt must be at most ${SYSTEM_PROMPT_MAX} characters`,
    );
  }
  return prompt;
}

async function findRow(db: Db, companyId: string, id: string): Promise<Row | undefined> {
  return db
    .selectFrom('digital_employees')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

async function findDefaultRow(db: Db, companyId: string): Promise<Row | undefined> {
  return db
    .selectFrom('digital_employees')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('is_default', '=', 1)
    .executeTakeFirst();
}

async function clearDefault(db: Db, companyId: string): Promise<void> {
  await db
    .updateTable('digital_employees')
    .set({ is_default: 0 })
    .where('company_id', '=', companyId)
    .where('is_default', '=', 1)
    .execute();
}

/** The stored row: the wire shape with its settings as JSON text and the default flag as 0/1. */
function toRow(e: DigitalEmployee): Row {
  return {
    ...digitalEmployeeToJson(e),
    settings: JSON.stringify(e.settings),
    is_default: e.isDefault ? 1 : 0,
  };
}

function fromRow(row: Row): DigitalEmployee {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    responder: row.responder as ResponderKind,
    connectorId: row.connector_id,
    model: row.model,
    systemPrompt: row.system_prompt,
    settings: JSON.parse(row.settings) as DigitalEmployeeSettings,
    isDefault: toBool(row.is_default),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The wire shape (snake_case, as routes and the CLI print it). Holds no secret: connectors keep their keys. */
export function digitalEmployeeToJson(e: DigitalEmployee): DigitalEmployeeView {
  return {
    id: e.id,
    company_id: e.companyId,
    name: e.name,
    responder: e.responder,
    connector_id: e.connectorId,
    model: e.model,
    system_prompt: e.systemPrompt,
    settings: e.settings,
    is_default: e.isDefault,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}
