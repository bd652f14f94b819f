import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamPosition } from '../broker/types.ts';
import { encodePresence, encodePublications, toStreamPosition } from '../protocol/codec.ts';
import { DisconnectCode, ErrorCode, UNAVAILABLE_ERROR_CODE, UnsubscribeCode } from '../protocol/codes.ts';
import { ClientError, isBrokerUnavailable, toClientError } from '../protocol/errors.ts';
import { exceedsJsonDepth } from '../protocol/json-depth.ts';
import { TokenError } from '../tokens/jwt.ts';
import { parseOverride } from '../tokens/verifier.ts';
import { channelPresenceStats, publishToChannel, removeChannelHistory } from './channel-api.ts';
import type { Cluster } from './cluster.ts';
import type { EngineCore } from './core.ts';

/**
 * Centrifugo v6 server HTTP API (`POST /api/<method>`, CFGO `internal/api`): `X-API-Key` or
 * `Authorization: apikey <key>` (401 otherwise), JSON body, reply `{"result": …}` or `{"error": {code, message}}`
 * with status 200; with header `X-Centrifugo-Error-Mode: transport` errors use HTTP statuses instead.
 */

type Body = Record<string, unknown>;

/**
 * The parts of a node the API works with: its shared state, and the cluster for commands that cross nodes.
 */
export interface ApiNode {
  readonly core: EngineCore;
  readonly cluster: Cluster;
}

type Method = (node: ApiNode, body: Body) => Promise<string>;

class BadRequestBody extends Error {}

function keyMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isAuthorized(core: EngineCore, request: IncomingMessage): boolean {
  if (core.options.apiInsecure) return true;
  const key = core.options.apiKey;
  if (key === undefined) return false;
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return keyMatches(key, header);
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const parts = authorization.trim().split(/\s+/);
    if (parts.length === 2 && parts[0]!.toLowerCase() === 'apikey') return keyMatches(key, parts[1]!);
  }
  return false;
}

async function readBody(request: IncomingMessage, limit: number): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BadRequestBody('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  if (exceedsJsonDepth(text)) throw new BadRequestBody('JSON nested too deeply');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestBody('malformed JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new BadRequestBody('body must be an object');
  return value as Body;
}

