import { randomUUID } from 'node:crypto';
import {
  type InteractiveBlockInput,
  readInteractiveBlocks,
  type SendAttachmentBlock,
  type SendMarkdownBlock,
} from '@parley/webchat-protocol';
import type { AuditLog } from '../../audit/audit.service.ts';
import { BadRequestError } from '../../errors/app-error.ts';
import type { AttachmentsService } from '../attachments/attachments.service.ts';
import type { Conversation } from '../conversation.ts';
import type { Block, MessageAuthor, MessageSnapshot } from '../messages/message.ts';
import { type MessageLimits, messageTooLarge } from '../messages/message-limits.ts';
import { type BusinessHours, openingAt } from '../routing/business-hours.ts';
import type { AssignTarget, RoutingService } from '../routing/routing.service.ts';
import type { RoutingSettingsStore } from '../routing/routing-settings.ts';
import { conversationClosed, conversationNotFound } from '../webchat.errors.ts';
import type { ConversationEngine, Notice } from './conversation-engine.ts';
import type { ConversationsService } from './conversations.service.ts';

/** Who acts, as the audit log names them: `client:<id>` (API client), `user:<id>` (portal user), `cli`. */
export interface Actor {
  /** The audit log's `actor`. */
  id: string;
  ip?: string;
}

/**
 * What an agent sends: markdown, attachment and interactive blocks (quick replies, cards) as they arrive from any
 * boundary, validated here.
 */
export interface AgentMessageInput {
  blocks: ReadonlyArray<SendMarkdownBlock | SendAttachmentBlock | InteractiveBlockInput>;
  author: MessageAuthor;
}

export interface ConversationCommandsDeps {
  conversations: ConversationsService;
  engine: ConversationEngine;
  audit: AuditLog;
  limits: MessageLimits;
  /** Resolves attachment blocks and signs their links in what `post` answers. */
  attachments: Pick<AttachmentsService, 'blocksOf' | 'present'>;
  routing: RoutingService;
  routingSettings: RoutingSettingsStore;
  /**
   * A person takes the conversation (queued for one, taken over, assigned or transferred): the hand-over summary
   * note (notes/handover-summary.ts). Runs in the background; the command never waits for it.
   */
  onHandedOver?: (conversation: Conversation) => void;
}

/** The audit events that mean a person now has (or is about to have) the conversation. */
const HANDOVER_EVENTS = new Set([
  'conversation.handed_over',
  'conversation.human_requested',
  'conversation.assigned',
]);

/** The actor of assignments routing makes by itself (round-robin), as the audit log names it. */
export const ROUTING_ACTOR: Actor = { id: 'routing' };

/** How many waiting conversations one pass of round-robin assigns at most (the rest wait for the next pass). */
const ROUTE_PASS_LIMIT = 50;

/**
 * What agents do to a conversation — post, take over (handover), hand back, close, assign — and the visitor's
 * request for a person, in one place for every
 * boundary: the platform API, the portal inbox and the CLI call these, so the rules, the audit events and the
 * block validation are the same whoever acts. Each command finds the conversation in the actor's company (another
 * company's is `conversation_not_found`, like an unknown one) and records an audit event when something changed.
 */
export class ConversationCommands {
  constructor(private readonly deps: ConversationCommandsDeps) {}

  /** The conversation, only within `companyId`; `conversation_not_found` otherwise. */
  async find(companyId: string, conversationId: string): Promise<Conversation> {
    const conversation = await this.deps.conversations.findInCompany(companyId, conversationId);
    if (!conversation) throw conversationNotFound();
    return conversation;
  }

  /** Posts an agent message; takes the conversation over first when the digital employee still handles it. */
  async post(
    companyId: string,
    conversationId: string,
    input: AgentMessageInput,
    actor: Actor,
  ): Promise<MessageSnapshot> {
    const conversation = await this.find(companyId, conversationId);
    const blocks = await this.validBlocks(conversation, input.blocks);
    const tookOver = conversation.handledBy !== 'agent' && conversation.status === 'open';
    const snapshot = await this.deps.engine.postAgentMessage(conversation, blocks, input.author);
    if (tookOver) await this.record('conversation.handed_over', conversation, actor);
    await this.record('conversation.agent_message_posted', conversation, actor);
    return this.deps.attachments.present(snapshot);
  }

