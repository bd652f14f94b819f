import { type AttachmentBlock, type MessageSnapshot, textOf } from '@parley/webchat-protocol';
import type OpenAI from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { groundedModelReply } from '../../knowledge/grounding.ts';
import type { KnowledgeSearch } from '../../knowledge/knowledge-search.ts';
import { type ActionsPort, runAction } from '../actions/action-runner.ts';
import { type Action, HANDOVER_TOOL } from '../actions/actions.service.ts';
import type { ConnectorCaller } from '../connector-ports.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import { SETTINGS_DEFAULTS } from '../digital-employees.settings.ts';
import { backstopFor, SilenceDeadline } from './deadline.ts';
import type { ReplyChunk, Responder, RespondInput } from './responder.ts';
import {
  ResponderBadResponseError,
  type ResponderError,
  ResponderHttpError,
  ResponderMisconfiguredError,
  ResponderTimeoutError,
  ResponderUnreachableError,
} from './responder-errors.ts';
import { toResponderError } from './to-responder-error.ts';

type Employee = Pick<DigitalEmployee, 'name' | 'connectorId' | 'model' | 'systemPrompt' | 'settings'> &
  Partial<Pick<DigitalEmployee, 'id'>>;

/**
 * Most model requests of one reply: each round may call tools, the last is offered none so the model must answer.
 * A model that keeps calling tools cannot keep a visitor waiting forever.
 */
export const MAX_TOOL_ROUNDS = 4;

/** The built-in tool that hands the conversation to a person (docs/design.md "Actions"). */
const HANDOVER_FUNCTION = {
  type: 'function' as const,
  function: {
    name: HANDOVER_TOOL,
    description:
      'Hand the conversation to a human agent: when the visitor asks for a person, or when you cannot help.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
  },
};

/** A tool call as its streamed deltas build it (OpenAI Chat Completions: `delta.tool_calls[i]`, keyed by `index`). */
interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

type OpenAiSdk = typeof import('openai');
let sdk: Promise<OpenAiSdk> | undefined;
/**
 * The SDK, loaded on the first reply of an openai digital employee: a process that never runs one (every CLI
 * command, most servers) does not pay for loading it.
 */
const openAiSdk = (): Promise<OpenAiSdk> => {
  sdk ??= import('openai');
  return sdk;
};

/**
 * An OpenAI-compatible model: streaming Chat Completions (`POST {baseURL}/chat/completions`, `stream: true`)
 * against the openai connector's URL with its current key. The client is built per call because the key may have
 * been rotated since the last one (docs/design.md: the new key is used from the very next outbound call).
 */
export class OpenAiResponder implements Responder {
  constructor(
    private readonly employee: Employee,
    private readonly connectors: ConnectorCaller,
    private readonly knowledge?: KnowledgeSearch,
    private readonly actions?: ActionsPort,
  ) {}

  get historyLimit(): number {
    return this.employee.settings.history_limit ?? SETTINGS_DEFAULTS.historyLimit;
  }

  /** Retrieval, guardrails and citations are knowledge/grounding.ts's; the model call is `stream`. */
  respond(input: RespondInput): AsyncIterable<ReplyChunk> {
    const question = textOf(input.message);
    return groundedModelReply(this.knowledge, { ...input, question }, (grounding) =>
      this.stream(input, grounding),
    );
  }

