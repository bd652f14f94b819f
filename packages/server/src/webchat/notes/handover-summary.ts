import { handoverSummaryNoteText, type MessageSnapshot, textOf } from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import type { Conversation } from '../conversation.ts';
import type { NotesService } from './notes.service.ts';

/** How long the employee's model may take to write a summary before the extractive one is used instead. */
export const SUMMARY_MODEL_TIMEOUT_MS = 10_000;
const TRANSCRIPT_MESSAGES = 40;
const TRANSCRIPT_CHARS = 12_000;

/** The employee's model, when it has one: an `openai` employee's connector and model. */
export interface SummaryModel {
  employeeId: string;
  employeeName: string;
  /** One non-streamed chat completion; resolves with its text. */
  complete(system: string, user: string, signal: AbortSignal): Promise<string>;
}

export interface HandoverSummaryDeps {
  /** The conversation's latest messages (no notes), oldest first. */
  transcript(conversationId: string, limit: number): Promise<MessageSnapshot[]>;
  /** The latest notes of the conversation, newest first (to skip a summary already written for this hand-over). */
  latestSummaryAfter(conversationId: string): Promise<boolean>;
  modelFor(conversation: Conversation): Promise<SummaryModel | undefined>;
  notes: Pick<NotesService, 'addNote'>;
  logger: Logger;
}

const PROMPT =
  'You summarise a support chat for the human agent who takes it over now. In 2 to 4 short sentences: what the ' +
  'visitor wants, what they were already told, and what is still open. Plain text, no greeting.';

/**
 * The note agents get when a conversation is handed to a person (docs/design.md "Hand-over summaries"): written by
 * the digital employee's model when it is an `openai` one (one non-streamed request, bounded in time), extractive
 * otherwise or when the model fails — the visitor's last questions and the last answer they got. Written once per
 * hand-over: a second trigger (e.g. queued, then assigned) with nothing new from the visitor adds nothing.
 */
export class HandoverSummaries {
  /** The summary being written per conversation on this node. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly deps: HandoverSummaryDeps) {}

  /**
   * One hand-over often fires several triggers at once (taking over is a hand-over and an assignment): they are
   * chained per conversation, so the later ones find the first one's note and add none (without this both read "no
   * summary yet" before either wrote, and the model was asked twice).
   */
  write(conversation: Conversation): Promise<void> {
    const previous = this.writing.get(conversation.id) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.writeOnce(conversation));
    this.writing.set(conversation.id, next);
    const forget = () => {
      if (this.writing.get(conversation.id) === next) this.writing.delete(conversation.id);
    };
    next.then(forget, forget);
    return next;
  }

  private async writeOnce(conversation: Conversation): Promise<void> {
    if (await this.deps.latestSummaryAfter(conversation.id)) return;
    const messages = await this.deps.transcript(conversation.id, TRANSCRIPT_MESSAGES);
    if (!messages.some((m) => m.role === 'user')) return;
    const byModel = await this.byModel(conversation, messages);
    const text = byModel?.text;
    await this.deps.notes.addNote(conversation.companyId, conversation.id, {
      text: handoverSummaryNoteText(text ?? extractiveSummary(messages)),
      kind: 'handover_summary',
      author: byModel
        ? { type: 'digital_employee', id: byModel.model.employeeId, name: byModel.model.employeeName }
        : { type: 'system', id: 'system', name: 'Parley' },
    });
  }

  /**
   * The summary of `messages` by the conversation's model (one non-streamed request, bounded in time), or undefined
   * when its employee has no model or the model fails (logged): callers then use an extractive summary. Also what
   * "Summarise" on demand asks first (packages/server/src/workspace/workspace.portal.routes.ts).
   */
  async byModel(
    conversation: Conversation,
    messages: MessageSnapshot[],
  ): Promise<{ text: string; model: SummaryModel } | undefined> {
    const model = await this.deps.modelFor(conversation).catch(() => undefined);
    if (!model) return undefined;
    try {
      const text = (
        await model.complete(PROMPT, transcriptText(messages), AbortSignal.timeout(SUMMARY_MODEL_TIMEOUT_MS))
      ).trim();
      return text ? { text, model } : undefined;
    } catch (err) {
      this.deps.logger.warn(
        { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
        'the model could not summarise the conversation; using the extractive summary',
      );
      return undefined;
    }
  }
}

/** The transcript as the model reads it: one line per message, role first, bounded in length (newest kept). */
export function transcriptText(messages: MessageSnapshot[]): string {
  const lines = messages
    .filter((m) => m.status === 'complete' && m.role !== 'system' && m.role !== 'note')
    .map(
      (m) => `${m.role === 'user' ? 'Visitor' : m.role === 'agent' ? 'Agent' : 'Assistant'}: ${textOf(m)}`,
    );
  const text = lines.join('\n');
  return text.length > TRANSCRIPT_CHARS ? text.slice(-TRANSCRIPT_CHARS) : text;
}

const clip = (text: string, max: number) => {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

/** The visitor's last (up to) three messages and the last answer they got, quoted. */
export function extractiveSummary(messages: MessageSnapshot[]): string {
  const complete = messages.filter((m) => m.status === 'complete');
  const asked = complete
    .filter((m) => m.role === 'user')
    .slice(-3)
    .map((m) => `- ${clip(textOf(m), 300)}`)
    .filter((line) => line !== '- ');
  const answer = [...complete].reverse().find((m) => m.role === 'digital_employee' || m.role === 'agent');
  const parts = ['The visitor asked:', ...asked];
  parts.push('', answer ? `Last answer: ${clip(textOf(answer), 400)}` : 'Nothing was answered yet.');
  return parts.join('\n');
}
