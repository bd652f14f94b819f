import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { BadRequestError, NotFoundError } from '../errors/app-error.ts';
import { now } from '../storage/columns.ts';
import { compileOnce } from '../storage/compiled.ts';
import type { Database } from '../storage/schema.ts';
import type { CompaniesTable } from './companies.tables.ts';
import { CompanyCache } from './company-cache.ts';

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

/** How many ids `exists` remembers before it starts over. */
const KNOWN_COMPANIES = 10_000;

export class CompaniesService {
  private readonly onCreated: CompanyCreatedHook[] = [];
  /** Ids found to exist. Companies are never deleted, so a yes stays true; a no is asked again each time. */
  private readonly known = new Set<string>();

  /** Read on every SDK request (its X-Company header), so compiled once (storage/compiled.ts). */
  private readonly byId;

  constructor(
    private readonly db: Kysely<Database>,
    /**
     * What this node keeps of companies and their digital employees (companies/company-cache.ts); by default a
     * single node's, without a time bound beyond a few seconds.
     */
    readonly cache: CompanyCache = new CompanyCache({ capacity: 10_000, ttlMs: 5_000, mode: 'single' }),
  ) {
    this.byId = compileOnce<{ id: string }>((arg) =>
      db.selectFrom('companies').selectAll().where('id', '=', arg('id')),
    );
  }

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

  /** The company, from this node's cache when it holds it (every SDK request reads it: its X-Company header). */
  async find(id: string): Promise<Company | undefined> {
    if (!isUuid(id)) return undefined;
    return this.cache.get(id, 'company', async () => {
      const { rows } = await this.db.executeQuery<CompaniesTable>(this.byId({ id }));
      return rows[0] && toCompany(rows[0]);
    });
  }

  /**
   * Whether a company exists: what a signed token naming a company is checked against before anything is written
   * for it (docs/design.md "Tokens naming a company"), cheap once an id was seen.
   */
  async exists(id: string): Promise<boolean> {
    if (this.known.has(id)) return true;
    if (!isUuid(id)) return false;
    const row = await this.db.selectFrom('companies').select('id').where('id', '=', id).executeTakeFirst();
    if (!row) return false;
    if (this.known.size >= KNOWN_COMPANIES) this.known.clear();
    this.known.add(id);
    return true;
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
    await this.cache.invalidate(id);
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
