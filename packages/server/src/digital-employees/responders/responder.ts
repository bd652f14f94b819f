import type { MessageSnapshot, ReplyBlockInput } from '@parley/webchat-protocol';
import type { KnowledgeSearch } from '../../knowledge/knowledge-search.ts';
import type { ActionsPort } from '../actions/action-runner.ts';
import type { ConnectorCaller } from '../connector-ports.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';

export interface RespondInput {
  companyId: string;
  conversationId: string;
  digitalEmployee: DigitalEmployee;
  /** The visitor's message to answer. */
  message: MessageSnapshot;
  /** Earlier messages of the conversation, oldest first, without `message` itself. */
  history: MessageSnapshot[];
  /** Fires when the reply is no longer wanted (handover, shutdown); the responder stops and throws `responder_aborted`. */
  signal: AbortSignal;
  /**
   * The bot asks for a person (a webhook bot's `"handover": true`, docs/routing.md): the engine puts the
   * conversation in the company queue once this reply is complete.
   */
  requestHuman?: () => void;
}

/**
 * One piece of a reply: a markdown delta, or interactive blocks (quick replies, cards) that belong to the same
 * message, after its markdown (docs/design.md "Interactive blocks"). Blocks are already validated
 * (`readInteractiveBlocks`); a responder that got invalid ones from its bot throws `responder_bad_response`.
 */
export type ReplyChunk = string | { blocks: ReplyBlockInput[] } | { status: string | null };

/**
 * Produces a digital employee's reply as markdown deltas (concatenated in order they are the whole text) and, at
 * any point, interactive blocks. Failures surface as a thrown ResponderError (typed `code`), possibly after some
 * deltas were already yielded.
 */
export interface Responder {
  /** How many earlier messages `respond` wants in `history` (0: none, and the engine reads none). */
  readonly historyLimit: number;
  respond(input: RespondInput): AsyncIterable<ReplyChunk>;
}

export interface ResponderDeps {
  connectors: ConnectorCaller;
  /** The company's knowledge (knowledge/): builtin and openai employees answer from it (knowledge/grounding.ts). */
  knowledge?: KnowledgeSearch;
  /** Actions the `openai` responder offers its model as tools (digital-employees/actions/); none when absent. */
  actions?: ActionsPort;
}

/** The greeting posted when a conversation starts (docs/design.md), or null when none is configured. */
export function greetingFor(employee: Pick<DigitalEmployee, 'settings'>): string | null {
  return employee.settings.greeting ?? null;
}
