/**
 * Spreads bursts of heavy tasks over event-loop turns: at most `perTurn` tasks start in one turn; the others wait
 * for the next turns (`setImmediate`, which runs after the current turn's I/O and before the next turn's timers).
 *
 * Why: with SQLite (better-sqlite3 is synchronous) all of a visitor publication's work — validate → store → broadcast
 * → reply start — is CPU on the one thread (its writes wait only for the turn's group commit,
 * packages/server/src/storage/group-commit.ts). A thousand publications arriving together (a load test, every
 * widget of a busy page reconnecting after a deploy) would hold the loop for most of a second, and every reply
 * already streaming would stall that long, because the timers of its word-by-word stream and its coalescing flush
 * cannot run. Capping the work per turn lets them run between the slices. An idle server starts each task at once.
 *
 * With a `budget`, the count is not fixed but follows how long the turns take: each turn that started tasks is timed
 * to the start of the next (the whole event-loop iteration: the tasks, the streams' timers, the sockets' I/O), and
 * the next count is scaled by budget ÷ that time — at most doubled or halved at once, between 1 and `max`. A burst
 * on an idle node thus starts many tasks per turn (its first replies begin sooner), and as the replies already
 * streaming take more of each iteration, fewer, so the iteration stays near the budget and their envelopes keep
 * their pace. A fixed count was either too many for a loaded node or too few for an idle one.
 */
export class TurnTaker {
  private readonly waiting: Array<() => void> = [];
  private startedThisTurn = 0;
  private turnScheduled = false;
  /** When the current turn began, if it started tasks (its length is known when the next one begins). */
  private turnBeganAt: number | undefined;
  /** The count as scaled (fractional, so that small counts can grow by less than one per turn). */
  private allowance: number;

  constructor(
    perTurn: number,
    private readonly budget?: {
      /** The event-loop iteration aimed at while tasks wait. */
      ms: number;
      /** Most tasks started in one turn. */
      max: number;
      /** The clock (tests inject one). */
      now?: () => number;
    },
  ) {
    if (!(perTurn >= 1)) throw new RangeError('perTurn must be at least 1');
    if (budget && !(budget.ms > 0 && budget.max >= perTurn))
      throw new RangeError('a budget needs ms > 0 and max >= perTurn');
    this.allowance = perTurn;
  }

  /** How many tasks a turn may start now. */
  get limit(): number {
    return Math.max(1, Math.floor(this.allowance));
  }

  /** Runs `task` in this turn if it still has room, otherwise in the first turn that has. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.scheduleNextTurn();
    if (this.waiting.length === 0 && this.startedThisTurn < this.limit) {
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
    this.adapt();
    const starting = this.waiting.splice(0, this.limit);
    this.startedThisTurn = starting.length;
    for (const start of starting) start();
    // A turn that started tasks needs a successor, if only to reset the count for tasks arriving later.
    if (starting.length > 0) this.scheduleNextTurn();
  }

  /** Scales the count by how long the turn just ended took against the budget (see the class comment). */
  private adapt(): void {
    if (!this.budget) return;
    const now = (this.budget.now ?? performance.now.bind(performance))();
    const began = this.turnBeganAt;
    // Timed only while tasks wait: then the count is what limits the turn, and the next one follows at once.
    this.turnBeganAt = this.waiting.length > 0 ? now : undefined;
    if (began === undefined) return;
    const ratio = Math.min(2, Math.max(0.5, this.budget.ms / Math.max(now - began, 0.001)));
    this.allowance = Math.min(this.budget.max, Math.max(1, this.allowance * ratio));
  }
}
