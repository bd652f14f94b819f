import type { FastifyReply, FastifyRequest } from 'fastify';
import { type CompaniesService, type Company, isUuid } from '../../companies/companies.service.ts';
import type { Channel, ChannelsService } from '../channels/channels.service.ts';
import type { Conversation } from '../conversation.ts';
import type { SessionScope, Visitor } from '../visitor.ts';
import {
  channelNotFound,
  companyNotFound,
  conversationNotFound,
  invalidHeader,
  missingHeader,
  originNotAllowed,
} from '../webchat.errors.ts';
import type { ChannelIdentity } from './channel-identity.ts';

/** Who is calling an SDK route: resolved from X-Session-Id, X-Company and X-Channel-Id (spec "Webchat session context"). */
export interface SdkSession {
  sessionId: string;
  company: Company;
  channel: Channel | undefined;
  /** The verified visitor the session acts for (X-Visitor-Token on a channel with identity on). */
  visitor?: Visitor;
}

declare module 'fastify' {
  interface FastifyRequest {
    sdkSession?: SdkSession;
  }
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Reads and checks the three headers; every failure is a 400 or 404 problem, never a 500. */
export async function resolveSdkSession(
  request: FastifyRequest,
  companies: Pick<CompaniesService, 'find'>,
  channels: Pick<ChannelsService, 'find'>,
): Promise<SdkSession> {
  const sessionId = header(request, 'x-session-id');
  if (!sessionId) throw missingHeader('X-Session-Id');
  if (!isUuid(sessionId)) throw invalidHeader('X-Session-Id', 'a UUID');
  const companyId = header(request, 'x-company');
  if (!companyId) throw missingHeader('X-Company');
  if (!isUuid(companyId)) throw invalidHeader('X-Company', 'a company id (UUID)');
  const company = await companies.find(companyId);
  if (!company) throw companyNotFound();
  const channelId = header(request, 'x-channel-id');
  let channel: Channel | undefined;
  if (channelId !== undefined) {
    if (!isUuid(channelId)) throw invalidHeader('X-Channel-Id', 'a channel id (UUID)');
    channel = await channels.find(company.id, channelId);
    if (!channel) throw channelNotFound();
  }
  return { sessionId: sessionId.toLowerCase(), company, channel };
}

/**
 * Who this request acts for, from `X-Visitor-Token` (docs/design.md "Visitor identity"): the channel's identity rules
 * decide (identity/channel-identity.ts). Without X-Channel-Id there is no channel to verify a token with, so the
 * session is anonymous, as on a channel whose identity is `off`.
 */
export function identifyVisitor(
  request: FastifyRequest,
  session: SdkSession,
  identity: Pick<ChannelIdentity, 'identify'>,
): Visitor | undefined {
  if (!session.channel) return undefined;
  return identity.identify(session.channel, header(request, 'x-visitor-token')?.trim());
}

/** Which conversations the session may see: the verified visitor's, else the anonymous session's own. */
export const scopeOf = (s: SdkSession): SessionScope => ({
  companyId: s.company.id,
  sessionId: s.sessionId,
  channelId: s.channel?.id,
  ...(s.visitor ? { visitorKey: s.visitor.key } : {}),
});

/**
 * What an SDK route needs to find the session's own conversations (conversations/conversations.service.ts). Typed
 * here, not imported: conversations/ builds on the attachments and routing this file serves, so identity/ must not
 * import it back.
 */
export interface SessionConversations {
  findForSession(scope: SessionScope, id: string): Promise<Conversation | undefined>;
}

/**
 * Conversation `id` if it is this session's own — or its verified visitor's, from any session — (and, with
 * X-Channel-Id, that channel's); 404 otherwise, so existence is never revealed.
 */
export async function ownConversation(
  conversations: SessionConversations,
  request: FastifyRequest,
  id: string,
): Promise<Conversation> {
  const conversation = await conversations.findForSession(scopeOf(request.sdkSession!), id);
  if (!conversation) throw conversationNotFound();
  return conversation;
}

/** The `sub` of the session's realtime tokens: the verified visitor's key (every device of theirs), else the session. */
export const realtimeSubjectOf = (s: SdkSession): string => s.visitor?.key ?? s.sessionId;

/**
 * The browser origins that may use this company's webchat: the channel's list when it has one, else the
 * company's, plus Parley's own origins (its widget and portal; see http/public-url.ts ownOriginsFor). Requests without Origin (server-side SDKs, mobile
 * apps) are not browsers and need no CORS.
 */
export function allowedOriginsOf(
  session: Pick<SdkSession, 'company' | 'channel'>,
  ownOrigins: string[],
): string[] {
  const listed =
    session.channel && session.channel.allowedOrigins.length > 0
      ? session.channel.allowedOrigins
      : session.company.allowedOrigins;
  return [...ownOrigins, ...listed];
}

export function isOriginAllowed(origin: string, allowed: string[]): boolean {
  return allowed.includes(origin.toLowerCase());
}

/** Fetch CORS response headers for an admitted origin (Fetch standard §3.2.3). */
export function setCorsHeaders(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-expose-headers', 'Retry-After, Content-Type');
  reply.header('vary', 'Origin');
}

/** Refuses a browser request from an origin this company or channel does not list. */
export function enforceOrigin(
  request: FastifyRequest,
  reply: FastifyReply,
  session: SdkSession,
  ownOrigins: string[],
): void {
  const origin = header(request, 'origin');
  if (origin === undefined) return;
  if (!isOriginAllowed(origin, allowedOriginsOf(session, ownOrigins))) throw originNotAllowed();
  setCorsHeaders(reply, origin);
}
