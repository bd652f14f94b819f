import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import { rewrapSealedColumns, type SealedColumn, sealedColumnName } from '../crypto/sealed-columns.ts';
import { SealError, type Sealer } from '../crypto/sealing.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import type { Store } from '../storage/database.ts';
import { closeRedis, failFastRedis } from '../storage/redis-client.ts';
import { RedisSignalChannel } from '../storage/redis-signal-channel.ts';
import { AccessTokenIssuer, AccessTokenVerifier } from './access-tokens.ts';
import { ApiClientsService } from './api-clients.service.ts';
import { AuditBatcher } from './audit-batcher.ts';
import { ClientKeySets, type JwksFetch } from './client-key-sets.ts';
import { ClientQuotas } from './client-quotas.ts';
import { DpopProofs } from './dpop.ts';
import { DpopNonces } from './dpop-nonces.ts';
import { RevocationList, type RevocationPush } from './revocation-list.ts';
import { PEPPER_SEALED_COLUMN } from './secret-digest.ts';
import { SIGNING_KEY_SEALED_COLUMN, SigningKeyStore } from './signing-keys.ts';
import { claimJtiOnce } from './used-jtis.ts';

/** Everything OAuth, built once per context (server or CLI command) and shared by routes, hooks and commands. */
export interface OAuthServices {
  clients: ApiClientsService;
  keys: SigningKeyStore;
  issuer: AccessTokenIssuer;
  verifier: AccessTokenVerifier;
  /** Batched writer for `token.issued` audit events (see AuditBatcher). */
  auditBatcher: AuditBatcher;
  /** Access tokens revoked before they expire (RFC 7009), shared by every node through the store. */
  revocations: RevocationList;
  /** DPoP proof checks (RFC 9449), for the token endpoint and every protected route. */
  dpop: DpopProofs;
  /** `private_key_jwt` clients' public keys, inline or fetched from their `jwks_uri`. */
  clientKeys: ClientKeySets;
  /** Per-client token and API-call quotas (docs/machine-access.md "Quotas"). */
  quotas: ClientQuotas;
}

export interface OAuthServicesDeps {
  config: Config;
  store: Store;
  sealer: Sealer;
  audit: AuditLog;
  companies: CompaniesService;
  logger: Logger;
  /** The outbound `fetch` (address policy, time-outs) that reads clients' `jwks_uri`; absent, such keys fail. */
  fetchJwks?: JwksFetch;
  /** The clock of DPoP proof windows and key-set caching (ms since the epoch); tests move it instead of waiting. */
  clock?: () => number;
  rateLimiter: RateLimiter;
}

/**
 * Builds the OAuth services for one process (server or CLI command); the composition root (context.ts) calls it once.
 * Nothing runs yet: the server starts the signing keys' reload (`keys.start()`), and `close` stops what runs.
 */
export function createOAuthServices(deps: OAuthServicesDeps): OAuthServices & { close(): Promise<void> } {
  const keys = new SigningKeyStore(deps.store.db, deps.sealer, deps.audit, {
    alg: deps.config.oauth.signingAlg,
    reloadIntervalMs: deps.config.oauth.keyReloadIntervalMs,
    logger: deps.logger,
  });
  const auditBatcher = new AuditBatcher(deps.store.db, deps.logger);
  const clients = new ApiClientsService(deps.store, deps.sealer, deps.companies, deps.audit);
  const clock = deps.clock ?? Date.now;
  const revocations = new RevocationList(
    deps.store.db,
    deps.logger,
    revocationPush(deps.config),
    deps.config.oauth.revocationPollMs,
  );
  return {
    clients,
    keys,
    issuer: new AccessTokenIssuer(keys, deps.config),
    verifier: new AccessTokenVerifier(
      keys,
      deps.config,
      (id) => deps.companies.exists(id),
      Date.now,
      (jti) => revocations.isRevoked(jti),
    ),
    auditBatcher,
    revocations,
    dpop: new DpopProofs(
      {
        proofMaxAgeSeconds: deps.config.oauth.dpopProofMaxAgeSeconds,
        clockToleranceSeconds: deps.config.oauth.clockToleranceSeconds,
      },
      (key, exp) => claimJtiOnce(deps.store, key, exp),
      deps.config.oauth.dpopNonce ? new DpopNonces(() => keys.signingKey().privateKey, clock) : undefined,
      clock,
    ),
    clientKeys: new ClientKeySets(deps.fetchJwks, deps.config.oauth.jwksUriCacheSeconds, deps.logger, clock),
    quotas: new ClientQuotas(deps.rateLimiter, clients, deps.config.oauth, deps.logger),
    close: async () => {
      keys.stop();
      await revocations.stop();
      await auditBatcher.close();
      await clients
        .flushUsage()
        .catch((err: Error) =>
          deps.logger.warn({ err: { message: err.message } }, 'writing secret last-use times failed'),
        );
    },
  };
}

/**
 * With a broker (`REDIS_URL`), revocations are pushed to every node over the cluster's Redis, on a connection of
 * their own with the outage settings of every Redis client (packages/server/src/storage/redis-client.ts); nothing
 * on one node.
 */
function revocationPush(config: Config): RevocationPush | undefined {
  if (!config.redisUrl) return undefined;
  // Connected by the first `listen` (the server's start) or `send`, not here: building starts nothing.
  const { redis, connect } = failFastRedis(config.redisUrl);
  const channel = new RedisSignalChannel(redis, {
    channel: `${config.webchat.realtimeRedisPrefix}:oauth-revocations`,
    ready: connect,
  });
  return {
    send: (message) => channel.send(message),
    listen: (handle) => channel.listen(handle),
    close: async () => {
      await channel.close();
      await closeRedis(redis);
    },
  };
}

/** The OAuth columns holding sealed values (master-key rotation). */
export const OAUTH_SEALED_COLUMNS: readonly SealedColumn[] = [
  PEPPER_SEALED_COLUMN,
  SIGNING_KEY_SEALED_COLUMN,
];

/**
 * Re-seals every OAuth secret at rest (the client-secret pepper and the signing private keys) under the newest
 * master key, for a master-key rotation, through the same registry `parley master-key rotate` uses
 * (crypto/sealed-columns.ts). Returns how many rows changed; throws if a value cannot be opened.
 */
export async function rewrapOAuthSecrets(
  store: Store,
  sealer: Sealer,
): Promise<{ peppers: number; signingKeys: number }> {
  const reports = await rewrapSealedColumns(store.db, sealer, OAUTH_SEALED_COLUMNS);
  const unreadable = reports.flatMap((r) => r.unreadable.map((key) => `${r.column} ${key}`));
  if (unreadable.length > 0) throw new SealError(`sealed values failed to open: ${unreadable.join(', ')}`);
  const rewrapped = (column: string) => reports.find((r) => r.column === column)?.rewrapped ?? 0;
  return {
    peppers: rewrapped(sealedColumnName(PEPPER_SEALED_COLUMN)),
    signingKeys: rewrapped(sealedColumnName(SIGNING_KEY_SEALED_COLUMN)),
  };
}