  /** Moves the conversation to an agent (the digital employee stops, even mid-reply). Idempotent. */
  async handover(
    companyId: string,
    conversationId: string,
    agentName: string | null,
    actor: Actor,
  ): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.handledBy === 'agent') return conversation;
    await this.deps.engine.handover(conversation, agentName);
    await this.record('conversation.handed_over', conversation, actor);
    return this.find(companyId, conversationId);
  }

  /** Gives the conversation back to the digital employee (out of the queue, if it waited there). Idempotent. */
  async handback(companyId: string, conversationId: string, actor: Actor): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.handledBy === 'digital_employee' && !conversation.queuedAt) return conversation;
    await this.deps.engine.handback(conversation);
    await this.record('conversation.handed_back', conversation, actor);
    // The agent it was assigned to has room again.
    if (conversation.assigneeId) await this.routeQueue(companyId);
    return this.find(companyId, conversationId);
  }

  /** Closes the conversation for good (its reply stops; publishes are refused from now on). Idempotent. */
  async close(companyId: string, conversationId: string, actor: Actor): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.status === 'closed') return conversation;
    await this.deps.engine.close(conversation);
    await this.record('conversation.closed', conversation, actor);
    if (conversation.assigneeId) await this.routeQueue(companyId);
    return this.find(companyId, conversationId);
  }

  /**
   * The visitor asks for a person (`request_human`; also a webhook bot's `handover` flag): the conversation joins
   * the company queue with a notice that says when agents are in (business hours), and round-robin assigns it at
   * once if an agent is free. The digital employee keeps answering while it waits. Idempotent: a conversation
   * already waiting or with an agent stays as it is.
   */
  async requestHuman(companyId: string, conversationId: string, actor: Actor): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.status === 'closed') throw conversationClosed();
    if (!(await this.deps.routing.enqueue(conversation.id))) return conversation;
    const { businessHours } = await this.deps.routingSettings.get(companyId);
    const queued = queueNotice(businessHours, new Date());
    await this.deps.engine.notify(conversation, queued.text, queued.notice);
    await this.record('conversation.human_requested', conversation, actor);
    await this.routeQueue(companyId);
    return this.find(companyId, conversationId);
  }

  /**
   * Assigns the conversation to a portal user of the company (take, reassign) or, with `'next'`, by round-robin;
   * the agent takes it over (the digital employee stops) and the visitor sees who joined. `agent_not_found` for a
   * user of another company; `conversation_closed` for a closed conversation.
   */
  async assign(
    companyId: string,
    conversationId: string,
    target: AssignTarget,
    actor: Actor,
  ): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.status === 'closed') throw conversationClosed();
    if (target !== 'next' && conversation.assigneeId === target.userId) return conversation;
    const assigned = await this.deps.routing.assign(companyId, conversation.id, target);
    if (!assigned) return this.find(companyId, conversationId);
    await this.joined(conversation, assigned.name);
    await this.record('conversation.assigned', conversation, actor, { assignee_id: assigned.userId });
    return this.find(companyId, conversationId);
  }

  /**
   * Round-robin over the queue: the longest-waiting conversation goes to the next free agent, until the queue is
   * empty or every available agent is at capacity. Run when something may have changed either side: a request for
   * a person, an agent becoming available, a conversation of an agent closed or handed back. Answers how many it
   * assigned.
   */
  async routeQueue(companyId: string): Promise<number> {
    let assigned = 0;
    while (assigned < ROUTE_PASS_LIMIT) {
      const next = await this.deps.routing.oldestQueued(companyId);
      if (!next) break;
      const conversation = await this.find(companyId, next);
      const agent = await this.deps.routing.assign(companyId, next, 'next');
      if (!agent) break;
      await this.joined(conversation, agent.name);
      await this.record('conversation.assigned', conversation, ROUTING_ACTOR, { assignee_id: agent.userId });
      assigned++;
    }
    return assigned;
  }

  /** The effects of a handover once routing gave the conversation to an agent (the row already says so). */
  private async joined(conversation: Conversation, agentName: string): Promise<void> {
    const tookOver = conversation.handledBy !== 'agent';
    await this.deps.engine.handover(conversation, agentName);
    if (tookOver) await this.record('conversation.handed_over', conversation, ROUTING_ACTOR);
  }

  /**
   * The one validation of agent blocks: blank markdown blocks are dropped, the rest kept as written (leading spaces
   * mean something in markdown), then the attachments, which must name attachments of this conversation
   * (`unknown_attachment`), then the interactive blocks, which must pass the protocol's rules (`invalid_blocks`);
   * a message with nothing left is `empty_message` (one of only attachments is fine); all within the size rule
   * (messages/message-limits.ts).
   */
  private async validBlocks(
    conversation: Conversation,
    input: AgentMessageInput['blocks'],
  ): Promise<Block[]> {
    const written = input.filter(
      (b): b is SendMarkdownBlock | SendAttachmentBlock =>
        (b.type === 'markdown' && b.content.trim().length > 0) || b.type === 'attachment',
    );
    const offered = interactiveOf(input);
    if (written.length === 0 && offered.length === 0) {
      throw new BadRequestError('empty_message', 'Write a message first.', {
        errors: [{ field: 'content', message: 'is empty' }],
      });
    }
    const tooLarge = messageTooLarge([...written, ...offered], this.deps.limits);
    if (tooLarge) {
      throw new BadRequestError('message_too_large', tooLarge, {
        errors: [{ field: 'content', message: tooLarge }],
      });
    }
    const stored = await this.deps.attachments.blocksOf(conversation, written);
    return [...stored, ...offered.map((block): Block => ({ id: randomUUID(), ...block }))];
  }

  private record(
    type: string,
    conversation: Conversation,
    actor: Actor,
    details?: Record<string, unknown>,
  ): Promise<void> {
    if (HANDOVER_EVENTS.has(type)) this.deps.onHandedOver?.(conversation);
    return this.deps.audit.record({
      type,
      companyId: conversation.companyId,
      actor: actor.id,
      subject: conversation.id,
      ...(actor.ip ? { ip: actor.ip } : {}),
      ...(details ? { details } : {}),
    });
  }
}

