import type { IdentityMode } from '@parley/server/internal/webchat/channels/channels.service';
import type { IdentitySettings } from '@parley/server/internal/webchat/identity/channel-identity';
import { SignJWT } from 'jose';
import type { TestServer } from '../test-server.ts';
import { newVisitor, type Visitor } from './webchat-fixtures.ts';

/** A channel of the company's default digital employee with identity `mode`, and its identity secret. */
export async function createIdentityChannel(
  server: TestServer,
  companyId: string,
  mode: IdentityMode = 'optional',
): Promise<{ channelId: string; secret: string }> {
  const employee = await server.ctx.digitalEmployees.getDefault(companyId);
  const channel = await server.ctx.webchat.channels.create({
    companyId,
    name: `identity ${mode}`,
    digitalEmployeeId: employee.id,
  });
  const settings = await configureIdentity(server, companyId, channel.id, mode === 'off' ? 'optional' : mode);
  if (mode === 'off') await configureIdentity(server, companyId, channel.id, 'off');
  return { channelId: channel.id, secret: settings.identity_secret! };
}

export function configureIdentity(
  server: TestServer,
  companyId: string,
  channelId: string,
  mode: IdentityMode,
  rotateSecret = false,
): Promise<IdentitySettings> {
  return server.ctx.webchat.identity.configure(companyId, channelId, { mode, rotateSecret }, { id: 'test' });
}

export interface TokenOptions {
  /** Claims besides the defaults (`exp` one hour ahead); `undefined` values remove a default. */
  claims?: Record<string, unknown>;
  /** Seconds until `exp` (default 3600). */
  expiresIn?: number;
  alg?: 'HS256' | 'HS384' | 'HS512';
}

/**
 * A visitor token as an integrator's backend signs it, with jose (the HS256 key is the secret string's UTF-8
 * bytes, as jose and jsonwebtoken use a string secret).
 */
export async function signVisitorToken(
  secret: string,
  sub: string,
  options: TokenOptions = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { sub, exp: now + (options.expiresIn ?? 3600), ...options.claims };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
}

/** A visitor (a fresh session of its own: another device) of an identity channel carrying `token`. */
export function newIdentifiedVisitor(companyId: string, channelId: string, token?: string): Visitor {
  const v = newVisitor(companyId, { channelId });
  if (token !== undefined) v.headers['x-visitor-token'] = token;
  return v;
}
