import { type Static, Type } from '@sinclair/typebox';

/**
 * Every setting Parley reads, in one validated, typed object. `load.ts` maps environment variables onto it once at
 * start; nothing else in the code base reads `process.env`. Documented in docs/config.md (keep both in step).
 */
export const ConfigSchema = Type.Object(
  {
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
    host: Type.String({ minLength: 1, default: '0.0.0.0' }),
    /** Externally visible base URL without trailing slash: token `iss`, metadata `issuer`, realtime URL discovery. */
    publicUrl: Type.String({ pattern: '^https?://[^\\s]+[^/]$' }),
    /**
     * Whether publicUrl was configured (PARLEY_PUBLIC_URL) rather than left at its `http://localhost:{PORT}` default.
     * When it was not, the URLs handed to browsers (realtime, demo page) follow the host each request came in on.
     */
    publicUrlConfigured: Type.Boolean({ default: false }),
    /**
     * The data folder, absolute: loadConfig resolves PARLEY_DATA_DIR (default `data`) against the installation root,
     * never the working directory (data-folder.ts).
     */
    dataDir: Type.String({ minLength: 1 }),
    /** postgres://… selects PostgreSQL; unset means SQLite in dataDir. */
    databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    /** redis://… selects the Redis broker, presence and shared rate-limit state; unset means in-memory. */
    redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    /** `json` lines, `pretty` lines for reading, or `auto`: pretty when standard output is a terminal. */
    logFormat: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], {
      default: 'auto',
    }),
    /** Trust X-Forwarded-For from a reverse proxy when computing client IPs (rate limits, audit). */
    trustProxy: Type.Boolean({ default: false }),
    /**
     * The HTTP edge's limits on slow and numerous connections (docs/config.md "HTTP edge"). Node's own time-outs
     * where they exist; the body time-out runs from the moment the headers are complete (http/time-limits.ts).
     */
    http: Type.Object(
      {
        /** The request line and headers must be complete this long after the request's first byte → 408. */
        headersTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
        /** The body must be complete this long after its headers → 408 and the connection closes. */
        bodyTimeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
        /** A kept-alive connection idle (between requests) this long is closed. */
        keepAliveTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 72_000 }),
        /**
         * Connections one client address may hold open at once (the next is answered 503 and closed): the socket's
         * address, or with trustProxy the forwarded one per request (http/connection-limits.ts).
         */
        maxConnectionsPerAddress: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 256 }),
      },
      { default: {} },
    ),
    /**
     * How long a graceful shutdown may take before the process exits anyway. Replies still streaming get most of it
     * to finish (the rest is for closing connections); what cannot finish ends with a `reply_interrupted` block.
     */
    shutdownGraceMs: Type.Integer({ minimum: 0, default: 15_000 }),
    /**
     * Worker processes sharing the port (node:cluster), each a full node on the shared PostgreSQL and Redis. Default:
     * one per core when both are configured, else 1 — SQLite stays single-process (cluster/primary.ts says why).
     */
    workers: Type.Integer({ minimum: 1, maximum: 1024, default: 1 }),
    /** PostgreSQL: longest wait for a pooled or new connection before a request answers 503 `store_unavailable`. */
    storeConnectTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000, default: 2_000 }),
    /**
     * PostgreSQL: connections in each node's (each worker's) pool. A burst of visitor messages queues for them; with
     * 10, a burst of 1,000 on one node waited past `storeConnectTimeoutMs` and most visitors were refused with 503
     * (docs/operations.md "Capacity"). Nodes × this must stay below the server's `max_connections`.
     */
    storePoolSize: Type.Integer({ minimum: 1, maximum: 1_000, default: 20 }),
    /**
     * Companies whose settings and digital employees each node keeps in memory (LRU), read on every SDK request and
     * conversation creation (packages/server/src/companies/company-cache.ts); `0` reads the store every time.
     */
    companyCacheSize: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 10_000 }),
    /**
     * Longest a node keeps a cached company or digital employee, in milliseconds: what bounds a change nobody announced
     * (a CLI command on SQLite while the server runs). Changes through any node are seen at once by the next request.
     */
    companyCacheTtlMs: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 5_000 }),
    /** PostgreSQL: longest wait for one statement's answer before it fails (and the request answers 503). */
    storeQueryTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
    /**
     * Versioned master keys that wrap stored secrets (connector keys, signing keys): `"2:<base64 32 bytes>,1:<…>"`.
     * The highest version seals new data; older ones still open what they sealed. Unset: a key is generated in
     * dataDir (mode 0600) on first start, with a warning.
     */
    masterKeys: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Seal with this configured master version instead of the highest one. Lets a multi-node deployment first teach
     * every node a new version (rolling restart with the old one still primary), then switch sealing to it, so no
     * node ever meets a value wrapped with a version it does not know (docs/config.md "Rotating the master key").
     */
    masterKeyPrimary: Type.Optional(Type.Integer({ minimum: 1 })),
    webchat: Type.Object({
      /**
       * HS256 secret that signs connection and subscription tokens (at least 32 characters). Unset: generated into
       * dataDir (`realtime-token-secret`, mode 0600) on first start; every node of a cluster needs the same one.
       */
      tokenSecret: Type.Optional(Type.String({ minLength: 32 })),
      /** Key prefix of the realtime broker's Redis keys and PUB/SUB channels (all nodes of a cluster share it). */
      realtimeRedisPrefix: Type.String({ minLength: 1, maxLength: 100, default: 'parley:rt' }),
      /** Largest SendMessage / agent message in bytes of markdown text (all blocks together). */
      maxMessageBytes: Type.Integer({ minimum: 1, maximum: 60_000, default: 16_384 }),
      /** Most blocks in one SendMessage / agent message. */
      maxBlocks: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      /** Largest attachment in bytes unless a company sets its own `max_attachment_bytes` (10 MiB). */
      attachmentMaxBytes: Type.Integer({
        minimum: 1,
        maximum: 1024 * 1024 * 1024,
        default: 10 * 1024 * 1024,
      }),
      /** Conversations one session / one IP may create per minute before 429. */
      conversationsPerMinutePerSession: Type.Integer({ minimum: 1, default: 30 }),
      conversationsPerMinutePerIp: Type.Integer({ minimum: 1, default: 300 }),
      /** Messages one session / one IP may send per minute before the publish is refused (code 429). */
      messagesPerMinutePerSession: Type.Integer({ minimum: 1, default: 120 }),
      messagesPerMinutePerIp: Type.Integer({ minimum: 1, default: 1200 }),
      /** Files one visitor session / one IP may upload per minute before 429 (each lands in the shared store). */
      uploadsPerMinutePerSession: Type.Integer({ minimum: 1, default: 20 }),
      uploadsPerMinutePerIp: Type.Integer({ minimum: 1, default: 200 }),
      /** Bytes of uploads one visitor session / one IP may send per hour before 429 (webchat/attachments/upload-quota.ts). */
      uploadBytesPerHourPerSession: Type.Integer({ minimum: 1, default: 200 * 1024 * 1024 }),
      uploadBytesPerHourPerIp: Type.Integer({ minimum: 1, default: 1024 * 1024 * 1024 }),
      /** An upload no message refers to this long after it was made is deleted with its bytes (attachment sweeper). */
      unsentAttachmentTtlMs: Type.Integer({ minimum: 1000, default: 24 * 60 * 60 * 1000 }),
      /**
       * An erasure removes its conversations' realtime history once more this long after it ended, so a message
       * stored just before the erasure whose publish reached the broker late is not kept there (docs/privacy.md).
       */
      erasureLatePublishMs: Type.Integer({ minimum: 10, maximum: 600_000, default: 10_000 }),
      /** Shortest time between two partial envelopes of one streamed reply (40 ms ≈ 25 updates/s). */
      streamFlushIntervalMs: Type.Integer({ minimum: 0, default: 40 }),
      /**
       * The same while visitor messages wait to be taken in (a burst saturates the node): fewer partials of the replies
       * already streaming, so the waiting visitors' first envelopes come sooner. At most streamFlushIntervalMs (the
       * default, 0): off — it costs the replies' smoothness (docs/operations.md "Burst of visitors").
       */
      streamBusyFlushIntervalMs: Type.Integer({ minimum: 0, maximum: 1000, default: 0 }),
      /** How often a streaming reply's snapshot is written to the database (crash safety, other nodes' reads). */
      streamPersistIntervalMs: Type.Integer({ minimum: 0, default: 1000 }),
      /** A reply that takes longer is ended with an error block and a system message. */
      responderTimeoutMs: Type.Integer({ minimum: 1, default: 120_000 }),
      /** One action call of a digital employee (digital-employees/actions/) gets at most this long. */
      actionTimeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
      /**
       * A node's claim on a conversation's reply lasts this long unless renewed (every third of it): when a node
       * dies mid-reply, another one finishes the message and answers the queued ones within about this time.
       */
      replyLeaseMs: Type.Integer({ minimum: 300, maximum: 600_000, default: 6_000 }),
      /**
       * How long a streaming reply waits for a database that is away (to store its completion) before it is left
       * to a takeover, which ends it with `reply_interrupted`.
       */
      replyStoreWaitMs: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 120_000 }),
    }),
    oauth: Type.Object({
      /** `aud` of access tokens and the audience the bearer check requires (RFC 9068 §3). Defaults to publicUrl. */
      audience: Type.String({ minLength: 1 }),
      /** Failed client authentications per minute allowed per (client IP, client ID) before 429. */
      authFailuresPerMinute: Type.Integer({ minimum: 1, default: 60 }),
      /** Failed client authentications per minute allowed per client IP, whatever the client ID, before 429. */
      authFailuresPerMinutePerIp: Type.Integer({ minimum: 1, default: 600 }),
      /** Token requests per minute allowed per client before 429, for clients without their own quota. */
      tokensPerMinute: Type.Integer({ minimum: 1, default: 600 }),
      /** Bearer API calls per minute allowed per client before 429, for clients without their own quota. */
      apiCallsPerMinute: Type.Integer({ minimum: 1, default: 6000 }),
      /** Leeway for `exp`/`iat` checks on access tokens, in seconds. */
      clockToleranceSeconds: Type.Integer({ minimum: 0, maximum: 300, default: 30 }),
      /** Algorithm of signing keys created from now on (each key keeps the one it was made with). */
      signingAlg: Type.Union([Type.Literal('ES256'), Type.Literal('RS256')], { default: 'ES256' }),
      /** How often a node re-reads signing keys (to notice `keys rotate` run elsewhere), in milliseconds. */
      keyReloadIntervalMs: Type.Integer({ minimum: 50, maximum: 300_000, default: 30_000 }),
      /**
       * How often a node reads revocations made elsewhere from the store, in milliseconds: the path without a broker,
       * and the fallback with one (revocations are pushed over Redis then).
       */
      revocationPollMs: Type.Integer({ minimum: 50, maximum: 60_000, default: 400 }),
      /** Verified access tokens remembered per node (until their `exp`), so repeat calls skip the signature check. */
      tokenCacheSize: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 10_000 }),
      /** DPoP (RFC 9449 §11.1): how old a proof's `iat` may be, in seconds. */
      dpopProofMaxAgeSeconds: Type.Integer({ minimum: 5, maximum: 300, default: 60 }),
      /** DPoP server nonces (RFC 9449 §8, §9): every proof must carry a `nonce` the server handed out. */
      dpopNonce: Type.Boolean({ default: false }),
      /** A client's `jwks_uri` key set is re-fetched after this many seconds (or on an unknown `kid`). */
      jwksUriCacheSeconds: Type.Integer({ minimum: 10, maximum: 86_400, default: 300 }),
    }),
    rateLimit: Type.Object(
      {
        /** Prefix of rate-limit keys in Redis, so several deployments (or tests) can share one Redis. */
        keyPrefix: Type.String({ minLength: 1, maxLength: 100, default: 'parley:rl:' }),
      },
      { default: {} },
    ),
    portal: Type.Object(
      {
        /** Absolute lifetime of a portal sign-in session, whatever the activity. */
        sessionTtlSeconds: Type.Integer({ minimum: 1, default: 43_200 }),
        /** A session unused for this long ends (sliding; each request moves it forward). */
        sessionIdleSeconds: Type.Integer({ minimum: 1, default: 3_600 }),
        /**
         * Failed sign-ins allowed within one throttle window before 429: per (client IP, email), per email over every
         * IP, and per client IP over every email (packages/server/src/portal-api/login-throttle.ts).
         */
        loginFailuresPerEmail: Type.Integer({ minimum: 1, default: 10 }),
        loginFailuresPerEmailAllIps: Type.Integer({ minimum: 1, default: 100 }),
        loginFailuresPerIp: Type.Integer({ minimum: 1, default: 100 }),
        loginThrottleWindowSeconds: Type.Integer({ minimum: 1, default: 900 }),
      },
      { default: {} },
    ),
    metrics: Type.Object(
      {
        /** Serve `GET /metrics` on a listener of its own on this port (0: any free port), without a token. */
        port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
        /** Without a metrics port: `GET /metrics` on the main port requires `Authorization: Bearer <token>`. */
        token: Type.Optional(Type.String({ minLength: 16, maxLength: 512 })),
      },
      { default: {} },
    ),
    /** OpenTelemetry traces (docs/operations.md "Traces"); off unless an endpoint is set. */
    otel: Type.Object(
      {
        /** OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `{endpoint}/v1/traces`. */
        endpoint: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
        /** Full URL for traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), used as is; wins over `endpoint`. */
        tracesEndpoint: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
        serviceName: Type.String({ minLength: 1, default: 'parley' }),
        /** Longest time a finished span waits before it is exported (OTEL_BSP_SCHEDULE_DELAY), in ms. */
        exportDelayMs: Type.Integer({ minimum: 1, maximum: 600_000, default: 5_000 }),
      },
      { default: {} },
    ),
    integrations: Type.Object(
      {
        /**
         * Refuse outbound calls to special-purpose addresses (integrations/special-purpose-addresses.ts), judged on
         * every address connected to. loadConfig defaults it to whether publicUrl is https (production).
         */
        outboundBlockPrivate: Type.Boolean({ default: false }),
        /** Addresses or prefixes outbound calls may reach even so (`10.0.0.5`, `10.1.0.0/16`, `fd00::/8`). */
        outboundAllow: Type.Array(Type.String({ pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$' }), {
          default: [],
          maxItems: 256,
        }),
        /** Limit for a connector's response headers to arrive, and for silence while its body streams, in ms. */
        outboundTimeoutMs: Type.Integer({ minimum: 50, maximum: 600_000, default: 30_000 }),
        /** Same-origin redirects an outbound call follows (redirects to another origin are never followed). */
        outboundMaxRedirects: Type.Integer({ minimum: 0, maximum: 10, default: 3 }),
        /** Timeout of `POST /integrations/v1/connectors/{id}/check`, in ms. */
        checkTimeoutMs: Type.Integer({ minimum: 50, maximum: 60_000, default: 5_000 }),
      },
      { default: {} },
    ),
    knowledge: Type.Object(
      {
        /** Largest knowledge source accepted (JSON content, uploaded file or fetched page), in bytes. */
        maxSourceBytes: Type.Integer({ minimum: 1024, maximum: 50 * 1024 * 1024, default: 5 * 1024 * 1024 }),
        /** Time limit for fetching a knowledge source's URL (headers, and silence while the body streams), in ms. */
        fetchTimeoutMs: Type.Integer({ minimum: 50, maximum: 120_000, default: 10_000 }),
        /**
         * The line between relevant and not (0–1, docs/knowledge.md "Thresholds"): below it the digital employees
         * say they do not know and offer a person instead of answering.
         */
        relevanceThreshold: Type.Number({ minimum: 0, maximum: 1, default: 0.6 }),
      },
      { default: {} },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
