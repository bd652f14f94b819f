import { type MessageSnapshot, readInteractiveBlocks } from '@parley/webchat-protocol';
import type { ConnectorCaller } from '../connector-ports.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import { SETTINGS_DEFAULTS } from '../digital-employees.settings.ts';
import { backstopFor, SilenceDeadline } from './deadline.ts';
import type { ReplyChunk, Responder, RespondInput } from './responder.ts';
import {
  ResponderBadResponseError,
  ResponderHttpError,
  ResponderMisconfiguredError,
} from './responder-errors.ts';
import { lines, mediaTypeOf, textChunks } from './response-reading.ts';
import { toResponderError } from './to-responder-error.ts';

/** The JSON body Parley POSTs to a webhook bot (docs/design.md "Digital employees"). */
export interface WebhookRequestBody {
  conversation_id: string;
  company_id: string;
  message: MessageSnapshot;
  history: MessageSnapshot[];
}

/**
 * A bot behind the company's own HTTP endpoint: POSTs the conversation to the webhook connector's URL with the
 * connector's current key as bearer, and accepts either one JSON `{"reply": "markdown", "blocks"?: […]}` or an
 * NDJSON stream of `{"delta": "text"}` lines (yielded as they arrive) whose last line may be `{"blocks": […]}`
 * (interactive blocks, docs/design.md "Interactive blocks").
 */
export class WebhookResponder implements Responder {
  constructor(
    private readonly employee: Pick<DigitalEmployee, 'connectorId' | 'settings'>,
    private readonly connectors: ConnectorCaller,
  ) {}

  get historyLimit(): number {
    return this.employee.settings.history_limit ?? SETTINGS_DEFAULTS.historyLimit;
  }

  async *respond(input: RespondInput): AsyncIterable<ReplyChunk> {
    const connectorId = this.employee.connectorId;
    if (!connectorId) throw new ResponderMisconfiguredError('no connector is set');
    const timeoutMs = this.employee.settings.timeout_ms ?? SETTINGS_DEFAULTS.timeoutMs.webhook;
    const deadline = new SilenceDeadline(input.signal, timeoutMs);
    try {
      deadline.throwIfStopped();
      let response: Response;
      try {
        response = await this.connectors.fetch(input.companyId, connectorId, '', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/x-ndjson, application/json' },
          body: JSON.stringify(this.requestBody(input)),
          signal: deadline.signal,
          timeoutMs: backstopFor(timeoutMs),
          // A bot that redirects is misconfigured; following it could carry the key elsewhere.
          redirect: 'error',
        });
      } catch (err) {
        throw toResponderError(err, deadline, timeoutMs);
      }
      deadline.touch();
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new ResponderHttpError(response.status);
      }
      const type = mediaTypeOf(response);
      const requestHuman = input.requestHuman ?? (() => {});
      if (type === 'application/json') yield* await jsonReply(response, deadline, timeoutMs, requestHuman);
      else if (type === 'application/x-ndjson')
        yield* ndjsonDeltas(response, deadline, timeoutMs, requestHuman);
      else {
        await response.body?.cancel().catch(() => {});
        throw new ResponderBadResponseError(`unexpected content type "${type || '(none)'}"`);
      }
      // A body that ended because the call was aborted is never a complete reply.
      deadline.throwIfStopped();
    } finally {
      deadline.dispose();
    }
  }

  private requestBody(input: RespondInput): WebhookRequestBody {
    const limit = this.historyLimit;
    return {
      conversation_id: input.conversationId,
      company_id: input.companyId,
      message: input.message,
      history: limit === 0 ? [] : input.history.slice(-limit),
    };
  }
}

/** `{"reply": "…", "blocks"?: […], "handover"?: true}`: the flag asks for a person (docs/routing.md). */
async function jsonReply(
  response: Response,
  deadline: SilenceDeadline,
  timeoutMs: number,
  requestHuman: () => void,
): Promise<ReplyChunk[]> {
  let text = '';
  for await (const chunk of textChunks(response, deadline, timeoutMs)) text += chunk;
  const body = parseJson(text, 'the body is not valid JSON');
  if (!isObject(body) || typeof body.reply !== 'string')
    throw new ResponderBadResponseError('the JSON body has no string "reply"');
  const chunks =
    body.blocks === undefined ? [body.reply] : [body.reply, interactive(body.blocks, '"blocks"')];
  if (body.handover === true) requestHuman();
  return chunks;
}

/**
 * `{"delta": "text"}` lines, and optionally a last `{"blocks": […]}` line: blocks belong after the whole text, so
 * a delta after them is refused rather than reordered.
 */
async function* ndjsonDeltas(
  response: Response,
  deadline: SilenceDeadline,
  timeoutMs: number,
  requestHuman: () => void,
): AsyncGenerator<ReplyChunk> {
  let lineNumber = 0;
  let blocksLine: number | undefined;
  for await (const line of lines(textChunks(response, deadline, timeoutMs))) {
    lineNumber++;
    if (line.trim() === '') continue;
    const item = parseJson(line, `line ${lineNumber} is not valid JSON`);
    // A line `{"handover": true}` (anywhere, alone or beside a delta or blocks) asks for a person.
    const handover = isObject(item) && item.handover === true;
    if (handover) requestHuman();
    if (handover && item.delta === undefined && item.blocks === undefined) continue;
    if (blocksLine !== undefined)
      throw new ResponderBadResponseError(`line ${lineNumber} follows the "blocks" line ${blocksLine}`);
    if (isObject(item) && item.blocks !== undefined && item.delta === undefined) {
      blocksLine = lineNumber;
      yield interactive(item.blocks, `line ${lineNumber} "blocks"`);
      continue;
    }
    if (!isObject(item) || typeof item.delta !== 'string') {
      throw new ResponderBadResponseError(`line ${lineNumber} has no string "delta"`);
    }
    if (item.delta) yield item.delta;
  }
}

/** A bot's interactive blocks, checked by the protocol's one rule set; a broken one fails the whole reply. */
function interactive(value: unknown, where: string): ReplyChunk {
  const reading = readInteractiveBlocks(value, 'blocks');
  if (reading.problem) throw new ResponderBadResponseError(`${where}: ${reading.problem.message}`);
  return { blocks: reading.blocks };
}

function parseJson(text: string, problem: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ResponderBadResponseError(problem);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
