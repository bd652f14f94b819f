import { randomUUID } from 'node:crypto';
import { type Command, requireString, UsageError } from '../../cli-kit/command.ts';
import { type Conversation, platformConversationView } from '../conversation.ts';
import type { MessageSnapshot } from '../messages/message.ts';
import type { Actor, ConversationCommands } from './conversation-commands.ts';
import type { ConversationsService } from './conversations.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface ConversationCommandDeps {
  /** Connects the broker, so a change reaches the visitors (packages/server/src/webchat/webchat-services.ts `start`). */
  connectBroker(): Promise<void>;
  conversations: Pick<ConversationsService, 'listForCompany'>;
  commands: Pick<ConversationCommands, 'post' | 'handover' | 'handback' | 'close' | 'assign'>;
}

/** The CLI acts as itself in the audit log. */
const CLI: Actor = { id: 'cli' };

const target = {
  company: { description: 'company id', required: true },
  conversation: { description: 'conversation id', required: true },
};

type View = ReturnType<typeof platformConversationView>;

/** What a conversation command does, given the conversation it names and its options. */
type Act<R> = (
  ctx: ConversationCommandDeps,
  companyId: string,
  conversationId: string,
  options: Record<string, unknown>,
) => Promise<R>;

/**
 * A command that changes a conversation: it connects the broker first so the change reaches the visitors at once
 * (with REDIS_URL, through the same broker the server nodes use; a lone server's in-memory broker is out of this
 * process's reach, so its visitors see the change when they next load the conversation).
 */
function action<R>(
  name: string,
  summary: string,
  extra: Command<unknown, ConversationCommandDeps>['options'],
  act: Act<R>,
  format: (result: R) => string,
): Command<R, ConversationCommandDeps> {
  return {
    name: `conversations ${name}`,
    summary,
    options: { ...target, ...extra },
    async run(options, ctx) {
      await ctx.connectBroker();
      return act(ctx, requireString(options, 'company'), requireString(options, 'conversation'), options);
    },
    format,
  };
}

const describe = (c: View) => `${c.id}  ${c.status}  handled by ${c.handled_by}`;

const list: Command<{ conversations: View[] }, ConversationCommandDeps> = {
  name: 'conversations list',
  summary: "list a company's conversations, most recently active first",
  options: {
    company: { description: 'company id', required: true },
    status: { description: 'open or closed' },
    limit: { description: 'how many (1–200, default 50)' },
  },
  async run(options, ctx) {
    const status = options.status;
    if (status !== undefined && status !== 'open' && status !== 'closed')
      throw new UsageError('--status must be open or closed');
    const limit = options.limit === undefined ? 50 : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit must be 1–200');
    const found: Conversation[] = await ctx.conversations.listForCompany(requireString(options, 'company'), {
      limit,
      ...(status ? { status } : {}),
    });
    return { conversations: found.map(platformConversationView) };
  },
  format: (r) => r.conversations.map(describe).join('\n') || '(no conversations)',
};

const post = action<MessageSnapshot>(
  'post',
  'post a message as an agent (takes the conversation over from the digital employee first)',
  {
    text: { description: 'the message (markdown)', required: true },
    author: { description: 'the name visitors see (default: Agent)' },
  },
  (ctx, companyId, conversationId, options) =>
    ctx.commands.post(
      companyId,
      conversationId,
      {
        blocks: [{ type: 'markdown', content: String(options.text) }],
        author: {
          id: `cli:${randomUUID()}`,
          name: typeof options.author === 'string' ? options.author : 'Agent',
        },
      },
      CLI,
    ),
  (m) => `posted message ${m.id}`,
);

/** A command that changes the conversation's state and prints the conversation as it is then. */
function stateChange(
  name: string,
  summary: string,
  extra: Command<unknown, ConversationCommandDeps>['options'],
  act: Act<Conversation>,
): Command<View, ConversationCommandDeps> {
  return action<View>(
    name,
    summary,
    extra,
    async (...args) => platformConversationView(await act(...args)),
    describe,
  );
}

const handover = stateChange(
  'handover',
  'take the conversation over: the digital employee stops and stays silent',
  { agent: { description: 'the agent name visitors see in the notice' } },
  (ctx, companyId, conversationId, options) =>
    ctx.commands.handover(
      companyId,
      conversationId,
      typeof options.agent === 'string' ? options.agent : null,
      CLI,
    ),
);

const handback = stateChange(
  'handback',
  'give the conversation back to the digital employee',
  {},
  (ctx, companyId, conversationId) => ctx.commands.handback(companyId, conversationId, CLI),
);

const close = stateChange(
  'close',
  'close the conversation (no more messages are accepted)',
  {},
  (ctx, companyId, conversationId) => ctx.commands.close(companyId, conversationId, CLI),
);

const assign = stateChange(
  'assign',
  'assign the conversation to a portal user (--user), or without --user to the next free agent (round-robin)',
  { user: { description: 'portal user id (default: round-robin among available agents under capacity)' } },
  (ctx, companyId, conversationId, options) =>
    ctx.commands.assign(
      companyId,
      conversationId,
      typeof options.user === 'string' ? { userId: options.user } : 'next',
      CLI,
    ),
);

export const conversationCommands = [list, post, handover, handback, close, assign];
