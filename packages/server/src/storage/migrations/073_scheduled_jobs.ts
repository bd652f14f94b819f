import type { Kysely } from 'kysely';
import { ID } from '../columns.ts';

/**
 * Scheduled jobs (jobs/scheduler.ts): one row per job, claimed by one node at a time for a run (a lease renewed
 * between batches) and naming when the next run is due, so a cluster runs each job once per interval, not once per
 * node.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('scheduled_jobs')
    .addColumn('name', ID, (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('lease_until_ms', 'bigint', (c) => c.notNull())
    .addColumn('next_run_ms', 'bigint', (c) => c.notNull())
    .addColumn('last_run_ms', 'bigint')
    .addColumn('last_outcome', 'text')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('scheduled_jobs').execute();
}
