import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Value } from '@sinclair/typebox/value';
import { installationRoot, resolveDataDir } from './data-folder.ts';
import { ConfigError } from './errors.ts';
import { type Config, ConfigSchema } from './schema.ts';

export { ConfigError };

type Env = Record<string, string | undefined>;

const int = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
const bool = (v: string | undefined) =>
  v === undefined || v === '' ? undefined : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());
const str = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

/** Secret settings that may also come from a file: `NAME_FILE=/run/secrets/…` instead of `NAME=…`. */
const SECRET_VARIABLES = [
  'PARLEY_MASTER_KEYS',
  'PARLEY_REALTIME_TOKEN_SECRET',
  'PARLEY_METRICS_TOKEN',
] as const;

/**
 * `env` with each secret variable that is given as `NAME_FILE` read from that file (the whole content less one final
 * line break), as container secrets are mounted. Both forms at once, or a file that cannot be read, is refused.
 */
function withSecretFiles(env: Env): Env {
  const problems: string[] = [];
  const read: Env = {};
  for (const name of SECRET_VARIABLES) {
    const file = str(env[`${name}_FILE`]);
    if (file === undefined) continue;
    if (str(env[name]) !== undefined) {
      problems.push(`${name}_FILE: set ${name} or ${name}_FILE, not both`);
      continue;
    }
    try {
      read[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(
        `${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...env, ...read };
}
const list = (v: string | undefined) =>
  v === undefined || v.trim() === '' ? undefined : v.split(',').map((item) => item.trim());

/** Reads the environment once. The only place in the server that touches `process.env`. */
export function loadConfig(environment: Env = process.env, overrides: Partial<Config> = {}): Config {
  const env = withSecretFiles(environment);
  // Overrides win over the environment (merged last), so the defaults derived from these two follow them too.
  const port = overrides.port ?? int(env.PORT) ?? 8080;
  const configuredUrl = overrides.publicUrl ?? str(env.PARLEY_PUBLIC_URL)?.replace(/\/+$/, '');
  const publicUrl = configuredUrl ?? `http://localhost:${port}`;
  const databaseUrl = overrides.databaseUrl ?? str(env.DATABASE_URL);
  const redisUrl = overrides.redisUrl ?? str(env.REDIS_URL);
  const configuredDataDir = overrides.dataDir ?? str(env.PARLEY_DATA_DIR);
  const dataDir = resolveDataDir(configuredDataDir, installationRoot());
  if (dataDir === undefined) {
    throw new ConfigError([
      `/dataDir: ${configuredDataDir === undefined ? 'PARLEY_DATA_DIR is not set' : `PARLEY_DATA_DIR "${configuredDataDir}" is relative`} and the installation folder (the one with Parley's package.json) cannot be found to resolve it from; set PARLEY_DATA_DIR to an absolute path`,
    ]);
  }
  const raw = {
    port,
    host: str(env.HOST),
    publicUrl,
    publicUrlConfigured: configuredUrl !== undefined,
    dataDir,
    databaseUrl,
    redisUrl,
    workers: int(env.PARLEY_WORKERS) ?? defaultWorkers(databaseUrl, redisUrl),
    logLevel: str(env.LOG_LEVEL),
    logFormat: str(env.PARLEY_LOG_FORMAT),
    trustProxy: bool(env.PARLEY_TRUST_PROXY),
    shutdownGraceMs: int(env.PARLEY_SHUTDOWN_GRACE_MS),
    http: {
      headersTimeoutMs: int(env.PARLEY_HEADERS_TIMEOUT_MS),
      bodyTimeoutMs: int(env.PARLEY_BODY_TIMEOUT_MS),
      keepAliveTimeoutMs: int(env.PARLEY_KEEP_ALIVE_TIMEOUT_MS),
      maxConnectionsPerAddress: int(env.PARLEY_MAX_CONNECTIONS_PER_ADDRESS),
    },
    storeConnectTimeoutMs: int(env.PARLEY_STORE_CONNECT_TIMEOUT_MS),
    storePoolSize: int(env.PARLEY_STORE_POOL_SIZE),
    storeQueryTimeoutMs: int(env.PARLEY_STORE_QUERY_TIMEOUT_MS),
    companyCacheSize: int(env.PARLEY_COMPANY_CACHE_SIZE),
    companyCacheTtlMs: int(env.PARLEY_COMPANY_CACHE_TTL_MS),
    masterKeys: str(env.PARLEY_MASTER_KEYS),
    masterKeyPrimary: int(env.PARLEY_MASTER_KEY_PRIMARY),
    webchat: {
      tokenSecret: str(env.PARLEY_REALTIME_TOKEN_SECRET),
      realtimeRedisPrefix: str(env.PARLEY_REALTIME_REDIS_PREFIX),
      maxMessageBytes: int(env.PARLEY_WEBCHAT_MAX_MESSAGE_BYTES),
      maxBlocks: int(env.PARLEY_WEBCHAT_MAX_BLOCKS),
      attachmentMaxBytes: int(env.PARLEY_ATTACHMENT_MAX_BYTES),
      conversationsPerMinutePerSession: int(env.PARLEY_WEBCHAT_CONVERSATIONS_PER_MINUTE_PER_SESSION),
      conversationsPerMinutePerIp: int(env.PARLEY_WEBCHAT_CONVERSATIONS_PER_MINUTE_PER_IP),
      messagesPerMinutePerSession: int(env.PARLEY_WEBCHAT_MESSAGES_PER_MINUTE_PER_SESSION),
      messagesPerMinutePerIp: int(env.PARLEY_WEBCHAT_MESSAGES_PER_MINUTE_PER_IP),
      uploadsPerMinutePerSession: int(env.PARLEY_WEBCHAT_UPLOADS_PER_MINUTE_PER_SESSION),
      uploadsPerMinutePerIp: int(env.PARLEY_WEBCHAT_UPLOADS_PER_MINUTE_PER_IP),
      uploadBytesPerHourPerSession: int(env.PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_SESSION),
      uploadBytesPerHourPerIp: int(env.PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_IP),
      unsentAttachmentTtlMs: int(env.PARLEY_ATTACHMENT_UNSENT_TTL_MS),
      erasureLatePublishMs: int(env.PARLEY_ERASURE_LATE_PUBLISH_MS),
      streamFlushIntervalMs: int(env.PARLEY_WEBCHAT_STREAM_FLUSH_INTERVAL_MS),
      streamBusyFlushIntervalMs: int(env.PARLEY_WEBCHAT_STREAM_BUSY_FLUSH_INTERVAL_MS),
      streamPersistIntervalMs: int(env.PARLEY_WEBCHAT_STREAM_PERSIST_INTERVAL_MS),
      responderTimeoutMs: int(env.PARLEY_WEBCHAT_RESPONDER_TIMEOUT_MS),
      actionTimeoutMs: int(env.PARLEY_ACTION_TIMEOUT_MS),
      replyLeaseMs: int(env.PARLEY_WEBCHAT_REPLY_LEASE_MS),
      replyStoreWaitMs: int(env.PARLEY_WEBCHAT_REPLY_STORE_WAIT_MS),
    },
    oauth: {
      audience: str(env.PARLEY_TOKEN_AUDIENCE) ?? publicUrl,
      authFailuresPerMinute: int(env.PARLEY_AUTH_FAILURES_PER_MINUTE),
      authFailuresPerMinutePerIp: int(env.PARLEY_AUTH_FAILURES_PER_MINUTE_PER_IP),
      tokensPerMinute: int(env.PARLEY_TOKENS_PER_MINUTE),
      apiCallsPerMinute: int(env.PARLEY_API_CALLS_PER_MINUTE),
      clockToleranceSeconds: int(env.PARLEY_CLOCK_TOLERANCE_SECONDS),
      signingAlg: str(env.PARLEY_TOKEN_SIGNING_ALG),
      keyReloadIntervalMs: int(env.PARLEY_SIGNING_KEY_RELOAD_MS),
      tokenCacheSize: int(env.PARLEY_TOKEN_CACHE_SIZE),
      dpopProofMaxAgeSeconds: int(env.PARLEY_DPOP_PROOF_MAX_AGE_SECONDS),
      dpopNonce: bool(env.PARLEY_DPOP_NONCE),
      jwksUriCacheSeconds: int(env.PARLEY_JWKS_URI_CACHE_SECONDS),
      revocationPollMs: int(env.PARLEY_REVOCATION_POLL_MS),
    },
    rateLimit: {
      keyPrefix: str(env.PARLEY_RATE_LIMIT_PREFIX),
    },
    portal: {
      sessionTtlSeconds: int(env.PARLEY_PORTAL_SESSION_TTL_SECONDS),
      sessionIdleSeconds: int(env.PARLEY_PORTAL_SESSION_IDLE_SECONDS),
      loginFailuresPerEmail: int(env.PARLEY_PORTAL_LOGIN_FAILURES_PER_EMAIL),
      loginFailuresPerEmailAllIps: int(env.PARLEY_PORTAL_LOGIN_FAILURES_PER_EMAIL_ALL_IPS),
      loginFailuresPerIp: int(env.PARLEY_PORTAL_LOGIN_FAILURES_PER_IP),
      loginThrottleWindowSeconds: int(env.PARLEY_PORTAL_LOGIN_THROTTLE_WINDOW_SECONDS),
    },
    metrics: {
      port: int(env.PARLEY_METRICS_PORT),
      token: str(env.PARLEY_METRICS_TOKEN),
    },
    otel: {
      endpoint: str(env.OTEL_EXPORTER_OTLP_ENDPOINT),
      tracesEndpoint: str(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
      serviceName: str(env.OTEL_SERVICE_NAME),
      exportDelayMs: int(env.OTEL_BSP_SCHEDULE_DELAY),
    },
    integrations: {
      // Production (an https public URL) refuses private destinations unless told otherwise; development allows them.
      outboundBlockPrivate: bool(env.PARLEY_OUTBOUND_BLOCK_PRIVATE) ?? publicUrl.startsWith('https://'),
      outboundAllow: list(env.PARLEY_OUTBOUND_ALLOW),
      outboundTimeoutMs: int(env.PARLEY_OUTBOUND_TIMEOUT_MS),
      outboundMaxRedirects: int(env.PARLEY_OUTBOUND_MAX_REDIRECTS),
      checkTimeoutMs: int(env.PARLEY_CONNECTOR_CHECK_TIMEOUT_MS),
    },
    knowledge: {
      maxSourceBytes: int(env.PARLEY_KNOWLEDGE_MAX_SOURCE_BYTES),
      fetchTimeoutMs: int(env.PARLEY_KNOWLEDGE_FETCH_TIMEOUT_MS),
      relevanceThreshold: int(env.PARLEY_KNOWLEDGE_RELEVANCE_THRESHOLD),
    },
  };
  return parseConfig(deepMerge(stripUndefined(raw), { ...overrides, dataDir }));
}

/** One worker per core when every worker can be a full node of one cluster (PostgreSQL and Redis), else one. */
function defaultWorkers(databaseUrl: string | undefined, redisUrl: string | undefined): number {
  return databaseUrl && redisUrl ? availableParallelism() : 1;
}

/** Validates a config object, filling defaults; throws ConfigError listing every problem. */
export function parseConfig(input: unknown): Config {
  const withDefaults = Value.Default(ConfigSchema, structuredClone(input));
  const problems = [...Value.Errors(ConfigSchema, withDefaults)].map(
    (e) =>
      `${e.path || '/'}: ${e.message}${e.value !== undefined && !isSecretPath(e.path) ? ` (got ${JSON.stringify(e.value)})` : ''}`,
  );
  if (problems.length === 0) problems.push(...crossFieldProblems(withDefaults as Config));
  if (problems.length > 0) throw new ConfigError(problems);
  return withDefaults as Config;
}

/** Rules between settings that the schema cannot say. */
function crossFieldProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.workers > 1 && (!config.databaseUrl || !config.redisUrl)) {
    problems.push(
      `/workers: ${config.workers} workers need DATABASE_URL (PostgreSQL) and REDIS_URL, so that they act as one ` +
        'node cluster; with SQLite or the in-memory broker run one worker (PARLEY_WORKERS=1)',
    );
  }
  return problems;
}

/**
 * Paths whose values a problem never quotes: keys, secrets, passwords, URLs and endpoints (they may carry
 * `user:pass@`) and tokens (`/metrics/token`).
 */
const isSecretPath = (path: string) => /key|secret|password|url|endpoint|token$/i.test(path);

function stripUndefined<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, stripUndefined(v)]),
  ) as T;
}

function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
