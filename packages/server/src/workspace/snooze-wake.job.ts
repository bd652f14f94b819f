import type { ScheduledJob } from '../jobs/scheduler.ts';
import type { WorkspaceService } from './workspace.service.ts';

/** Conversations woken per batch: small, so one run never holds the store for long (jobs/scheduler.ts). */
const BATCH = 50;

/** The audit actor of automatic reopening when a snooze ends. */
export const SNOOZE_ACTOR = { id: 'jobs:snooze-wake' };

/**
 * Reopens snoozed conversations whose `snoozed_until` has passed (docs/design.md "Agent workspace"), on one node of
 * the cluster at a time (jobs/scheduler.ts). `now` is the scheduler's clock, so tests drive it with their own.
 * Idempotent: each reopening re-checks that the conversation is still snoozed until then.
 */
export class SnoozeWakeJob implements ScheduledJob {
  readonly name = 'workspace.snooze-wake';

  constructor(
    private readonly workspace: Pick<WorkspaceService, 'dueSnoozes' | 'reopen'>,
    readonly intervalMs = 30_000,
  ) {}

  async runBatch(now: number): Promise<{ more: boolean }> {
    const at = new Date(now).toISOString();
    const due = await this.workspace.dueSnoozes(at, BATCH);
    for (const conversation of due) await this.workspace.reopen(conversation, SNOOZE_ACTOR, at);
    return { more: due.length === BATCH };
  }
}