function str(body: Body, name: string): string {
  const value = body[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ClientError(ErrorCode.badRequest);
  return value;
}

function optionalTags(body: Body): Record<string, string> | undefined {
  const tags = body.tags;
  if (tags === undefined || tags === null) return undefined;
  if (typeof tags !== 'object' || Array.isArray(tags)) throw new ClientError(ErrorCode.badRequest);
  return tags as Record<string, string>;
}

/**
 * A `bytes` field of the body as raw JSON: `<name>` (embedded JSON), or `b64<name>` decoded — which must hold JSON
 * too, as publications are shared with JSON clients (docs/protocol.md "Server HTTP API").
 */
function rawJson(body: Body, name: 'data' | 'info'): string | undefined {
  const b64 = str(body, `b64${name}`);
  if (b64 !== '') {
    const text = Buffer.from(b64, 'base64').toString('utf8');
    try {
      return JSON.stringify(JSON.parse(text));
    } catch {
      throw new ClientError(ErrorCode.badRequest);
    }
  }
  const value = body[name];
  return value === undefined || value === null ? undefined : JSON.stringify(value);
}

function rawData(body: Body): string {
  return rawJson(body, 'data') ?? '';
}

function int(body: Body, name: string): number {
  const value = body[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ClientError(ErrorCode.badRequest);
  return value;
}

/** `client` and `session` narrow an operation on a user to one connection. */
function targetOf(body: Body): { clientId?: string; sessionId?: string } {
  const client = str(body, 'client');
  const session = str(body, 'session');
  return {
    ...(client !== '' ? { clientId: client } : {}),
    ...(session !== '' ? { sessionId: session } : {}),
  };
}

function positionJson(position: { offset?: number; epoch?: string }): string {
  const parts: string[] = [];
  if (position.offset) parts.push(`"offset":${position.offset}`);
  if (position.epoch) parts.push(`"epoch":${JSON.stringify(position.epoch)}`);
  return `{${parts.join(',')}}`;
}

function errorJson(error: ClientError): string {
  return `{"code":${error.protocolCode},"message":${JSON.stringify(error.message)}}`;
}

async function publishOne(core: EngineCore, channel: string, body: Body, data: string): Promise<string> {
  if (channel === '') throw new ClientError(ErrorCode.badRequest);
  const tags = optionalTags(body);
  const idempotencyKey = str(body, 'idempotency_key');
  const position = await publishToChannel(core, {
    channel,
    rawData: data,
    skipHistory: body.skip_history === true,
    ...(body.delta === true ? { delta: true } : {}),
    ...(tags !== undefined ? { tags } : {}),
    ...(idempotencyKey !== '' ? { idempotencyKey } : {}),
  });
  return positionJson(position);
}

const METHODS: Record<string, Method> = {
  async publish({ core }, body) {
    return publishOne(core, str(body, 'channel'), body, rawData(body));
  },

  async broadcast({ core }, body) {
    const channels = body.channels;
    if (!Array.isArray(channels) || channels.length === 0) throw new ClientError(ErrorCode.badRequest);
    const data = rawData(body);
    const responses = await Promise.all(
      channels.map(async (channel) => {
        try {
          if (typeof channel !== 'string') throw new ClientError(ErrorCode.badRequest);
          return `{"result":${await publishOne(core, channel, body, data)}}`;
        } catch (error) {
          return `{"error":${errorJson(asApiError(core, error))}}`;
        }
      }),
    );
    return `{"responses":[${responses.join(',')}]}`;
  },

  async history({ core }, body) {
    const channel = str(body, 'channel');
    const options = core.channelOptions(channel);
    const limit = typeof body.limit === 'number' && Number.isInteger(body.limit) ? body.limit : 0;
    let since: StreamPosition | undefined;
    if (body.since !== undefined && body.since !== null) {
      if (typeof body.since !== 'object') throw new ClientError(ErrorCode.badRequest);
      since = toStreamPosition(body.since);
    }
    const result = await core.readHistory(channel, options, {
      since,
      limit,
      reverse: body.reverse === true,
    });
    return `{"publications":${encodePublications(result.publications)},"epoch":${JSON.stringify(result.position.epoch)},"offset":${result.position.offset}}`;
  },

  async history_remove({ core }, body) {
    await removeChannelHistory(core, str(body, 'channel'));
    return '{}';
  },

  async presence({ core }, body) {
    const channel = str(body, 'channel');
    if (!core.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
    return `{"presence":${encodePresence(await core.presenceManager.presence(channel))}}`;
  },

  async presence_stats({ core }, body) {
    const stats = await channelPresenceStats(core, str(body, 'channel'));
    return `{"num_clients":${stats.numClients},"num_users":${stats.numUsers}}`;
  },

  async subscribe({ core, cluster }, body) {
    const channel = str(body, 'channel');
    core.channelOptions(channel);
    let override: ReturnType<typeof parseOverride>;
    try {
      override = parseOverride(body.override);
    } catch (error) {
      if (error instanceof TokenError) throw new ClientError(ErrorCode.badRequest);
      throw error;
    }
    const since = body.recover_since;
    if (since !== undefined && since !== null && typeof since !== 'object') {
      throw new ClientError(ErrorCode.badRequest);
    }
    const data = rawJson(body, 'data');
    const info = rawJson(body, 'info');
    const expireAt = int(body, 'expire_at');
    await cluster.subscribeUser(
      str(body, 'user'),
      {
        channel,
        ...(data !== undefined ? { data } : {}),
        ...(info !== undefined ? { info } : {}),
        ...(expireAt > 0 ? { expireAt } : {}),
        ...(override !== undefined ? { override } : {}),
        ...(since ? { recoverSince: toStreamPosition(since) } : {}),
      },
      targetOf(body),
    );
    return '{}';
  },

  async unsubscribe({ core, cluster }, body) {
    const channel = str(body, 'channel');
    if (channel !== '') core.channelOptions(channel);
    await cluster.unsubscribe(str(body, 'user'), channel, {
      code: UnsubscribeCode.server,
      ...targetOf(body),
    });
    return '{}';
  },

  async refresh({ cluster }, body) {
    const info = rawJson(body, 'info');
    await cluster.refreshUser(
      str(body, 'user'),
      {
        expired: body.expired === true,
        expireAt: int(body, 'expire_at'),
        ...(info !== undefined ? { info } : {}),
      },
      targetOf(body),
    );
    return '{}';
  },

  async disconnect({ cluster }, body) {
    const custom = body.disconnect as { code?: unknown; reason?: unknown } | undefined;
    const code = typeof custom?.code === 'number' ? custom.code : DisconnectCode.forceNoReconnect;
    const whitelist = Array.isArray(body.whitelist)
      ? body.whitelist.filter((c) => typeof c === 'string')
      : [];
    await cluster.disconnectUser(str(body, 'user'), {
      code,
      ...(typeof custom?.reason === 'string' ? { reason: custom.reason } : {}),
      ...targetOf(body),
      ...(whitelist.length > 0 ? { whitelist } : {}),
    });
    return '{}';
  },

  async channels({ cluster }, body) {
    const channels = await cluster.channels(str(body, 'pattern') || undefined);
    return `{"channels":${JSON.stringify(channels)}}`;
  },

  async info({ cluster }) {
    return `{"nodes":${JSON.stringify(cluster.info())}}`;
  },

  /** Centrifugo answers RPC extensions registered in Go; this engine has none: every method is 104. */
  async rpc() {
    throw new ClientError(ErrorCode.methodNotFound, 'not found');
  },

  async batch(node, body) {
    const commands = body.commands ?? [];
    // Centrifugo v6 cannot decode such a body into a BatchRequest: HTTP 400, like any undecodable body.
    if (!Array.isArray(commands)) throw new BadRequestBody('commands must be an array');
    const run = (command: unknown) => runBatchCommand(node, command);
    // `parallel: true` runs the commands at once; otherwise one after another, in order (Centrifugo `Batch`).
    const replies =
      body.parallel === true
        ? await Promise.all(commands.map(run))
        : await commands.reduce<Promise<string[]>>(
            async (done, command) => [...(await done), await run(command)],
            Promise.resolve([]),
          );
    return `{"replies":[${replies.join(',')}]}`;
  },
};

/**
 * Methods whose answer is their response object itself, not `{"result": …}`: Centrifugo v6 answers `batch` with
 * its BatchResponse, `{"replies":[…]}` (one reply per command, in order), which `cent`, `gocent` and `phpcent` read.
 */
const UNWRAPPED = new Set(['batch']);

/** The methods a batch may hold, in the order Centrifugo looks for them in a command. */
const BATCH_METHODS = [
  'publish',
  'broadcast',
  'subscribe',
  'unsubscribe',
  'disconnect',
  'history',
  'history_remove',
  'presence',
  'presence_stats',
  'info',
  'rpc',
  'refresh',
  'channels',
] as const;

/** One command of a batch: `{"<method>": {…}}` → `{"<method>": result}` or `{"error": …}`; unknown → 104. */
async function runBatchCommand(node: ApiNode, command: unknown): Promise<string> {
  try {
    if (command === null || typeof command !== 'object' || Array.isArray(command)) {
      throw new ClientError(ErrorCode.badRequest);
    }
    const entry = command as Body;
    const name = BATCH_METHODS.find((m) => entry[m] !== undefined && entry[m] !== null);
    if (name === undefined) throw new ClientError(ErrorCode.methodNotFound, 'not found');
    const request = entry[name];
    if (typeof request !== 'object' || Array.isArray(request)) throw new ClientError(ErrorCode.badRequest);
    return `{"${name}":${await METHODS[name]!(node, request as Body)}}`;
  } catch (error) {
    return `{"error":${errorJson(asApiError(node.core, error))}}`;
  }
}

/** HTTP status for an API error in transport error mode (CFGO `MapErrorToHTTPCode`). */
function httpStatusOf(code: number): number {
  switch (code) {
    case ErrorCode.unknownChannel:
    case ErrorCode.methodNotFound:
      return 404;
    case ErrorCode.badRequest:
    case ErrorCode.notAvailable:
      return 400;
    case ErrorCode.unrecoverablePosition:
      return 416;
    case UNAVAILABLE_ERROR_CODE:
      return 503;
    default:
      return 500;
  }
}

function asApiError(core: EngineCore, error: unknown): ClientError {
  if (error instanceof ClientError) return error;
  if (isBrokerUnavailable(error)) {
    core.logger.warn({ error: String(error) }, 'server API call failed: broker unavailable');
    return toClientError(error);
  }
  core.logger.error({ error: String(error) }, 'server API call failed');
  return new ClientError(ErrorCode.internal);
}

function send(response: ServerResponse, status: number, body: string, type = 'application/json'): void {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** Serves one API request; false when the path is outside the API prefix (the host then handles it). */
export async function handleApiRequest(
  node: ApiNode,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const { core } = node;
  const prefix = core.options.apiPrefix;
  const pathname = (request.url ?? '/').split('?')[0]!;
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return false;
  if (!isAuthorized(core, request)) {
    send(response, 401, 'Unauthorized\n', 'text/plain');
    return true;
  }
  const name = pathname.slice(prefix.length + 1);
  const method = Object.hasOwn(METHODS, name) ? METHODS[name] : undefined;
  if (method === undefined) {
    send(response, 404, 'Not Found\n', 'text/plain');
    return true;
  }
  if (request.method !== 'POST') {
    response.setHeader('Allow', 'POST');
    send(response, 405, 'Method Not Allowed\n', 'text/plain');
    return true;
  }
  let body: Body;
  try {
    body = await readBody(request, core.options.apiMaxBodyBytes);
  } catch (error) {
    send(response, error instanceof BadRequestBody ? 400 : 500, 'Bad Request\n', 'text/plain');
    return true;
  }
  try {
    const result = await method(node, body);
    send(response, 200, UNWRAPPED.has(name) ? result : `{"result":${result}}`);
  } catch (error) {
    if (error instanceof BadRequestBody) {
      send(response, 400, 'Bad Request\n', 'text/plain');
      return true;
    }
    const apiError = asApiError(core, error);
    if (core.options.apiTransportErrorMode || request.headers['x-centrifugo-error-mode'] === 'transport') {
      send(response, httpStatusOf(apiError.protocolCode), errorJson(apiError));
    } else {
      send(response, 200, `{"error":${errorJson(apiError)}}`);
    }
  }
  return true;
}
