import type { Logger } from 'pino';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import type { Responder } from '../../digital-employees/responders/responder.ts';
import type { Tracing } from '../../tracing/tracing.ts';
import type { MessageSnapshot } from '../messages/message.ts';
import type { MessageStore } from '../messages/message-store.ts';
import type { ReadMarks } from '../reads/read-marks.ts';
import type { Broadcaster } from './broadcaster.ts';
import type { ConversationsService } from './conversations.service.ts';
import type { LiveSnapshots } from './live-snapshots.ts';
import type { ReplyHeartbeats } from './reply-heartbeats.ts';
import type { ReplyQueue } from './reply-queue.ts';
import type { ReplySignals } from './reply-signals.ts';
import type { ShownTexts } from './shown-texts.ts';

/*
 * What the conversation engine is built from (packages/server/src/webchat/conversations/conversation-engine.ts): the
 * same collaborators serve its two halves, the intake of messages
 * (packages/server/src/webchat/conversations/conversation-intake.ts) and the replies
 * (packages/server/src/webchat/conversations/reply-runner.ts).
 */

/** Where replies come from: the digital-employees capability (responders behind one interface). */
export interface ReplySource {
  findEmployee(companyId: string, id: string): Promise<DigitalEmployee | undefined>;
  responderFor(employee: DigitalEmployee): Responder;
  greetingFor(employee: DigitalEmployee): string | null;
}

export interface ConversationEngineDeps {
  conversations: ConversationsService;
  store: MessageStore;
  broadcaster: Broadcaster;
  live: LiveSnapshots;
  replies: ReplySource;
  logger: Logger;
  flushIntervalMs: number;
  /** The streams' coalescing while visitor messages wait to be taken in (ReplyStreamDeps.busy); none: never busy. */
  busy?: { now(): boolean; flushIntervalMs: number };
  persistIntervalMs: number;
  responderTimeoutMs: number;
  /** The durable line of messages waiting for replies, shared by every node. */
  queue: ReplyQueue;
  /** Hints to the other nodes of a cluster (a no-op on one node). */
  signals: ReplySignals;
  /** Signs of life of the replies running here, outside the store (reply-heartbeats.ts; none on one node). */
  heartbeats?: ReplyHeartbeats;
  /** The longest text clients may have been shown of each streaming reply (shown-texts.ts; none on one node). */
  shownTexts?: ShownTexts;
  /**
   * How long a reply waits for a store that is away (to read the history it answers, to store its completion)
   * before it is left to a takeover; default REPLY_STORE_WAIT_MS.
   */
  storeWaitMs?: number;
  /** A reply job's lease: another node takes the job over this long after its node stopped renewing it. */
  leaseMs: number;
  /** Read marks: a visitor's own message moves their mark, in the transaction that stores it. */
  reads?: Pick<ReadMarks, 'visitorSent'>;
  /**
   * A snapshot as it leaves the server (attachment blocks get their signed `url`): what responders receive, so a
   * webhook bot or a model can fetch the files. Without it snapshots go out as stored.
   */
  present?: (snapshot: MessageSnapshot) => MessageSnapshot;
  /** Told about each reply's timing and failures (metrics; src/metrics/metrics.ts). */
  observer?: ReplyObserver;
  /** A `webchat.reply` span per reply (src/tracing/); the responder's outbound call is its child. */
  tracing?: Tracing;
}

/** Timings of digital employees' replies, in seconds from the moment the responder is asked. */
export interface ReplyObserver {
  firstToken(seconds: number): void;
  /** `outcome` is `completed` or the code of the error block the reply ended with. */
  finished(seconds: number, outcome: string): void;
}

/**
 * How long a reply waits for the store by default: far longer than a database restart or failover takes (the
 * contract is 30 s), short enough that a node cut off for good leaves its replies to the others in minutes.
 */
export const REPLY_STORE_WAIT_MS = 120_000;
