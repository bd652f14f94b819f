import type { Migration } from 'kysely';
import * as m001 from './001_companies_and_audit.ts';

/**
 * Every migration, in order. Names sort lexically; ranges by capability keep parallel work from colliding:
 * 001–009 foundation/OAuth, 010–019 connectors, 020–039 webchat, 040–049 portal.
 */
export const migrations: Record<string, Migration> = {
  '001_companies_and_audit': m001,
};
