import {
  acceptsEnvelope,
  choicesOf,
  isReceivedSnapshot,
  type MessageFeedback,
  type OfferedChoice,
  readEnvelope,
  textOf,
} from '@parley/webchat-protocol';
import type { Attachment as AttachmentUpload } from './uploads.ts';
import type { Block, ErrorBlock, MessageAuthor, MessageRole, MessageSnapshot } from './wire.ts';

/**
 * Where a message stands. Server states: `partial` (streaming) and `complete`. Local states of the visitor's own
 * sends: `pending` (queued or in flight), `sent` (the server acknowledged it, its broadcast has not arrived yet) and
 * `failed` (given up; `retry` sends it again with the same `client_message_id`).
 */
export type ChatMessageStatus = 'pending' | 'sent' | 'failed' | 'partial' | 'complete';

/** One message as the SDK presents it: immutable, replaced by a new object on every change. */
export interface ChatMessage {
  /** Stable key for rendering: the `client_message_id` of a visitor's message, otherwise the server id. */
  readonly key: string;
  /** Server id; `null` until the server has stored a visitor's message. */
  readonly id: string | null;
  readonly conversationId: string;
  readonly role: MessageRole;
  readonly author: MessageAuthor | null;
  readonly status: ChatMessageStatus;
  readonly blocks: readonly Block[];
  /**
   * The text: markdown blocks joined by blank lines, and a postback's label. Quick replies and cards are in
   * `blocks` (types `quick_replies`, `card`); see {@link Transcript.openOffer} for which choices are answerable.
   */
  readonly text: string;
  /** True while the snapshot shows only a typing indicator (a typing block and no text yet). */
  readonly typing: boolean;
  /** The error block of a message that ended without (all of) its content. */
  readonly error: { code: string; message: string } | null;
  readonly clientMessageId: string | null;
  /** Place in the conversation (from 1) once the server stored it; `null` for a send not stored yet. */
  readonly position: number | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Why a send failed (status `failed`). */
  readonly sendError: { code: string; message: string } | null;
  /** The visitor's rating of this message (digital-employee and agent messages), once given. */
  readonly feedback: MessageFeedback | null;
}

/**
 * What applying one envelope or snapshot did; anything but added/updated/completed left the transcript unchanged.
 * `added` is a message the transcript did not hold (it may already be complete); `completed` is a known message
 * (including the visitor's own pending send) reaching its final state.
 */
export type ApplyOutcome =
  | 'added'
  | 'updated'
  | 'completed'
  | 'stale'
  | 'after-complete'
  | 'unknown-version'
  | 'unknown-operation'
  | 'invalid'
  | 'other-conversation';

export interface ApplyResult {
  outcome: ApplyOutcome;
  message?: ChatMessage;
}

interface Entry {
  message: ChatMessage;
  /** Last envelope sequence applied; 0 when the state came from REST (which carries no sequence). */
  sequence: number;
  /** Order of local sends, used while a message has no server `created_at` yet. */
  localOrder: number;
}

/**
 * The SDK's copy of one conversation's messages (its transcript as the visitor sees it; the server's message store
 * is the record) and the client rules of the spec ("Events"): an envelope whose sequence is not
 * above the last one seen for its message is dropped (rule 1), an unknown `version` is ignored (rule 2), a typing
 * block shows as an indicator (rule 3), and every snapshot replaces the previous view of its message. All roles
 * share one order: the server's `position` (then `created_at` and `id` for a server that sends none; never client
 * clocks); the visitor's not-yet-stored sends follow in the order they were made.
 *
 * @example
 * ```ts
 * const transcript = new Transcript(conversationId);
 * transcript.applyEnvelope(publication.data); // { outcome: 'added', message }
 * transcript.list().map((m) => m.text);
 * ```
 */
export class Transcript {
  readonly conversationId: string;
  private readonly byKey = new Map<string, Entry>();
  /** Server id → key, so a visitor's message keeps its client key after the server assigned an id. */
  private readonly keyById = new Map<string, string>();
  private ordered: ChatMessage[] | null = null;
  private localCounter = 0;

  constructor(conversationId: string) {
    this.conversationId = conversationId;
  }

