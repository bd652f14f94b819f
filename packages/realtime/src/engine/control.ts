import type { ServerRefreshRequest, ServerSubscribeRequest } from './server-side.ts';

/**
 * Messages nodes exchange through `Broker.publishControl` (every node, including the sender, receives each one).
 * They carry what must work across a cluster: disconnect/unsubscribe by user, node heartbeats for `/api/info`,
 * and request/reply surveys for `/api/channels` (Centrifugo uses the same control channel and survey idea).
 */

/** Node statistics with Centrifugo's `/api/info` field names. */
export interface NodeInfo {
  uid: string;
  name: string;
  version: string;
  num_clients: number;
  num_users: number;
  num_subs: number;
  num_channels: number;
  /** Seconds since the node started. */
  uptime: number;
}

export type ControlMessage =
  | { t: 'node'; from: string; node: NodeInfo }
  | { t: 'node_leave'; from: string }
  | ({
      t: 'disconnect';
      from: string;
      user: string;
      whitelist?: string[];
      code: number;
      reason: string;
    } & ConnectionFilter)
  | ({
      t: 'unsubscribe';
      from: string;
      user: string;
      channel: string;
      code: number;
      reason: string;
    } & ConnectionFilter)
  | ({ t: 'subscribe'; from: string; user: string; request: ServerSubscribeRequest } & ConnectionFilter)
  | ({ t: 'refresh'; from: string; user: string; request: ServerRefreshRequest } & ConnectionFilter)
  | { t: 'survey'; from: string; id: string; op: 'channels'; pattern?: string }
  | { t: 'emulation'; from: string; to: string; id: string; session: string; data: string }
  | { t: 'emulation_reply'; from: string; to: string; id: string }
  | { t: 'survey_reply'; from: string; to: string; id: string; result: unknown };

/** Narrows a per-user control message to one connection (`client` id) or one emulation session. */
export interface ConnectionFilter {
  client?: string;
  session?: string;
}

const PREFIX = 'parley.realtime.v1:';

export function encodeControl(message: ControlMessage): string {
  return PREFIX + JSON.stringify(message);
}

/** Decodes a control message; foreign or malformed ones (another application on the same broker) are ignored. */
export function decodeControl(text: string): ControlMessage | undefined {
  if (!text.startsWith(PREFIX)) return undefined;
  try {
    const value = JSON.parse(text.slice(PREFIX.length)) as ControlMessage;
    return value !== null && typeof value === 'object' && typeof value.t === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Centrifugo-style channel pattern for `/api/channels`: `*` any run of characters, `?` one character. */
export function compileChannelPattern(
  pattern: string | undefined,
): ((channel: string) => boolean) | undefined {
  if (pattern === undefined || pattern === '') return undefined;
  const source = pattern
    .split('')
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const regex = new RegExp(`^${source}$`, 's');
  return (channel) => regex.test(channel);
}
