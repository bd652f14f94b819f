import { ResponderAbortedError, ResponderTimeoutError } from './responder-errors.ts';

/**
 * An abort signal for one outbound call that fires when the caller aborts or when the bot stays silent for longer
 * than `timeoutMs`. `touch()` restarts the silence timer whenever a sign of life arrives (headers, a chunk), so a
 * long but steadily streaming reply is never cut off.
 */
export class SilenceDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private readonly onCallerAbort = () => this.controller.abort();

  constructor(
    private readonly caller: AbortSignal,
    private readonly timeoutMs: number,
  ) {
    if (caller.aborted) this.controller.abort();
    else caller.addEventListener('abort', this.onCallerAbort, { once: true });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    if (this.controller.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  /** The typed error for a failure while this deadline ran, or undefined when neither the caller nor the timer fired. */
  reason(): ResponderAbortedError | ResponderTimeoutError | undefined {
    if (this.caller.aborted) return new ResponderAbortedError();
    if (this.timedOut) return new ResponderTimeoutError(this.timeoutMs);
    return undefined;
  }

  /** Throws the typed abort/timeout error when one of them already fired. */
  throwIfStopped(): void {
    const reason = this.reason();
    if (reason) throw reason;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCallerAbort);
  }
}

/**
 * The inactivity limit handed to the outbound client: a little longer than ours, so our deadline fires first and
 * reports a typed `responder_timeout`, while the client's own limit stays a backstop (when it cuts a body off
 * mid-stream, the reader only sees a reset connection).
 */
export const backstopFor = (timeoutMs: number): number => timeoutMs + 1000;
