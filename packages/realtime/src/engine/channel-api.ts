import type { ClientInfo, StreamPosition } from '../broker/types.ts';
import { ErrorCode } from '../protocol/codes.ts';
import { ClientError } from '../protocol/errors.ts';
import type { EngineCore } from './core.ts';
import { isValidPublicationData } from './namespaces.ts';

/**
 * Server-side channel operations: what `RealtimeEngine.publish/history/removeHistory/presence/presenceStats`
 * and the server HTTP API do. No client permissions apply; namespace rules do (102 unknown channel, 107 bad
 * name or data, 108 when the namespace keeps no history or presence).
 */

/** A publication as the engine API returns it: `data` parsed, ClientInfo with parsed infos. */
export interface HistoryPublication {
  data: unknown;
  offset?: number;
  info?: PresenceEntry;
  tags?: Record<string, string>;
}

export interface PresenceEntry {
  user: string;
  client: string;
  connInfo?: unknown;
  chanInfo?: unknown;
}

export interface PublishOptions {
  channel: string;
  /** JSON value to publish. */
  data?: unknown;
  /** Already-serialised JSON (used instead of `data`, avoids a parse/serialise round trip). */
  rawData?: string;
  /** Do not append to history even if the namespace keeps it. */
  skipHistory?: boolean;
  /**
   * Deliver as a fossil delta to subscribers that negotiated it (Centrifugo `delta`; the namespace's `delta_publish`
   * does it for every publication).
   */
  delta?: boolean;
  tags?: Record<string, string>;
  /** Publish at most once per key within the idempotency window (5 min). */
  idempotencyKey?: string;
  /** Publisher info attached to the publication (`pub.info`). */
  info?: ClientInfo;
}

export interface HistoryOptions {
  /** 0 (default) = only the stream position; -1 = everything retained. */
  limit?: number;
  since?: StreamPosition;
  reverse?: boolean;
}

function parseRaw(raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return undefined;
  return JSON.parse(raw);
}

function toPresenceEntry(info: ClientInfo): PresenceEntry {
  const entry: PresenceEntry = { user: info.user, client: info.client };
  if (info.connInfo) entry.connInfo = parseRaw(info.connInfo);
  if (info.chanInfo) entry.chanInfo = parseRaw(info.chanInfo);
  return entry;
}

/**
 * Publishes to a channel on every node; resolves with the stream position when the namespace keeps history.
 */
export async function publishToChannel(
  core: EngineCore,
  request: PublishOptions,
): Promise<{ offset?: number; epoch?: string }> {
  const options = core.channelOptions(request.channel);
  const data = request.rawData ?? (request.data === undefined ? '' : JSON.stringify(request.data));
  if (!isValidPublicationData(data, options.publicationDataFormat))
    throw new ClientError(ErrorCode.badRequest);
  const position = await core.publishRaw({
    channel: request.channel,
    data,
    options,
    skipHistory: request.skipHistory === true,
    ...(request.delta === true ? { delta: true } : {}),
    ...(request.info !== undefined ? { info: request.info } : {}),
    ...(request.tags !== undefined ? { tags: request.tags } : {}),
    ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
  });
  if (position === undefined) return {};
  return { offset: position.offset, epoch: position.epoch };
}

/** Channel history (no client limits apply); 108 when the namespace keeps none. */
export async function channelHistory(
  core: EngineCore,
  channel: string,
  options: HistoryOptions = {},
): Promise<{ publications: HistoryPublication[]; offset: number; epoch: string }> {
  const result = await core.readHistory(channel, core.channelOptions(channel), {
    since: options.since,
    limit: options.limit ?? 0,
    reverse: options.reverse === true,
  });
  return {
    publications: result.publications.map((p) => {
      const item: HistoryPublication = { data: parseRaw(p.data) };
      if (p.offset !== undefined) item.offset = p.offset;
      if (p.info !== undefined) item.info = toPresenceEntry(p.info);
      if (p.tags !== undefined) item.tags = p.tags;
      return item;
    }),
    offset: result.position.offset,
    epoch: result.position.epoch,
  };
}

export async function removeChannelHistory(core: EngineCore, channel: string): Promise<void> {
  const options = core.channelOptions(channel);
  if (options.history === undefined) throw new ClientError(ErrorCode.notAvailable);
  await core.broker.removeHistory(channel);
}

/** Who is subscribed (client id → info); 108 when the namespace has no presence. */
export async function channelPresence(
  core: EngineCore,
  channel: string,
): Promise<Record<string, PresenceEntry>> {
  if (!core.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
  const raw = await core.presenceManager.presence(channel);
  const result: Record<string, PresenceEntry> = {};
  for (const clientId in raw) result[clientId] = toPresenceEntry(raw[clientId]!);
  return result;
}

export async function channelPresenceStats(
  core: EngineCore,
  channel: string,
): Promise<{ numClients: number; numUsers: number }> {
  if (!core.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
  return core.presenceManager.presenceStats(channel);
}
