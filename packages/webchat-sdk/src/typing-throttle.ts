/** How often the SDK publishes "the visitor is typing" while the visitor keeps typing (docs/design.md "VisitorTyping"). */
export const TYPING_INTERVAL_MS = 3000;

/**
 * Lets one typing publication through every `intervalMs`, however often it is asked: the server relays at most one
 * per 2 s anyway, so sending more would only cost the visitor's bandwidth.
 */
export class TypingThrottle {
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs = TYPING_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a publication may go now; when it may, the next one waits a full interval. */
  take(): boolean {
    const at = this.now();
    if (at - this.lastAt < this.intervalMs) return false;
    this.lastAt = at;
    return true;
  }
}
