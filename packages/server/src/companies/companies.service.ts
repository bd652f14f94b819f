import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { BadRequestError, NotFoundError } from '../errors/app-error.ts';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';
import type { CompaniesTable } from './companies.tables.ts';

export interface Company {
  id: string;
  name: string;
  allowedOrigins: string[];
  createdAt: string;
}

/**
 * Work other capabilities do inside the transaction that creates a company (e.g. the webchat creates the
 * company's default digital employee), so a company never exists half set up.
 */
export type CompanyCreatedHook = (trx: Transaction<Database>, company: Company) => Promise<void>;

export const COMPANY_NAME_MAX = 200;

export class CompaniesService {
  private readonly onCreated: CompanyCreatedHook[] = [];

  constructor(private readonly db: Kysely<Database>) {}

  addCreatedHook(hook: CompanyCreatedHook): void {
    this.onCreated.push(hook);
  }

  async create(name: string): Promise<Company> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > COMPANY_NAME_MAX) {
      throw new BadRequestError('invalid_name', `A company name is 1 to ${COMPANY_NAME_MAX} characters.`);
    }
    const company: Company = { id: randomUUID(), name: trimmed, allowedOrigins: [], createdAt: now() };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('companies')
        .values({ id: company.id, name: company.name, allowed_origins: '[]', created_at: company.createdAt })
        .execute();
      for (const hook of this.onCreated) await hook(trx, company);
    });
    return company;
  }

  async find(id: string): Promise<Company | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await this.db.selectFrom('companies').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toCompany(row);
  }

  async get(id: string): Promise<Company> {
    const company = await this.find(id);
    if (!company) throw new NotFoundError('company_not_found', 'No such company.');
    return company;
  }

  async list(): Promise<Company[]> {
    const rows = await this.db.selectFrom('companies').selectAll().orderBy('created_at').execute();
    return rows.map(toCompany);
  }

  async setAllowedOrigins(id: string, origins: string[]): Promise<Company> {
    const row =
      isUuid(id) &&
      (await this.db
        .updateTable('companies')
        .set({ allowed_origins: JSON.stringify(origins) })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst());
    if (!row) throw new NotFoundError('company_not_found', 'No such company.');
    return toCompany(row);
  }
}

const toCompany = (row: CompaniesTable): Company => ({
  id: row.id,
  name: row.name,
  allowedOrigins: JSON.parse(row.allowed_origins),
  createdAt: row.created_at,
});

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_RE.test(value);
