import type { Kysely } from 'kysely';
import { NotFoundError } from '../errors/app-error.ts';
import type { Database } from '../storage/schema.ts';
import { isUuid } from './companies.service.ts';

/**
 * Fails with `company_not_found` unless the company exists: for services that attach something to a company by
 * id. Company ids are UUIDs, so a malformed id names no company and is answered without a query.
 */
export async function requireCompany(db: Kysely<Database>, companyId: string): Promise<void> {
  const found =
    isUuid(companyId) &&
    (await db.selectFrom('companies').select('id').where('id', '=', companyId).executeTakeFirst());
  if (!found) throw new NotFoundError('company_not_found', 'No such company.');
}
