/** Something the wheel calls back; `wheelSlot` belongs to the wheel (0 = not scheduled). */
export interface WheelTask {
  wheelSlot: number;
  onTimer(now: number): void;
}

/**
 * One shared interval for every connection's deadlines (ping, pong, stale, expiry, presence refresh) instead of a
 * timer per connection. Tasks are bucketed by slot; rescheduling earlier leaves the old entry behind, and it is
 * skipped when its slot comes because the task's `wheelSlot` no longer matches (lazy cancellation).
 */
export class TimerWheel {
  private readonly slots = new Map<number, WheelTask[]>();
  private cursor: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly resolutionMs: number) {
    this.cursor = Math.floor(Date.now() / resolutionMs);
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.cursor = Math.floor(Date.now() / this.resolutionMs);
    this.timer = setInterval(() => this.tick(Date.now()), this.resolutionMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.slots.clear();
  }

  /** Calls `task.onTimer` at or soon after `at`; an earlier pending call is kept (the task reschedules itself). */
  schedule(task: WheelTask, at: number): void {
    const slot = Math.max(Math.ceil(at / this.resolutionMs), this.cursor + 1);
    if (task.wheelSlot !== 0 && task.wheelSlot > this.cursor && task.wheelSlot <= slot) return;
    task.wheelSlot = slot;
    const bucket = this.slots.get(slot);
    if (bucket === undefined) this.slots.set(slot, [task]);
    else bucket.push(task);
  }

  cancel(task: WheelTask): void {
    task.wheelSlot = 0;
  }

  tick(now: number): void {
    const target = Math.floor(now / this.resolutionMs);
    for (let slot = this.cursor + 1; slot <= target; slot++) {
      this.cursor = slot;
      const bucket = this.slots.get(slot);
      if (bucket === undefined) continue;
      this.slots.delete(slot);
      for (const task of bucket) {
        if (task.wheelSlot !== slot) continue;
        task.wheelSlot = 0;
        task.onTimer(now);
      }
    }
    this.cursor = Math.max(this.cursor, target);
  }
}