  private async *stream(input: RespondInput, grounding?: string): AsyncIterable<ReplyChunk> {
    const { connectorId, model } = this.employee;
    if (!connectorId) throw new ResponderMisconfiguredError('no connector is set');
    if (!model) throw new ResponderMisconfiguredError('no model is set');
    const timeoutMs = this.employee.settings.timeout_ms ?? SETTINGS_DEFAULTS.timeoutMs.openai;
    const deadline = new SilenceDeadline(input.signal, timeoutMs);
    const openai = await openAiSdk();
    try {
      const client = await this.clientFor(openai, input.companyId, connectorId, deadline, timeoutMs);
      const actions =
        this.actions && this.employee.id ? await this.actions.listFor(input.companyId, this.employee.id) : [];
      const tools = [
        ...actions.map((a) => ({
          type: 'function' as const,
          function: { name: a.name, description: a.description, parameters: a.parameters },
        })),
        ...(this.offersHandover(input) ? [HANDOVER_FUNCTION] : []),
      ];
      const messages = toChatMessages(this.employee, input, grounding);
      for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
        // The last round offers no tools: the model has to answer with what it has.
        const offered = round < MAX_TOOL_ROUNDS - 1 ? tools : [];
        const calls = new Map<number, ToolCall>();
        let text = '';
        try {
          const stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk> =
            await client.chat.completions.create(
              { model, stream: true, messages, ...(offered.length > 0 ? { tools: offered } : {}) },
              { signal: deadline.signal },
            );
          deadline.touch();
          for await (const chunk of stream) {
            deadline.touch();
            const delta = chunk.choices?.[0]?.delta;
            if (typeof delta?.content === 'string' && delta.content) {
              text += delta.content;
              yield delta.content;
            }
            for (const part of delta?.tool_calls ?? []) {
              const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
              if (part.id) call.id = part.id;
              if (part.function?.name) call.name += part.function.name;
              if (part.function?.arguments) call.arguments += part.function.arguments;
              calls.set(part.index, call);
            }
          }
          // The SDK ends a stream quietly when its signal aborts: a cut-off reply must not pass for a whole one.
          deadline.throwIfStopped();
        } catch (err) {
          throw openAiError(openai, err, deadline, timeoutMs);
        }
        if (calls.size === 0 || offered.length === 0) break;
        const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
        messages.push({
          role: 'assistant',
          content: text || null,
          tool_calls: ordered.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        });
        for (const call of ordered) {
          const action = actions.find((a) => a.name === call.name);
          if (action) yield { status: action.status_text ?? 'Working on it…' };
          const content = await this.callTool(input, call, action, deadline);
          if (action) yield { status: null };
          messages.push({ role: 'tool', tool_call_id: call.id, content });
        }
      }
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Whether the model gets the built-in `handover` tool: when the conversation can be handed over at all and the
   * employee's `settings.handover_tool` is not switched off (docs/config.md "Digital employees"). A call of a tool
   * not offered is answered like any unknown tool.
   */
  private offersHandover(input: RespondInput): boolean {
    const enabled = this.employee.settings.handover_tool ?? SETTINGS_DEFAULTS.handoverTool;
    return enabled && input.requestHuman !== undefined;
  }

  /** One tool call: the built-in hand-over, or an action; recorded either way. Returns the tool message's content. */
  private async callTool(
    input: RespondInput,
    call: ToolCall,
    action: Action | undefined,
    deadline: SilenceDeadline,
  ): Promise<string> {
    const port = this.actions;
    const record = (result: Parameters<ActionsPort['record']>[0]['result'], connectorId: string | null) =>
      port
        ?.record({
          companyId: input.companyId,
          conversationId: input.conversationId,
          digitalEmployeeId: this.employee.id ?? '',
          digitalEmployeeName: this.employee.name,
          action: call.name,
          connectorId,
          arguments: call.arguments,
          result,
        })
        // Recording is for agents and the audit trail; the visitor's reply goes on without it.
        .catch(() => {});
    if (call.name === HANDOVER_TOOL && this.offersHandover(input)) {
      input.requestHuman?.();
      const result = {
        outcome: 'ok' as const,
        status: null,
        durationMs: 0,
        toolContent: JSON.stringify({ ok: true, note: 'A person will take over after this reply.' }),
      };
      await record(result, null);
      return result.toolContent;
    }
    if (!action || !port)
      return JSON.stringify({ error: `There is no tool named ${JSON.stringify(call.name)}.` });
    // An action may take up to its own time-out: the reply is not silent meanwhile (the status shows).
    const keepAlive = setInterval(() => deadline.touch(), 1000);
    try {
      const result = await runAction(this.connectors, input.companyId, action, call.arguments, {
        timeoutMs: port.timeoutMs,
        signal: input.signal,
      });
      await record(result, action.connector_id);
      return result.toolContent;
    } finally {
      clearInterval(keepAlive);
      deadline.touch();
    }
  }

  private async clientFor(
    { default: OpenAI }: OpenAiSdk,
    companyId: string,
    connectorId: string,
    deadline: SilenceDeadline,
    timeoutMs: number,
  ): Promise<OpenAI> {
    let credentials: Awaited<ReturnType<ConnectorCaller['credentials']>>;
    try {
      credentials = await this.connectors.credentials(companyId, connectorId);
    } catch (err) {
      throw toResponderError(err, deadline, timeoutMs);
    }
    const outbound = credentials.fetch;
    return new OpenAI({
      apiKey: credentials.apiKey,
      baseURL: credentials.baseUrl,
      // The outbound client's fetch applies the destination policy; its inactivity limit is this employee's.
      ...(outbound
        ? {
            fetch: (url: string | URL | Request, init?: RequestInit) =>
              outbound(url, { ...init, timeoutMs: backstopFor(timeoutMs) }),
          }
        : {}),
      // Retries and timeouts are ours (silence deadline); org/project are explicit so the SDK reads no environment.
      maxRetries: 0,
      // The SDK would print unparsable stream events to the console; ours is a typed error instead.
      logLevel: 'off',
      timeout: 10 * 60_000,
      organization: null,
      project: null,
      webhookSecret: null,
    });
  }
}

function openAiError(
  { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError }: OpenAiSdk,
  err: unknown,
  deadline: SilenceDeadline,
  timeoutMs: number,
): ResponderError {
  const stopped = deadline.reason();
  if (stopped) return stopped;
  if (err instanceof APIUserAbortError) return toResponderError(err, deadline, timeoutMs);
  if (err instanceof APIConnectionTimeoutError) return new ResponderTimeoutError(timeoutMs);
  // The SDK wraps what its fetch threw; the outbound client's own codes (timeout, blocked destination) say more.
  if (err instanceof APIConnectionError && err.cause) return toResponderError(err.cause, deadline, timeoutMs);
  if (err instanceof APIConnectionError) return new ResponderUnreachableError();
  if (err instanceof APIError) {
    // An error event inside a 200 stream has no status: the stream itself was unusable.
    return typeof err.status === 'number'
      ? new ResponderHttpError(err.status)
      : new ResponderBadResponseError('the stream reported an error');
  }
  if (err instanceof SyntaxError) return new ResponderBadResponseError('a stream event is not valid JSON');
  return toResponderError(err, deadline, timeoutMs);
}

/**
 * The conversation as chat messages: the system prompt first, then the newest `history_limit` earlier messages and
 * the visitor's message. Visitors are `user`; the digital employee and human agents both speak for the company,
 * so both are `assistant` (an agent's words are marked with the agent's name so the model can tell who promised
 * what); system notices ("an agent joined") are for the visitor's UI, not the model, and are left out, as are
 * unfinished (partial) and empty messages.
 */
export function toChatMessages(
  employee: Employee,
  input: Pick<RespondInput, 'message' | 'history'>,
  grounding?: string,
): ChatCompletionMessageParam[] {
  const limit = employee.settings.history_limit ?? SETTINGS_DEFAULTS.historyLimit;
  const earlier = input.history.filter((m) => m.id !== input.message.id).flatMap(toChatMessage);
  const messages: ChatCompletionMessageParam[] = [
    {
      role: 'system',
      content:
        employee.systemPrompt ??
        `You are ${employee.name}, a helpful assistant chatting with a website visitor.`,
    },
    ...(limit === 0 ? [] : earlier.slice(-limit)),
    // The knowledge passages for this question (knowledge/grounding.ts), numbered for `[n]` citations.
    ...(grounding ? [{ role: 'system' as const, content: grounding }] : []),
    { role: 'user', content: userContent(input.message) },
  ];
  return messages;
}

function toChatMessage(message: MessageSnapshot): ChatCompletionMessageParam[] {
  const text = withFileMentions(message, textOf(message));
  if (message.status !== 'complete' || (text.trim() === '' && !hasAttachments(message))) return [];
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: userContent(message) }];
    case 'digital_employee':
      return [{ role: 'assistant', content: text }];
    case 'agent':
      return [{ role: 'assistant', content: `[${message.author?.name ?? 'Agent'}, human agent] ${text}` }];
    case 'system':
    case 'note':
      // Notices are the service's; notes are for agents only (never read back to the model as the conversation).
      return [];
  }
}

