import type { ClientInfo, Publication, StreamPosition } from '../broker/types.ts';
import type { ClientError } from './errors.ts';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth.ts';

/**
 * JSON protocol framing (docs/protocol.md "Frames"): a WebSocket text frame carries one or more JSON objects
 * separated by a single `\n`; `bytes` fields (`data`, `info`, `conn_info`, `chan_info`) are embedded raw
 * JSON; zero values are omitted except `ClientInfo.user`/`client`. Pushes are encoded by string concatenation
 * so that one publication is serialised once per channel, whatever the number of subscribers.
 */

export interface StreamPositionRequest {
  offset?: number;
  epoch?: string;
}

/** A decoded client command (PROTO `Command`); fields are untrusted and validated by the handlers. */
export interface Command {
  id?: number;
  connect?: {
    token?: string;
    data?: unknown;
    subs?: Record<string, { recover?: boolean; offset?: number; epoch?: string }>;
    name?: string;
    version?: string;
  };
  subscribe?: {
    channel?: string;
    token?: string;
    data?: unknown;
    recover?: boolean;
    offset?: number;
    epoch?: string;
    positioned?: boolean;
    recoverable?: boolean;
    join_leave?: boolean;
    /** "fossil" asks for delta-compressed publications. */
    delta?: string;
    flag?: number;
  };
  unsubscribe?: { channel?: string };
  publish?: { channel?: string; data?: unknown };
  presence?: { channel?: string };
  presence_stats?: { channel?: string };
  history?: { channel?: string; limit?: number; since?: StreamPositionRequest; reverse?: boolean };
  ping?: object;
  send?: { data?: unknown };
  rpc?: { method?: string; data?: unknown };
  refresh?: { token?: string };
  sub_refresh?: { channel?: string; token?: string };
}

export type CommandMethod =
  | 'connect'
  | 'subscribe'
  | 'unsubscribe'
  | 'publish'
  | 'presence'
  | 'presence_stats'
  | 'history'
  | 'ping'
  | 'send'
  | 'rpc'
  | 'refresh'
  | 'sub_refresh';

/** Method fields in PROTO order; the first non-null one wins (docs/protocol.md "Commands and replies"). */
export const COMMAND_METHODS: readonly CommandMethod[] = [
  'connect',
  'subscribe',
  'unsubscribe',
  'publish',
  'presence',
  'presence_stats',
  'history',
  'ping',
  'send',
  'rpc',
  'refresh',
  'sub_refresh',
];

/** The method of a command, `pong` for the empty command, or `undefined` when it names no known method. */
export function commandMethod(command: Command): CommandMethod | 'pong' | undefined {
  for (const method of COMMAND_METHODS) {
    const value = command[method];
    if (value !== undefined && value !== null) return method;
  }
  return command.id === undefined || command.id === 0 ? 'pong' : undefined;
}

/**
 * An untrusted `{offset, epoch}` (a command's recovery position or history `since`, or an API body's) as a stream
 * position: a missing, non-numeric or non-positive offset reads as 0, a non-string epoch as "".
 */
export function toStreamPosition(
  raw: { offset?: unknown; epoch?: unknown } | null | undefined,
): StreamPosition {
  const offset = raw?.offset;
  const epoch = raw?.epoch;
  return {
    offset: typeof offset === 'number' && offset > 0 ? offset : 0,
    epoch: typeof epoch === 'string' ? epoch : '',
  };
}

export class FrameDecodeError extends Error {
  readonly code = 'realtime_frame_malformed' as const;
}

/**
 * Commands whose JSON nests deeper than `MAX_JSON_DEPTH` (not counting the command's own two levels,
 * `{"publish":{…}}`): decoded only for their id and method, answered 400 "json too deep" by the session before any
 * handler reads them (docs/protocol.md "JSON nesting").
 */
const TOO_DEEP = new WeakSet<Command>();

/** The levels of a command around its `data`: the command object and its method's request object. */
const COMMAND_LEVELS = 2;

export function markTooDeep(command: Command): void {
  TOO_DEEP.add(command);
}

export const isTooDeep = (command: Command): boolean => TOO_DEEP.has(command);

/**
 * Splits a frame into commands. Blank lines are skipped (the Go decoder tolerates one trailing `\n`); anything that
 * is not a JSON object is a decode error, which the session answers with close 3501.
 */
export function decodeFrame(text: string): Command[] {
  const commands: Command[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') continue;
    // Parsing any depth is safe (V8's JSON.parse does not recurse); reading the result is what must not happen.
    const tooDeep = exceedsJsonDepth(line, MAX_JSON_DEPTH + COMMAND_LEVELS);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new FrameDecodeError('malformed JSON command');
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new FrameDecodeError('command is not a JSON object');
    }
    const id = (value as Command).id;
    if (id !== undefined && (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffffffff)) {
      throw new FrameDecodeError('command id must be a uint32');
    }
    if (tooDeep) markTooDeep(value as Command);
    commands.push(value as Command);
  }
  return commands;
}

