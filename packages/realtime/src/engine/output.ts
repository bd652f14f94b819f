/** Something with queued outgoing frames that must be written once per event-loop turn. */
export interface OutputSink {
  flushOutput(): void;
}

/**
 * Coalesces writes per event-loop turn, with one `setImmediate` for all connections (docs/protocol.md "Frames").
 * A connection with nothing queued writes its first push of a turn straight away (`claimDirectWrite`); what else it
 * gets in that turn is queued here and goes out as one more WebSocket frame when the turn ends. A fan-out then costs
 * one socket write per subscriber and nothing more: no queue entry, no second pass over the subscribers.
 */
export class OutputScheduler {
  private dirty: OutputSink[] = [];
  private scheduled = false;
  /** Advances at every end of turn; a session remembers the turn of its last direct write. */
  private turnNumber = 1;

  get turn(): number {
    return this.turnNumber;
  }

  mark(sink: OutputSink): void {
    this.dirty.push(sink);
    this.endTurnSoon();
  }

  /**
   * Whether a session whose last direct write was in `lastDirectTurn`, and that has nothing queued, may write now;
   * the caller then records `turn`. The end of this turn is scheduled so the next turn is told apart.
   */
  claimDirectWrite(lastDirectTurn: number): boolean {
    if (lastDirectTurn === this.turnNumber) return false;
    this.endTurnSoon();
    return true;
  }

  private endTurnSoon(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  readonly flush = (): void => {
    this.scheduled = false;
    this.turnNumber += 1;
    const sinks = this.dirty;
    this.dirty = [];
    for (const sink of sinks) sink.flushOutput();
  };
}
