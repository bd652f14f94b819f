import type { RealtimeEngine } from '@parley/realtime';
import type { MessageSnapshot, NoteAuthorType, NoteView } from '@parley/webchat-protocol';
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import type { IdempotencyKeys } from '../idempotency/idempotency-keys.ts';
import type { AbuseLimits } from './abuse-limits.ts';
import type { AttachmentsService } from './attachments/attachments.service.ts';
import type { UploadQuota } from './attachments/upload-quota.ts';
import type { CannedResponsesService } from './canned-responses/canned-responses.service.ts';
import type { ChannelsService } from './channels/channels.service.ts';
import type { Conversation } from './conversation.ts';
import type { ConversationCommands } from './conversations/conversation-commands.ts';
import type { ConversationEngine } from './conversations/conversation-engine.ts';
import type { ConversationsService } from './conversations/conversations.service.ts';
import type { LiveSnapshots } from './conversations/live-snapshots.ts';
import type { FeedbackService } from './feedback/feedback.service.ts';
import type { ChannelIdentity } from './identity/channel-identity.ts';
import type { VisitorDirectory } from './identity/visitor-directory.ts';
import type { InboxFeed } from './inbox-feed/inbox-feed.ts';
import type { MessageStore } from './messages/message-store.ts';
import type { ReadMarks } from './reads/read-marks.ts';
import type { RealtimeTokenSigner } from './realtime/tokens.ts';
import type { RoutingService } from './routing/routing.service.ts';
import type { RoutingSettingsStore } from './routing/routing-settings.ts';
import type { ConversationSearch } from './search/conversation-search.ts';

/**
 * The webchat capability's services, built once by `createWebchat` (webchat.ts) for the composition root, which
 * hands each route registration and command the few of them it declares (`registerWebchat`); nothing inside
 * `webchat/` imports this bag, so it stands above every subfolder. Building connects nothing; `start` and `serve` do.
 */
export interface Webchat {
  config: Config['webchat'];
  /** Read per use: a test server learns its public URL only after listen. */
  publicUrl(): string;
  /** The base URL to hand this request's client (PARLEY_PUBLIC_URL, or in development the request's own). */
  publicUrlFor(request: FastifyRequest): string;
  /** The browser origins that are Parley's own for this request (always allowed to use the webchat). */
  ownOriginsFor(request: FastifyRequest): string[];
  companies: CompaniesService;
  channels: ChannelsService;
  conversations: ConversationsService;
  store: MessageStore;
  live: LiveSnapshots;
  engine: ConversationEngine;
  signer: RealtimeTokenSigner;
  limiter: AbuseLimits;
  audit: AuditLog;
  /** Channels' identity modes and secrets, and the verification of visitor tokens. */
  identity: ChannelIdentity;
  /** Attaches a session's conversations to its verified visitor and keeps their name and email current. */
  visitors: VisitorDirectory;
  /** Idempotency-Key of agents' message posts, platform and portal alike (idempotency/). */
  idempotency: IdempotencyKeys;
  /** Read marks and unread counts of both sides. */
  reads: ReadMarks;
  /** Visitors' thumbs on messages and CSAT of closed conversations. */
  feedback: FeedbackService;
  /** The agents' live inbox: list entries, published on the company's inbox channel as conversations change. */
  inbox: InboxFeed;
  /** Search over conversations by visitor and message text (PostgreSQL full-text search / SQLite FTS5). */
  search: ConversationSearch;
  /** Internal notes for agents only (hand-over summaries, action calls, agents' own): `addNote`. */
  notes: {
    // Typed here without importing notes/ (which reads conversations and messages): notes/notes.service.ts.
    addNote(
      companyId: string,
      conversationId: string,
      input: {
        text: string;
        author: { type: NoteAuthorType; id: string; name: string };
        mentions?: string[];
      },
    ): Promise<NoteView>;
  };
  /**
   * A summary of `messages` by the conversation's model (an `openai` employee's, as hand-over summaries are written),
   * or undefined when it has none or the model fails: the caller falls back to an extractive summary.
   */
  summaryByModel(conversation: Conversation, messages: MessageSnapshot[]): Promise<string | undefined>;
  /** Saved replies agents insert with `/shortcut`. */
  cannedResponses: CannedResponsesService;
  /** The queue, agents' availability and assignment (round-robin under capacity). */
  routing: RoutingService;
  /** Per-company routing settings: agent capacity and business hours. */
  routingSettings: RoutingSettingsStore;
  /** Uploaded files, their signed links, and the attachment blocks of messages. */
  attachments: AttachmentsService;
  /** Bytes visitors may upload per hour, per session and per address. */
  uploadQuota: UploadQuota;
  /** What agents do to conversations (post, handover, hand back, close, assign), for every boundary. */
  commands: ConversationCommands;
  /** The realtime engine on `/connection/websocket` (its hooks are the webchat's). */
  realtime: RealtimeEngine;
  /** With REDIS_URL: other nodes share the broker and the reply line (its health is the broker's). */
  clustered: boolean;
  /** Connects the broker, so messages can be broadcast (a CLI command that posts needs only this). */
  start(): Promise<void>;
  /** `start`, and works the reply line: this process answers visitors (the server). */
  serve(): Promise<void>;
  /**
   * Graceful drain (SIGTERM): WebSocket clients are told to reconnect (to another node), replies streaming here
   * finish for up to `graceMs`, the rest of the reply line goes to other nodes; the broker stays up meanwhile so
   * this node's last envelopes still reach the clients, wherever they reconnected.
   */
  drain(graceMs: number): Promise<void>;
}
