/**
 * Who a verified bearer token speaks for. Set on `request.principal` by the bearer-auth hook before any handler of
 * a protected route runs; handlers read it and never check scopes themselves.
 */
export interface Principal {
  clientId: string;
  companyId: string;
  scopes: string[];
  /** Token id (`jti`), for audit records. */
  tokenId: string;
  /** RFC 9449 §6.1 `cnf.jkt` of a DPoP-bound token: each request must carry a proof signed by that key. */
  jkt?: string;
}

/**
 * The principal of a bearer-protected route's request. The bearer hook sets it before any handler of a route that
 * declares `requiredScope` runs, so its absence is a wiring bug (500), never a client error.
 */
export function principalOf(request: { principal?: Principal }): Principal {
  if (!request.principal) throw new Error('bearer hook did not authenticate a protected route');
  return request.principal;
}

/** The scopes Parley knows (docs/design.md "Scopes"). */
export const SCOPES = [
  'connector:write',
  'connector:read',
  'conversations:read',
  'conversations:write',
  'webhooks:read',
  'webhooks:write',
  'privacy:write',
  'knowledge:read',
  'knowledge:write',
  'digital_employees:read',
  'digital_employees:write',
] as const;
export type Scope = (typeof SCOPES)[number];

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /**
     * The scope a bearer-protected route requires (RFC 6750 §3.1 `insufficient_scope` names it when missing).
     * `null` means "any valid token" (e.g. whoami). Routes without this key are not bearer-protected.
     */
    requiredScope?: Scope | null;
  }
}
