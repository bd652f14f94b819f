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
import type { Block, MessageAuthor, MessageSnapshot } from '../messages/message.ts';
import { type MessageLimits, messageTooLarge } from '../messages/message-limits.ts';
import { conversationNotFound } from '../webchat.errors.ts';
import type { Conversation } from './conversation.ts';
import type { ConversationEngine } from './conversation-engine.ts';
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
}

/**
 * What agents do to a conversation — post, take over (handover), hand back, close — in one place for every
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

  /** Gives the conversation back to the digital employee. Idempotent. */
  async handback(companyId: string, conversationId: string, actor: Actor): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.handledBy === 'digital_employee') return conversation;
    await this.deps.engine.handback(conversation);
    await this.record('conversation.handed_back', conversation, actor);
    return this.find(companyId, conversationId);
  }

  /** Closes the conversation for good (its reply stops; publishes are refused from now on). Idempotent. */
  async close(companyId: string, conversationId: string, actor: Actor): Promise<Conversation> {
    const conversation = await this.find(companyId, conversationId);
    if (conversation.status === 'closed') return conversation;
    await this.deps.engine.close(conversation);
    await this.record('conversation.closed', conversation, actor);
    return this.find(companyId, conversationId);
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

  private record(type: string, conversation: Conversation, actor: Actor): Promise<void> {
    return this.deps.audit.record({
      type,
      companyId: conversation.companyId,
      actor: actor.id,
      subject: conversation.id,
      ...(actor.ip ? { ip: actor.ip } : {}),
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
