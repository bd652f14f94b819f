/** Scheduled jobs (migration 073; jobs/scheduler.ts): one row per job, shared by every node. */
export interface ScheduledJobsTable {
  /** The job's name (`attachments.sweep`). */
  name: string;
  /** The node running it now, while `lease_until_ms` is ahead; null between runs. */
  holder: string | null;
  /** Epoch ms the running node's claim lapses unless renewed (between batches); 0 between runs. */
  lease_until_ms: number;
  /** Epoch ms before which no node starts the job again. */
  next_run_ms: number;
  /** Epoch ms the last run ended, and how (`completed`, `failed`). */
  last_run_ms: number | null;
  last_outcome: string | null;
}

export interface JobsTables {
  scheduled_jobs: ScheduledJobsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends JobsTables {}
}