/** The interactive blocks of an agent's post, checked by the protocol's rules (`invalid_blocks` when broken). */
function interactiveOf(input: AgentMessageInput['blocks']): InteractiveBlockInput[] {
  const at = input.flatMap((b, i) => (b.type === 'markdown' || b.type === 'attachment' ? [] : [i]));
  const reading = readInteractiveBlocks(
    at.map((i) => input[i]),
    'blocks',
  );
  if (reading.problem) {
    // The rules saw the interactive blocks alone: name the block by its place in the whole list.
    const place = (path: string) =>
      path.replace(/^blocks\[(\d+)\]/, (_, i: string) => `blocks[${at[Number(i)]}]`);
    const problem = { field: place(reading.problem.field), message: place(reading.problem.message) };
    throw new BadRequestError('invalid_blocks', problem.message, { errors: [problem] });
  }
  return reading.blocks;
}

/** What the visitor reads on joining the queue: within business hours a person comes soon, else when they are back. */
function queueNotice(hours: BusinessHours | null, at: Date): { text: string; notice: Notice } {
  const { open, nextOpenAt } = openingAt(hours, at);
  const notice: Notice = {
    notice: 'human_requested',
    next_open_at: open || !hours || !nextOpenAt ? null : nextOpenAt.toISOString(),
  };
  if (open || !hours)
    return { text: 'You asked for a person: someone from our team will join shortly.', notice };
  if (!nextOpenAt) {
    const text =
      'Our team is away right now. You are in the queue; the digital employee keeps helping meanwhile.';
    return { text, notice };
  }
  const when = new Intl.DateTimeFormat('en-GB', {
    timeZone: hours.time_zone,
    weekday: 'long',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(nextOpenAt);
  const text = `Our team is away right now and back ${when}. You are in the queue; the digital employee keeps helping meanwhile.`;
  return { text, notice };
}