  /** Applies one publication from the conversation channel. Accepts `unknown` because it comes off the wire. */
  applyEnvelope(data: unknown): ApplyResult {
    const { envelope, refusal } = readEnvelope(data);
    if (refusal) return { outcome: refusal };
    const snapshot = envelope.message_snapshot;
    if (snapshot.conversation_id !== this.conversationId) return { outcome: 'other-conversation' };
    // `complete` carries the final state; treat its snapshot as complete even if a server forgot to say so.
    const finalSnapshot: MessageSnapshot =
      envelope.operation === 'complete' ? { ...snapshot, status: 'complete' } : snapshot;

    const entry = this.entryFor(snapshot);
    if (entry) {
      if (!acceptsEnvelope(entry.sequence, envelope)) return { outcome: 'stale' };
      if (entry.message.status === 'complete' && finalSnapshot.status !== 'complete') {
        return { outcome: 'after-complete' };
      }
      // A REST snapshot has no sequence; an older envelope (e.g. replayed by recovery) must not roll it back.
      const fromRest = entry.sequence === 0 && isServerState(entry.message.status);
      if (fromRest && finalSnapshot.updated_at < entry.message.updatedAt) return { outcome: 'stale' };
    }
    return this.put(finalSnapshot, envelope.sequence, entry);
  }

  /**
   * Merges a snapshot read over REST (initial load, older pages, reconciliation after an unrecoverable reconnect).
   * It never rolls a message back: a partial snapshot does not replace a complete one, an older one not a newer one.
   */
  applySnapshot(snapshot: MessageSnapshot): ApplyResult {
    if (!isReceivedSnapshot(snapshot)) return { outcome: 'invalid' };
    if (snapshot.conversation_id !== this.conversationId) return { outcome: 'other-conversation' };
    const entry = this.entryFor(snapshot);
    if (entry && isServerState(entry.message.status)) {
      if (entry.message.status === 'complete' && snapshot.status !== 'complete')
        return { outcome: 'after-complete' };
      if (snapshot.updated_at < entry.message.updatedAt) return { outcome: 'stale' };
      if (snapshot.updated_at === entry.message.updatedAt && snapshot.status === entry.message.status) {
        return { outcome: 'stale' };
      }
    }
    return this.put(snapshot, entry?.sequence ?? 0, entry);
  }

  /**
   * Adds the visitor's own message at once, before the server has it: `text` as markdown followed by its
   * attachments, or, with `choice`, a postback naming that offered choice (its label is the text shown until the
   * server's copy arrives).
   */
  addPending(
    clientMessageId: string,
    text: string,
    attachments: readonly AttachmentUpload[] = [],
    now = new Date().toISOString(),
    choice?: OfferedChoice,
  ): ChatMessage {
    const message: ChatMessage = {
      key: clientMessageId,
      id: null,
      conversationId: this.conversationId,
      role: 'user',
      author: null,
      status: 'pending',
      blocks: choice
        ? [{ id: 'local', type: 'postback', option_id: choice.id, label: choice.label }]
        : [
            ...(text ? [{ id: 'local', type: 'markdown' as const, content: text }] : []),
            ...attachments.map((a, i) => ({
              id: `local-${i}`,
              type: 'attachment' as const,
              attachment_id: a.id,
              name: a.name,
              content_type: a.content_type,
              size: a.size,
              url: a.url,
            })),
          ],
      text,
      typing: false,
      error: null,
      clientMessageId,
      position: null,
      createdAt: now,
      updatedAt: now,
      sendError: null,
      feedback: null,
    };
    this.byKey.set(clientMessageId, { message, sequence: 0, localOrder: ++this.localCounter });
    this.ordered = null;
    return message;
  }

  /** Moves a local send to `pending`, `sent` or `failed`; a message the server already broadcast is left alone. */
  setSendStatus(
    clientMessageId: string,
    status: 'pending' | 'sent' | 'failed',
    sendError: { code: string; message: string } | null = null,
  ): ChatMessage | undefined {
    const entry = this.byKey.get(clientMessageId);
    if (!entry || isServerState(entry.message.status)) return undefined;
    entry.message = { ...entry.message, status, sendError };
    this.ordered = null;
    return entry.message;
  }

  /** Records the visitor's rating of a message (after the server stored it). */
  setFeedback(key: string, feedback: MessageFeedback): ChatMessage | undefined {
    const entry = this.byKey.get(key);
    if (!entry) return undefined;
    entry.message = { ...entry.message, feedback };
    this.ordered = null;
    return entry.message;
  }

  get(key: string): ChatMessage | undefined {
    return this.byKey.get(key)?.message;
  }

