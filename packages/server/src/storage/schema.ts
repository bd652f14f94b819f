import type { AuditTables } from '../audit/audit.tables.ts';
import type { CompaniesTables } from '../companies/companies.tables.ts';

/**
 * The whole database as Kysely sees it: each capability declares its own tables next to its code and is listed
 * here. Migrations in ./migrations create them for SQLite and PostgreSQL alike.
 */
export interface Database extends CompaniesTables, AuditTables {}
