import type { AppContext } from '../context.ts';
import { AccessTokenIssuer, AccessTokenVerifier } from './access-tokens.ts';
import { ApiClientsService } from './api-clients.service.ts';
import { AuditBatcher } from './audit-batcher.ts';
import { SigningKeyStore } from './signing-keys.ts';

/** Everything OAuth, built once per context (server or CLI command) and shared by routes, hooks and commands. */
export interface OAuthServices {
  clients: ApiClientsService;
  keys: SigningKeyStore;
  issuer: AccessTokenIssuer;
  verifier: AccessTokenVerifier;
  /** Batched writer for `token.issued` audit events (see AuditBatcher). */
  auditBatcher: AuditBatcher;
}

const services = new WeakMap<AppContext, OAuthServices>();

export function oauthServices(ctx: AppContext): OAuthServices {
  let found = services.get(ctx);
  if (!found) {
    const keys = new SigningKeyStore(ctx.store.db, ctx.sealer, ctx.audit, {
      alg: ctx.config.oauth.signingAlg,
      reloadIntervalMs: ctx.config.oauth.keyReloadIntervalMs,
      logger: ctx.logger,
    });
    found = {
      clients: new ApiClientsService(ctx.store, ctx.sealer, ctx.companies, ctx.audit),
      keys,
      issuer: new AccessTokenIssuer(keys, ctx.config),
      verifier: new AccessTokenVerifier(keys, ctx.config),
      auditBatcher: new AuditBatcher(ctx.store.db, ctx.logger),
    };
    services.set(ctx, found);
    const { auditBatcher } = found;
    ctx.onClose(() => keys.stop());
    ctx.onClose(() => auditBatcher.close());
  }
  return found;
}

/**
 * Re-seals every OAuth secret at rest (the client-secret pepper and the signing private keys) under the newest
 * master key, for a master-key rotation. Returns how many rows changed.
 */
export async function rewrapOAuthSecrets(ctx: AppContext): Promise<{ peppers: number; signingKeys: number }> {
  const { clients, keys } = oauthServices(ctx);
  return { peppers: await clients.rewrapPepper(), signingKeys: await keys.rewrapPrivateKeys() };
}
