import type { ReadMarks } from '@parley/webchat-protocol';
import type { Emit } from './events.ts';
import type { RestClient } from './rest-client.ts';
import type { ChatMessage, Transcript } from './transcript.ts';

/**
 * Read state of the open conversation (docs/design.md "Feedback, CSAT and read state"): the positions up to which
 * the visitor and the agents have read, and the visitor's unread count. Marks only move forward, so a late event
 * never moves one back; `unread` fires when the count changes, `seen` when the agents' mark moves.
 */
export class ReadState {
  private marks: ReadMarks = { visitor: 0, agent: 0 };
  private unread = 0;

  constructor(
    private readonly rest: Pick<RestClient, 'markRead'>,
    private readonly emit: Emit,
  ) {}

  /** Digital-employee, agent and system messages the visitor has not read yet. */
  get unreadCount(): number {
    return this.unread;
  }

  /** The visitor's mark: the position up to which they have read (0: nothing yet). */
  get visitorPosition(): number {
    return this.marks.visitor;
  }

  /** The agents' mark: the position up to which an agent has read (0: nothing yet). */
  get agentPosition(): number {
    return this.marks.agent;
  }

  /** Whether an agent has read this visitor message ("Seen"). */
  isSeen(message: ChatMessage): boolean {
    return message.role === 'user' && message.position !== null && message.position <= this.marks.agent;
  }

  /** Another conversation opened: its marks come with its subscription. */
  reset(): void {
    this.marks = { visitor: 0, agent: 0 };
  }

  /** Moves the marks forward (the subscribe result's `read_marks`, a live `read` event). */
  advance(
    marks: Partial<ReadMarks>,
    messages: readonly ChatMessage[],
    messageId: string | null = null,
  ): void {
    const agentMoved = (marks.agent ?? 0) > this.marks.agent;
    this.marks = {
      visitor: Math.max(this.marks.visitor, marks.visitor ?? 0),
      agent: Math.max(this.marks.agent, marks.agent ?? 0),
    };
    this.recount(messages);
    if (agentMoved) {
      const at = messageId ?? messages.find((m) => m.position === this.marks.agent)?.id ?? null;
      this.emit('seen', { position: this.marks.agent, messageId: at });
    }
  }

  /**
   * Unread = the digital-employee, agent and system messages after the visitor's mark; the visitor's own messages
   * move the mark (as the server does when it stores them). Fires `unread` when the number changed.
   */
  recount(messages: readonly ChatMessage[]): void {
    let mark = this.marks.visitor;
    for (const m of messages)
      if (m.role === 'user' && m.position !== null && m.position > mark) mark = m.position;
    this.marks = { ...this.marks, visitor: mark };
    const count = messages.filter(
      (m) => m.role !== 'user' && m.status === 'complete' && m.position !== null && m.position > mark,
    ).length;
    if (count === this.unread) return;
    this.unread = count;
    this.emit('unread', { count });
  }

  /** Marks `transcript` read up to `messageId` (default: its latest stored message); never moves back. */
  async markRead(transcript: Transcript, messageId?: string): Promise<void> {
    const target = messageId
      ? transcript.getById(messageId)
      : [...transcript.list()].reverse().find((m) => m.id !== null && m.position !== null);
    if (!target?.id || target.position === null || target.position <= this.marks.visitor) return;
    this.marks = { ...this.marks, visitor: target.position };
    this.recount(transcript.list());
    await this.rest.markRead(transcript.conversationId, target.id);
  }
}
