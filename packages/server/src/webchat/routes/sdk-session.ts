import type { FastifyReply, FastifyRequest } from 'fastify';
import { type CompaniesService, type Company, isUuid } from '../../companies/companies.service.ts';
import type { Channel, ChannelsService } from '../channels/channels.service.ts';
import {
  channelNotFound,
  companyNotFound,
  invalidHeader,
  missingHeader,
  originNotAllowed,
} from '../webchat.errors.ts';

/** Who is calling an SDK route: resolved from X-Session-Id, X-Company and X-Channel-Id (spec "Webchat session context"). */
export interface SdkSession {
  sessionId: string;
  company: Company;
  channel: Channel | undefined;
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
  companies: CompaniesService,
  channels: ChannelsService,
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
 * The browser origins that may use this company's webchat: the channel's list when it has one, else the
 * company's, plus Parley's own origin (its widget and portal). Requests without Origin (server-side SDKs, mobile
 * apps) are not browsers and need no CORS.
 */
export function allowedOriginsOf(
  session: Pick<SdkSession, 'company' | 'channel'>,
  ownOrigin: string,
): string[] {
  const listed =
    session.channel && session.channel.allowedOrigins.length > 0
      ? session.channel.allowedOrigins
      : session.company.allowedOrigins;
  return [ownOrigin, ...listed];
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
  ownOrigin: string,
): void {
  const origin = header(request, 'origin');
  if (origin === undefined) return;
  if (!isOriginAllowed(origin, allowedOriginsOf(session, ownOrigin))) throw originNotAllowed();
  setCorsHeaders(reply, origin);
}