/** Raw JSON bytes can only contain `\n` as whitespace; the Go encoder strips them, so do we (no blank lines). */
export function safeRawJson(raw: string): string {
  return raw.includes('\n') ? raw.replace(/\n/g, '') : raw;
}

/** A JSON value as raw text for a `bytes` field (undefined stays undefined). */
export function toRawJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return JSON.stringify(value);
}

export function encodeClientInfo(info: ClientInfo): string {
  let out = `{"user":${JSON.stringify(info.user)},"client":${JSON.stringify(info.client)}`;
  if (info.connInfo) out += `,"conn_info":${safeRawJson(info.connInfo)}`;
  if (info.chanInfo) out += `,"chan_info":${safeRawJson(info.chanInfo)}`;
  return `${out}}`;
}

/** A presence map (client id → ClientInfo) as one JSON object, raw infos embedded. */
export function encodePresence(presence: Record<string, ClientInfo>): string {
  const parts: string[] = [];
  for (const clientId in presence)
    parts.push(`${JSON.stringify(clientId)}:${encodeClientInfo(presence[clientId]!)}`);
  return `{${parts.join(',')}}`;
}

/**
 * A publication as JSON. `data` is the embedded JSON by default; a subscription with fossil deltas gets it as a JSON
 * string instead (`dataJson` = the escaped text, or the escaped delta with `delta` set), docs/protocol.md
 * "Delta compression".
 */
export function encodePublication(publication: Publication, dataJson?: string, delta = false): string {
  const fields: string[] = [];
  if (dataJson !== undefined) fields.push(`"data":${dataJson}`);
  else if (publication.data) fields.push(`"data":${safeRawJson(publication.data)}`);
  if (publication.info) fields.push(`"info":${encodeClientInfo(publication.info)}`);
  if (publication.offset) fields.push(`"offset":${publication.offset}`);
  if (publication.tags && Object.keys(publication.tags).length > 0) {
    fields.push(`"tags":${JSON.stringify(publication.tags)}`);
  }
  if (delta) fields.push('"delta":true');
  return `{${fields.join(',')}}`;
}

/** Publications as a JSON list; `escaped` writes each `data` as a JSON string (a subscription with fossil deltas). */
export function encodePublications(publications: readonly Publication[], escaped = false): string {
  const encode = escaped
    ? (p: Publication) => encodePublication(p, JSON.stringify(p.data))
    : (p: Publication) => encodePublication(p);
  return `[${publications.map(encode).join(',')}]`;
}

function push(channel: string, kind: string, body: string): string {
  return `{"push":{"channel":${JSON.stringify(channel)},"${kind}":${body}}}`;
}

export function encodePublicationPush(
  channel: string,
  publication: Publication,
  dataJson?: string,
  delta = false,
): string {
  return push(channel, 'pub', encodePublication(publication, dataJson, delta));
}

export function encodeJoinPush(channel: string, info: ClientInfo): string {
  return push(channel, 'join', `{"info":${encodeClientInfo(info)}}`);
}

export function encodeLeavePush(channel: string, info: ClientInfo): string {
  return push(channel, 'leave', `{"info":${encodeClientInfo(info)}}`);
}

export function encodeUnsubscribePush(channel: string, code: number, reason: string): string {
  return push(channel, 'unsubscribe', `{"code":${code},"reason":${JSON.stringify(reason)}}`);
}

/**
 * The goodbye of an emulation connection before its stream ends (WebSocket uses its close frame instead,
 * docs/protocol.md "Pushes").
 */
export function encodeDisconnectPush(code: number, reason: string): string {
  return `{"push":{"disconnect":{"code":${code},"reason":${JSON.stringify(reason)}}}}`;
}

/** `message` pushes carry no channel; the Go encoder omits the empty string. */
export function encodeMessagePush(rawData: string): string {
  return `{"push":{"message":{"data":${safeRawJson(rawData)}}}}`;
}

/** A reply to command `id` whose result is already encoded JSON. */
export function encodeReply(id: number, method: CommandMethod, resultJson: string): string {
  return `{"id":${id},"${method}":${resultJson}}`;
}

export function encodeErrorReply(id: number, error: ClientError): string {
  const temporary = error.temporary ? ',"temporary":true' : '';
  return `{"id":${id},"error":{"code":${error.protocolCode},"message":${JSON.stringify(error.message)}${temporary}}}`;
}

/** A server ping: an empty Reply (no id, no push), docs/protocol.md "Ping and pong". */
export const PING_FRAME = '{}';

/** Builds an object from already-encoded fields, skipping the undefined ones (zero values stay off the wire). */
export function encodeObject(fields: Record<string, string | undefined>): string {
  const parts: string[] = [];
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) parts.push(`"${key}":${value}`);
  }
  return `{${parts.join(',')}}`;
}