/** Raster images the model can look at through their signed link (Chat Completions `image_url` parts). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const attachmentsOf = (message: MessageSnapshot): AttachmentBlock[] =>
  message.blocks.filter((b): b is AttachmentBlock => b.type === 'attachment');
const hasAttachments = (message: MessageSnapshot) => attachmentsOf(message).length > 0;

/** Files the model cannot see, named in the text so it knows they were sent (docs/design.md "Attachments"). */
function withFileMentions(message: MessageSnapshot, text: string, skipImages = false): string {
  const mentions = attachmentsOf(message)
    .filter((a) => !(skipImages && IMAGE_TYPES.has(a.content_type)))
    .map((a) => `[Attached file: ${a.name} (${a.content_type}, ${a.size} bytes)]`);
  return [text, ...mentions].filter((part) => part.length > 0).join('\n');
}

/**
 * A visitor's message for the model: plain text, or — when it carries images — content parts, its text (with other
 * files mentioned) then each image as an `image_url` part pointing at the image's signed link.
 */
function userContent(message: MessageSnapshot): string | ChatCompletionContentPart[] {
  const images = attachmentsOf(message).filter((a) => IMAGE_TYPES.has(a.content_type));
  if (images.length === 0) return withFileMentions(message, textOf(message));
  const text = withFileMentions(message, textOf(message), true);
  return [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...images.map((a) => ({ type: 'image_url' as const, image_url: { url: a.url } })),
  ];
}
