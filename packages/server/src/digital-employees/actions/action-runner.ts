import { boundedText } from '../../http/bounded-body.ts';
import type { ConnectorCaller } from '../connector-ports.ts';
import { type Action, argumentsProblem, pathParams } from './actions.service.ts';

/** Largest response body of an action that goes back to the model (docs/design.md "Actions"). */
export const ACTION_RESPONSE_MAX_BYTES = 64 * 1024;

export type ActionOutcome = 'ok' | 'http_error' | 'invalid_arguments' | 'timeout' | 'failed' | 'too_large';

export interface ActionCallResult {
  outcome: ActionOutcome;
  /** The connector's HTTP status, when it answered. */
  status: number | null;
  durationMs: number;
  /** What goes back to the model as the tool message: the response body, or a description of the failure. */
  toolContent: string;
}

/** One action call as the transcript and the audit log record it (never the connector's key). */
export interface ActionCallRecord {
  companyId: string;
  conversationId: string;
  digitalEmployeeId: string;
  digitalEmployeeName: string;
  /** The action's name, or `handover` for the built-in tool. */
  action: string;
  connectorId: string | null;
  arguments: string;
  result: ActionCallResult;
}

/**
 * What a responder needs for actions, given by the composition root (webchat.ts): the employee's actions, the
 * time-out of one call, and where each call is recorded (audit log, and a note in the transcript for agents).
 */
export interface ActionsPort {
  listFor(companyId: string, employeeId: string): Promise<Action[]>;
  timeoutMs: number;
  record(call: ActionCallRecord): Promise<void>;
}

const failure = (
  outcome: ActionOutcome,
  message: string,
  started: number,
  status: number | null = null,
): ActionCallResult => ({
  outcome,
  status,
  durationMs: Math.round(performance.now() - started),
  toolContent: JSON.stringify({ error: message }),
});

/**
 * Calls an action as the model asked: the arguments (JSON text) are validated against the action's schema, path
 * parameters are filled in URL-encoded (RFC 3986 §3.3), the remaining arguments go as the query (GET) or a JSON
 * body (POST), through the connector (its current key as the bearer credential, the outbound destination policy),
 * within `timeoutMs`, reading at most 64 KiB. Never throws for the action's own failures: each becomes a result the
 * model can read. Throws only when `signal` (the reply) aborted.
 */
export async function runAction(
  connectors: ConnectorCaller,
  companyId: string,
  action: Action,
  rawArguments: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<ActionCallResult> {
  const started = performance.now();
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch {
    return failure('invalid_arguments', 'The arguments are not valid JSON.', started);
  }
  const problem = argumentsProblem(action, args);
  if (problem)
    return failure('invalid_arguments', `Invalid arguments: ${problem}. Nothing was called.`, started);
  const rest = { ...(args as Record<string, unknown>) };
  let path = action.path;
  for (const name of pathParams(action.path)) {
    path = path.replaceAll(`{${name}}`, encodeURIComponent(String(rest[name])));
    delete rest[name];
  }
  const init: RequestInit & { timeoutMs?: number } = { method: action.method, timeoutMs: options.timeoutMs };
  if (action.method === 'GET') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(rest))
      if (value !== undefined && value !== null)
        query.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
    const search = query.toString();
    if (search) path = `${path}?${search}`;
  } else {
    init.body = JSON.stringify(rest);
    init.headers = { 'content-type': 'application/json', accept: 'application/json' };
  }
  const timeout = AbortSignal.timeout(options.timeoutMs);
  init.signal = AbortSignal.any([options.signal, timeout]);
  try {
    const response = await connectors.fetch(companyId, action.connector_id, path, init);
    const body = await boundedText(response, ACTION_RESPONSE_MAX_BYTES);
    const durationMs = Math.round(performance.now() - started);
    if (body === undefined)
      return failure(
        'too_large',
        `The response was larger than ${ACTION_RESPONSE_MAX_BYTES} bytes.`,
        started,
        response.status,
      );
    if (!response.ok)
      return {
        outcome: 'http_error',
        status: response.status,
        durationMs,
        toolContent: JSON.stringify({
          error: `The service answered HTTP ${response.status}.`,
          body: body.slice(0, 2000),
        }),
      };
    return { outcome: 'ok', status: response.status, durationMs, toolContent: body };
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    if (timeout.aborted || (err as { code?: string }).code === 'connector_timeout')
      return failure('timeout', `The service did not answer within ${options.timeoutMs} ms.`, started);
    const code = (err as { code?: string }).code;
    return failure('failed', `The call failed${code ? ` (${code})` : ''}.`, started);
  }
}
