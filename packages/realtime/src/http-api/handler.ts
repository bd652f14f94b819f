import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamPosition } from '../broker/types.ts';
import type { RealtimeEngine } from '../engine/engine.ts';
import { encodePresence, encodePublications, toStreamPosition } from '../protocol/codec.ts';
import { DisconnectCode, ErrorCode, UnsubscribeCode } from '../protocol/codes.ts';
import { ClientError } from '../protocol/errors.ts';

/**
 * Centrifugo v6 server HTTP API (`POST /api/<method>`, CFGO `internal/api`): `X-API-Key` or
 * `Authorization: apikey <key>` (401 otherwise), JSON body, reply `{"result": …}` or `{"error": {code, message}}`
 * with status 200; with header `X-Centrifugo-Error-Mode: transport` errors use HTTP statuses instead.
 */

type Body = Record<string, unknown>;
type Method = (engine: RealtimeEngine, body: Body) => Promise<string>;

class BadRequestBody extends Error {}

function keyMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isAuthorized(engine: RealtimeEngine, request: IncomingMessage): boolean {
  if (engine.options.apiInsecure) return true;
  const key = engine.options.apiKey;
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

/** `data` as raw JSON, or `b64data` decoded (must hold JSON in this JSON-only engine). */
function rawData(body: Body): string {
  const b64 = str(body, 'b64data');
  if (b64 !== '') {
    const text = Buffer.from(b64, 'base64').toString('utf8');
    try {
      return JSON.stringify(JSON.parse(text));
    } catch {
      throw new ClientError(ErrorCode.badRequest);
    }
  }
  return body.data === undefined ? '' : JSON.stringify(body.data);
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

async function publishOne(
  engine: RealtimeEngine,
  channel: string,
  body: Body,
  data: string,
): Promise<string> {
  if (channel === '') throw new ClientError(ErrorCode.badRequest);
  const tags = optionalTags(body);
  const idempotencyKey = str(body, 'idempotency_key');
  const position = await engine.publish({
    channel,
    rawData: data,
    skipHistory: body.skip_history === true,
    ...(tags !== undefined ? { tags } : {}),
    ...(idempotencyKey !== '' ? { idempotencyKey } : {}),
  });
  return positionJson(position);
}

const METHODS: Record<string, Method> = {
  async publish(engine, body) {
    return publishOne(engine, str(body, 'channel'), body, rawData(body));
  },

  async broadcast(engine, body) {
    const channels = body.channels;
    if (!Array.isArray(channels) || channels.length === 0) throw new ClientError(ErrorCode.badRequest);
    const data = rawData(body);
    const responses = await Promise.all(
      channels.map(async (channel) => {
        try {
          if (typeof channel !== 'string') throw new ClientError(ErrorCode.badRequest);
          return `{"result":${await publishOne(engine, channel, body, data)}}`;
        } catch (error) {
          return `{"error":${errorJson(asApiError(engine, error))}}`;
        }
      }),
    );
    return `{"responses":[${responses.join(',')}]}`;
  },

  async history(engine, body) {
    const channel = str(body, 'channel');
    const options = engine.channelOptions(channel);
    const limit = typeof body.limit === 'number' && Number.isInteger(body.limit) ? body.limit : 0;
    let since: StreamPosition | undefined;
    if (body.since !== undefined && body.since !== null) {
      if (typeof body.since !== 'object') throw new ClientError(ErrorCode.badRequest);
      since = toStreamPosition(body.since);
    }
    const result = await engine.readHistory(channel, options, {
      since,
      limit,
      reverse: body.reverse === true,
    });
    return `{"publications":${encodePublications(result.publications)},"epoch":${JSON.stringify(result.position.epoch)},"offset":${result.position.offset}}`;
  },

  async history_remove(engine, body) {
    await engine.removeHistory(str(body, 'channel'));
    return '{}';
  },

  async presence(engine, body) {
    const channel = str(body, 'channel');
    if (!engine.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
    return `{"presence":${encodePresence(await engine.presenceManager.presence(channel))}}`;
  },

  async presence_stats(engine, body) {
    const stats = await engine.presenceStats(str(body, 'channel'));
    return `{"num_clients":${stats.numClients},"num_users":${stats.numUsers}}`;
  },

  async unsubscribe(engine, body) {
    const channel = str(body, 'channel');
    if (channel !== '') engine.channelOptions(channel);
    const client = str(body, 'client');
    await engine.unsubscribe(str(body, 'user'), channel, {
      code: UnsubscribeCode.server,
      ...(client !== '' ? { clientId: client } : {}),
    });
    return '{}';
  },

  async disconnect(engine, body) {
    const custom = body.disconnect as { code?: unknown; reason?: unknown } | undefined;
    const code = typeof custom?.code === 'number' ? custom.code : DisconnectCode.forceNoReconnect;
    const client = str(body, 'client');
    const whitelist = Array.isArray(body.whitelist)
      ? body.whitelist.filter((c) => typeof c === 'string')
      : [];
    await engine.disconnectUser(str(body, 'user'), {
      code,
      ...(typeof custom?.reason === 'string' ? { reason: custom.reason } : {}),
      ...(client !== '' ? { clientId: client } : {}),
      ...(whitelist.length > 0 ? { whitelist } : {}),
    });
    return '{}';
  },

  async channels(engine, body) {
    const channels = await engine.channels(str(body, 'pattern') || undefined);
    return `{"channels":${JSON.stringify(channels)}}`;
  },

  async info(engine) {
    return `{"nodes":${JSON.stringify(engine.info().nodes)}}`;
  },
};

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
    default:
      return 500;
  }
}

function asApiError(engine: RealtimeEngine, error: unknown): ClientError {
  if (error instanceof ClientError) return error;
  engine.logger.error({ error: String(error) }, 'server API call failed');
  return new ClientError(ErrorCode.internal);
}

function send(response: ServerResponse, status: number, body: string, type = 'application/json'): void {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** Serves one API request; false when the path is outside the API prefix (the host then handles it). */
export async function handleApiRequest(
  engine: RealtimeEngine,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const prefix = engine.options.apiPrefix;
  const pathname = (request.url ?? '/').split('?')[0]!;
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return false;
  if (!isAuthorized(engine, request)) {
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
    body = await readBody(request, engine.options.apiMaxBodyBytes);
  } catch (error) {
    send(response, error instanceof BadRequestBody ? 400 : 500, 'Bad Request\n', 'text/plain');
    return true;
  }
  try {
    send(response, 200, `{"result":${await method(engine, body)}}`);
  } catch (error) {
    const apiError = asApiError(engine, error);
    if (request.headers['x-centrifugo-error-mode'] === 'transport') {
      send(response, httpStatusOf(apiError.protocolCode), errorJson(apiError));
    } else {
      send(response, 200, `{"error":${errorJson(apiError)}}`);
    }
  }
  return true;
}
