import type { Kysely } from 'kysely';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';

/**
 * Takes the company's row lock for the rest of the transaction: the transactions that change what a company's
 * digital employees and channels point at (which one is the default, which one a channel routes to, deleting one)
 * each take it first, so on PostgreSQL (READ COMMITTED) they run one after another per company and each decides on
 * what the previous one committed — never on a check another transaction has since made false. `NO KEY UPDATE`: it
 * does not hold up inserts that merely reference the company (foreign keys take KEY SHARE). SQLite needs no lock:
 * its one connection runs one transaction at a time.
 */
export async function lockCompany(trx: Kysely<Database>, dialect: Dialect, companyId: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await trx.selectFrom('companies').select('id').where('id', '=', companyId).forNoKeyUpdate().execute();
}
