/** Something with queued outgoing frames that must be written once per event-loop turn. */
export interface OutputSink {
  flushOutput(): void;
}

/**
 * Coalesces writes: frames queued during one event-loop turn go out as one WebSocket frame per connection
 * (docs/protocol.md "Frames"), with one `setImmediate` for all connections.
 */
export class OutputScheduler {
  private dirty: OutputSink[] = [];
  private scheduled = false;

  mark(sink: OutputSink): void {
    this.dirty.push(sink);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  readonly flush = (): void => {
    this.scheduled = false;
    const sinks = this.dirty;
    this.dirty = [];
    for (const sink of sinks) sink.flushOutput();
  };
}