  getById(id: string): ChatMessage | undefined {
    const key = this.keyById.get(id);
    return key === undefined ? undefined : this.byKey.get(key)?.message;
  }

  /** All messages in display order. */
  list(): readonly ChatMessage[] {
    if (!this.ordered) this.ordered = [...this.byKey.values()].sort(compareEntries).map((e) => e.message);
    return this.ordered;
  }

  /** Local sends the server has not acknowledged yet, oldest first (the outbox). */
  unsent(): ChatMessage[] {
    return this.list().filter((m) => m.status === 'pending');
  }

  /** The message whose choices the visitor may answer now: {@link openOfferIn} of this transcript's list. */
  openOffer(): ChatMessage | undefined {
    return openOfferIn(this.list());
  }

  /** Messages currently showing only a typing indicator. */
  typing(): ChatMessage[] {
    return this.list().filter((m) => m.typing);
  }

  /** The oldest message the server knows, the cursor for loading earlier pages. */
  oldestStored(): ChatMessage | undefined {
    return this.list().find((m) => m.id !== null);
  }

  get size(): number {
    return this.byKey.size;
  }

  private entryFor(snapshot: MessageSnapshot): Entry | undefined {
    const key = this.keyById.get(snapshot.id) ?? snapshot.client_message_id ?? undefined;
    return key === undefined ? undefined : this.byKey.get(key);
  }

  private put(snapshot: MessageSnapshot, sequence: number, entry: Entry | undefined): ApplyResult {
    const key = entry?.message.key ?? snapshot.client_message_id ?? snapshot.id;
    // Envelopes carry no rating (REST reads do): a live update keeps the one already known.
    const message = toChatMessage(key, snapshot, entry?.message.feedback ?? null);
    this.byKey.set(key, { message, sequence, localOrder: entry?.localOrder ?? 0 });
    this.keyById.set(snapshot.id, key);
    this.ordered = null;
    if (!entry) return { outcome: 'added', message };
    if (message.status === 'complete' && entry.message.status !== 'complete')
      return { outcome: 'completed', message };
    return { outcome: 'updated', message };
  }
}

/**
 * The message whose choices the visitor may answer now (docs/design.md "Interactive blocks"): the latest complete
 * digital-employee or agent message of `messages` (in conversation order), when it offers any choice and no visitor
 * message came after it. Quick replies are shown only on this one; a postback naming another message's choice is
 * refused by the server.
 */
export function openOfferIn(messages: readonly ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return undefined;
    if (m.role === 'digital_employee' || m.role === 'agent')
      return m.status === 'complete' && choicesOf(m.blocks).length > 0 ? m : undefined;
  }
  return undefined;
}

function toChatMessage(key: string, snapshot: MessageSnapshot, known: MessageFeedback | null): ChatMessage {
  const text = textOf(snapshot);
  const errorBlock = snapshot.blocks.find((b) => b.type === 'error') as ErrorBlock | undefined;
  const hasTyping = snapshot.blocks.some(
    (b) => b.type === 'typing' && (b as { typing?: unknown }).typing === true,
  );
  return {
    key,
    id: snapshot.id,
    conversationId: snapshot.conversation_id,
    role: snapshot.role,
    author: snapshot.author ?? null,
    status: snapshot.status === 'complete' ? 'complete' : 'partial',
    blocks: snapshot.blocks,
    text,
    typing: snapshot.status === 'partial' && hasTyping && text.length === 0,
    error: errorBlock ? { code: String(errorBlock.code), message: String(errorBlock.message) } : null,
    clientMessageId: snapshot.client_message_id ?? null,
    position: typeof snapshot.position === 'number' ? snapshot.position : null,
    createdAt: snapshot.created_at,
    updatedAt: snapshot.updated_at,
    sendError: null,
    feedback: snapshot.feedback ?? known,
  };
}

function isServerState(status: ChatMessageStatus): boolean {
  return status === 'partial' || status === 'complete';
}

/** Stored messages by position (else created_at, id); local sends without a server id after them, in send order. */
function compareEntries(a: Entry, b: Entry): number {
  const aLocal = a.message.id === null;
  const bLocal = b.message.id === null;
  if (aLocal !== bLocal) return aLocal ? 1 : -1;
  if (aLocal) return a.localOrder - b.localOrder;
  if (a.message.position !== null && b.message.position !== null)
    return a.message.position - b.message.position;
  return (
    compareStrings(a.message.createdAt, b.message.createdAt) || compareStrings(a.message.id!, b.message.id!)
  );
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
