/**
 * Spreads bursts of heavy tasks over event-loop turns: at most `perTurn` tasks start in one turn; the others wait
 * for the next turns (`setImmediate`, which runs after the current turn's I/O and before the next turn's timers).
 *
 * Why: with SQLite (better-sqlite3 is synchronous) all of a visitor publication's work — validate → store → broadcast
 * → reply start — is CPU on the one thread (its writes wait only for the turn's group commit,
 * packages/server/src/storage/group-commit.ts). A thousand publications arriving together (a load test, every
 * widget of a busy page reconnecting after a deploy) would hold the loop for most of a second, and every reply
 * already streaming would stall that long, because the timers of its word-by-word stream and its coalescing flush
 * cannot run. Capping the work per turn lets them run between the slices: the burst takes as long as before, the
 * streams under way keep flowing. An idle server starts each task at once.
 */
export class TurnTaker {
  private readonly waiting: Array<() => void> = [];
  private startedThisTurn = 0;
  private turnScheduled = false;

  constructor(private readonly perTurn: number) {
    if (!(perTurn >= 1)) throw new RangeError('perTurn must be at least 1');
  }

  /** Runs `task` in this turn if it still has room, otherwise in the first turn that has. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.scheduleNextTurn();
    if (this.waiting.length === 0 && this.startedThisTurn < this.perTurn) {
      this.startedThisTurn++;
      return task();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve)).then(task);
  }

  /** Tasks waiting for a later turn (for tests and metrics). */
  get backlog(): number {
    return this.waiting.length;
  }

  private scheduleNextTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.startTurn());
  }

  private startTurn(): void {
    this.turnScheduled = false;
    const starting = this.waiting.splice(0, this.perTurn);
    this.startedThisTurn = starting.length;
    for (const start of starting) start();
    // A turn that started tasks needs a successor, if only to reset the count for tasks arriving later.
    if (starting.length > 0) this.scheduleNextTurn();
  }
}
