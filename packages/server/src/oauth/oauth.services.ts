import type { AppContext } from '../context.ts';
import { rewrapSealedColumns, sealedColumnName, sealedColumns } from '../crypto/sealed-columns.ts';
import { SealError } from '../crypto/sealing.ts';
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
 * master key, for a master-key rotation, through the same registry `parley master-key rotate` uses
 * (crypto/sealed-columns.ts). Returns how many rows changed; throws if a value cannot be opened.
 */
export async function rewrapOAuthSecrets(ctx: AppContext): Promise<{ peppers: number; signingKeys: number }> {
  const names: string[] = Object.values(OAUTH_SEALED_COLUMNS);
  const columns = sealedColumns().filter((c) => names.includes(sealedColumnName(c)));
  const reports = await rewrapSealedColumns(ctx.store.db, ctx.sealer, columns);
  const unreadable = reports.flatMap((r) => r.unreadable.map((key) => `${r.column} ${key}`));
  if (unreadable.length > 0) throw new SealError(`sealed values failed to open: ${unreadable.join(', ')}`);
  const rewrapped = (column: string) => reports.find((r) => r.column === column)?.rewrapped ?? 0;
  return {
    peppers: rewrapped(OAUTH_SEALED_COLUMNS.peppers),
    signingKeys: rewrapped(OAUTH_SEALED_COLUMNS.signingKeys),
  };
}

/** Registered by secret-digest.ts and signing-keys.ts. */
const OAUTH_SEALED_COLUMNS = {
  peppers: 'oauth_peppers.sealed',
  signingKeys: 'oauth_signing_keys.private_key',
};
