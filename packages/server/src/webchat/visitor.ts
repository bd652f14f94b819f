import { createHash } from 'node:crypto';
import type { VisitorAttributes } from '@parley/webchat-protocol';

/** What a verified visitor token says about the visitor (identity/visitor-token.ts). */
export interface VerifiedVisitor {
  /** The token's `sub`: the integrator's own user id. */
  id: string;
  name: string | null;
  email: string | null;
  /** The token's custom `attributes` (docs/design.md "Agent workspace"); null when it carried none. */
  attributes?: VisitorAttributes | null;
}

/**
 * A verified visitor of one channel. A visitor is (channel, `sub`): two channels never share visitors, even with
 * the same user ids, because each verifies tokens with its own secret.
 */
export interface Visitor extends VerifiedVisitor {
  /** Opaque and stable: see {@link visitorKeyOf}. */
  key: string;
  channelId: string;
}

/**
 * Who may see a conversation over the SDK: an anonymous session sees the conversations it started (and not yet
 * attached to a verified visitor); a session acting for a verified visitor sees every conversation of that visitor,
 * from every session and device. Always within the company and, with X-Channel-Id, that channel.
 */
export interface SessionScope {
  companyId: string;
  sessionId: string;
  /** When set (X-Channel-Id), only that channel's conversations are visible. */
  channelId?: string;
  /** The verified visitor the session acts for (`visitorKeyOf` below). */
  visitorKey?: string;
}

const VISITOR_KEY_PREFIX = 'visitor:';

/**
 * The key of visitor `sub` in channel `channelId`: `visitor:` + base64url(SHA-256(channel id, LF, sub)). It names the
 * visitor's conversations in the store and is the `sub` of their realtime tokens, so every device of the visitor
 * may subscribe to their conversations — without the integrator's user id ever reaching the realtime layer. The
 * prefix keeps it apart from session ids (UUIDs) and portal subjects (`portal-user:`).
 */
export function visitorKeyOf(channelId: string, sub: string): string {
  const digest = createHash('sha256').update(`${channelId}\n${sub}`, 'utf8').digest('base64url');
  return `${VISITOR_KEY_PREFIX}${digest}`;
}

/** Whether a realtime subject is a visitor key (else it is a session id or another kind of subject). */
export const isVisitorKey = (subject: string): boolean => subject.startsWith(VISITOR_KEY_PREFIX);
