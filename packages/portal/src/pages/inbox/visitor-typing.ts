/** How long "Visitor is typing…" stays after the last relayed typing event (the SDK sends one every 3 s). */
export const TYPING_SHOWN_MS = 5000;

/**
 * Which conversations' visitors are typing now (docs/routing.md "Live inbox"): each `visitor_typing` event of the
 * inbox channel marks its conversation for {@link TYPING_SHOWN_MS}; the visitor's message clears the mark at once.
 * `onChange` is told whenever a conversation starts or stops showing the indicator.
 */
export class VisitorTypingMarks {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly onChange: (conversationId: string, typing: boolean) => void) {}

  isTyping(conversationId: string): boolean {
    return this.timers.has(conversationId);
  }

  /** A typing event arrived: shown now, until {@link TYPING_SHOWN_MS} after the last one. */
  mark(conversationId: string): void {
    const was = this.timers.get(conversationId);
    clearTimeout(was);
    this.timers.set(
      conversationId,
      setTimeout(() => this.clear(conversationId), TYPING_SHOWN_MS),
    );
    if (!was) this.onChange(conversationId, true);
  }

  /** The visitor's message arrived (or the time ran out): no longer typing. */
  clear(conversationId: string): void {
    const timer = this.timers.get(conversationId);
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(conversationId);
    this.onChange(conversationId, false);
  }
}
