import { randomUUID } from 'node:crypto';
import {
  actionCallNoteText,
  type InboxNote,
  inboxChannelOf,
  NOTE_LIMITS,
  type NoteAuthorType,
  type NoteView,
} from '@parley/webchat-protocol';
import type { Logger } from '../../logging/logger.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import type { MessageSnapshot } from '../messages/message.ts';
import { textOf } from '../messages/message.ts';
import type { MessageStore, NoteKind } from '../messages/message-store.ts';
import { conversationNotFound, invalidNote } from '../webchat.errors.ts';

const NOTE_MAX_BYTES = NOTE_LIMITS.textBytes;
const NOTE_MAX_MENTIONS = NOTE_LIMITS.mentions;

/** Who writes a note: an agent (portal user or API client), a digital employee, or Parley itself. */
export interface NoteAuthor {
  type: NoteAuthorType;
  /** The portal user's id, `client:{client_id}`, the digital employee's id, or `system`. */
  id: string;
  name: string;
}

export interface NewNote {
  text: string;
  author: NoteAuthor;
  /** Portal users of the company the note is for (their ids). */
  mentions?: string[];
  /** Set when Parley writes the note for a purpose (a hand-over summary), so readers can find it again. */
  kind?: NoteKind;
}

export type { InboxNote, NoteView };

export interface NotesDeps {
  /** Which of `ids` are portal users of the company (composition: webchat.ts, over the users table). */
  companyUsers(companyId: string, ids: string[]): Promise<Set<string>>;
  conversations: Pick<ConversationsService, 'findInCompany'>;
  store: Pick<MessageStore, 'insert'>;
  /** Server-side publish without history on the realtime engine (the inbox channel is live only). */
  publishLive(channel: string, data: string): Promise<void>;
  logger: Logger;
}

/**
 * Internal notes: messages with role `note`, stored in the conversation (so they sort in the transcript) but for
 * agents only. The message store leaves them out of every read that does not ask for them, the conversation channel
 * never carries them (nothing here publishes there), and their webhook event is `note.created`, never
 * `message.created`. Whatever writes a note — the notes route, a hand-over summary, an action call — goes through
 * `addNote`.
 */
export class NotesService {
  constructor(private readonly deps: NotesDeps) {}

  async addNote(companyId: string, conversationId: string, input: NewNote): Promise<NoteView> {
    const conversation = await this.deps.conversations.findInCompany(companyId, conversationId);
    if (!conversation) throw conversationNotFound();
    const text = input.text.trim();
    if (text.length === 0) throw invalidNote('text must not be empty.');
    if (Buffer.byteLength(text) > NOTE_MAX_BYTES)
      throw invalidNote(`text holds at most ${NOTE_MAX_BYTES} bytes.`);
    const mentions = [...new Set(input.mentions ?? [])];
    if (mentions.length > NOTE_MAX_MENTIONS)
      throw invalidNote(`a note mentions at most ${NOTE_MAX_MENTIONS} users.`);
    await this.checkMentions(companyId, mentions);
    const snapshot = await this.deps.store.insert({
      conversationId: conversation.id,
      role: 'note',
      author: { id: input.author.id, name: input.author.name },
      status: 'complete',
      blocks: [{ id: randomUUID(), type: 'markdown', content: text }],
      note: { authorType: input.author.type, mentions, ...(input.kind ? { kind: input.kind } : {}) },
    });
    const view = noteView(snapshot);
    const event: InboxNote = { version: 1, event: 'note', conversation_id: conversation.id, note: view };
    // Live only, in the background: the note is stored; an agent who misses the event reads it over REST.
    void this.deps
      .publishLive(inboxChannelOf(companyId), JSON.stringify(event))
      .catch((err) =>
        this.deps.logger.warn(
          { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
          'could not announce a note on the inbox channel',
        ),
      );
    return view;
  }

  /** Every mention must be a portal user of the same company: a note never names someone from elsewhere. */
  private async checkMentions(companyId: string, mentions: string[]): Promise<void> {
    if (mentions.length === 0) return;
    const uuids = mentions.filter((m) => UUID.test(m)).map((m) => m.toLowerCase());
    const known = uuids.length === 0 ? new Set<string>() : await this.deps.companyUsers(companyId, uuids);
    const unknown = mentions.find((m) => !known.has(m.toLowerCase()));
    if (unknown !== undefined)
      throw invalidNote(`mentions: ${JSON.stringify(unknown)} is not a user of this company.`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The route's view of a stored note. */
export function noteView(snapshot: MessageSnapshot): NoteView {
  return {
    id: snapshot.id,
    conversation_id: snapshot.conversation_id,
    role: 'note',
    text: textOf(snapshot),
    author: {
      type: snapshot.author?.type ?? 'system',
      id: snapshot.author?.id ?? '',
      name: snapshot.author?.name ?? '',
    },
    mentions: snapshot.mentions ?? [],
    position: snapshot.position,
    created_at: snapshot.created_at,
  };
}

/**
 * The note agents see for one action call of a digital employee: what was called, how it went, what came back, in
 * the protocol's one format (packages/webchat-protocol/src/action-call-note.ts), which the portal reads back as a card.
 */
export function actionCallNote(call: {
  action: string;
  arguments: string;
  result: { outcome: string; status: number | null; durationMs: number; toolContent: string };
}): string {
  return actionCallNoteText({
    action: call.action,
    outcome: call.result.outcome,
    status: call.result.status,
    durationMs: call.result.durationMs,
    arguments: call.arguments,
    result: call.result.toolContent,
  });
}
