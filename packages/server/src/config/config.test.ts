import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from './load.ts';

describe('config', () => {
  it('defaults to the embedded setup: :8080, data/ of the installation, SQLite, memory broker', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, fileURLToPath(new URL('../../../../data', import.meta.url)));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.oauth.audience, 'http://localhost:8080');
    assert.equal(config.oauth.authFailuresPerMinute, 60, 'per address and client: 60 a minute before 429');
    assert.equal(config.oauth.authFailuresPerMinutePerIp, 600, 'per address: a much higher ceiling');
    assert.equal(config.oauth.tokensPerMinute, 600);
  });

  it('runs one worker per core only when PostgreSQL and Redis make the workers one cluster', () => {
    const both = { DATABASE_URL: 'postgres://u@db/parley', REDIS_URL: 'redis://cache:6379' };
    assert.equal(loadConfig({}).workers, 1, 'SQLite and the memory broker: one process');
    assert.equal(loadConfig({ REDIS_URL: both.REDIS_URL }).workers, 1, 'SQLite stays single-process');
    assert.equal(loadConfig(both).workers, availableParallelism());
    assert.equal(loadConfig({ ...both, PARLEY_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ ...both, PARLEY_WORKERS: '1' }).workers, 1);
    assert.throws(
      () => loadConfig({ REDIS_URL: both.REDIS_URL, PARLEY_WORKERS: '2' }),
      (err: unknown) => err instanceof ConfigError && /workers need DATABASE_URL/.test(err.message),
    );
    assert.throws(() => loadConfig({ ...both, PARLEY_WORKERS: '0' }), ConfigError);
  });

  it('reads the documented environment variables', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      PARLEY_PUBLIC_URL: 'https://chat.example.com/',
      PARLEY_DATA_DIR: '/var/lib/parley',
      DATABASE_URL: 'postgres://u@db/parley',
      REDIS_URL: 'redis://cache:6379',
      LOG_LEVEL: 'warn',
      PARLEY_TRUST_PROXY: 'true',
    });
    assert.equal(config.port, 9000);
    assert.equal(
      config.publicUrl,
      'https://chat.example.com',
      'trailing slash removed: it is the token issuer',
    );
    assert.equal(config.oauth.audience, 'https://chat.example.com');
    assert.equal(config.databaseUrl, 'postgres://u@db/parley');
    assert.equal(config.redisUrl, 'redis://cache:6379');
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.trustProxy, true);
  });

  it('derives the public URL and token audience from overrides, which win over the environment', () => {
    const byPort = loadConfig({ PORT: '9000' }, { port: 7000 });
    assert.equal(byPort.port, 7000);
    assert.equal(byPort.publicUrl, 'http://localhost:7000');
    assert.equal(byPort.oauth.audience, 'http://localhost:7000');
    const byUrl = loadConfig(
      { PARLEY_PUBLIC_URL: 'https://env.example' },
      { publicUrl: 'https://chat.example' },
    );
    assert.equal(byUrl.publicUrl, 'https://chat.example');
    assert.equal(byUrl.oauth.audience, 'https://chat.example');
  });

  it('knows whether the public URL was configured or is the localhost default', () => {
    assert.equal(loadConfig({}).publicUrlConfigured, false);
    assert.equal(loadConfig({ PARLEY_PUBLIC_URL: '' }).publicUrlConfigured, false, 'empty is unset');
    assert.equal(loadConfig({ PARLEY_PUBLIC_URL: 'http://localhost:8080' }).publicUrlConfigured, true);
    assert.equal(loadConfig({}, { publicUrl: 'https://chat.example' }).publicUrlConfigured, true);
  });

  it('blocks private outbound destinations by default exactly when the public URL is https', () => {
    const blocks = (env: Record<string, string>, overrides = {}) =>
      loadConfig(env, overrides).integrations.outboundBlockPrivate;
    assert.equal(blocks({}), false, 'development: http://localhost');
    assert.equal(blocks({ PARLEY_PUBLIC_URL: 'http://chat.internal' }), false);
    assert.equal(blocks({ PARLEY_PUBLIC_URL: 'https://chat.example' }), true);
    assert.equal(blocks({}, { publicUrl: 'https://chat.example' }), true);
    assert.equal(
      blocks({ PARLEY_PUBLIC_URL: 'https://chat.example', PARLEY_OUTBOUND_BLOCK_PRIVATE: 'false' }),
      false,
    );
    assert.equal(
      blocks({ PARLEY_PUBLIC_URL: 'http://chat.internal', PARLEY_OUTBOUND_BLOCK_PRIVATE: 'true' }),
      true,
    );
    assert.deepEqual(loadConfig({ PARLEY_OUTBOUND_ALLOW: '10.0.0.5, fd00::/8' }).integrations.outboundAllow, [
      '10.0.0.5',
      'fd00::/8',
    ]);
    assert.throws(() => loadConfig({ PARLEY_OUTBOUND_ALLOW: 'intranet.example' }), ConfigError);
  });

  it('reads the HTTP edge limits and the upload quotas, with their documented defaults', () => {
    const defaults = loadConfig({});
    assert.deepEqual(defaults.http, {
      headersTimeoutMs: 30_000,
      bodyTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
      maxConnectionsPerAddress: 256,
    });
    assert.equal(defaults.webchat.uploadBytesPerHourPerSession, 200 * 1024 * 1024);
    assert.equal(defaults.webchat.uploadBytesPerHourPerIp, 1024 * 1024 * 1024);
    assert.equal(defaults.webchat.unsentAttachmentTtlMs, 24 * 60 * 60 * 1000);
    const set = loadConfig({
      PARLEY_HEADERS_TIMEOUT_MS: '5000',
      PARLEY_BODY_TIMEOUT_MS: '60000',
      PARLEY_KEEP_ALIVE_TIMEOUT_MS: '10000',
      PARLEY_MAX_CONNECTIONS_PER_ADDRESS: '64',
      PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_SESSION: '1000',
      PARLEY_WEBCHAT_UPLOAD_BYTES_PER_HOUR_PER_IP: '2000',
      PARLEY_ATTACHMENT_UNSENT_TTL_MS: '3600000',
      PARLEY_AUTH_FAILURES_PER_MINUTE_PER_IP: '900',
    });
    assert.deepEqual(set.http, {
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 60_000,
      keepAliveTimeoutMs: 10_000,
      maxConnectionsPerAddress: 64,
    });
    assert.equal(set.webchat.uploadBytesPerHourPerSession, 1000);
    assert.equal(set.webchat.uploadBytesPerHourPerIp, 2000);
    assert.equal(set.webchat.unsentAttachmentTtlMs, 3_600_000);
    assert.equal(set.oauth.authFailuresPerMinutePerIp, 900);
  });

  it('reads secret settings from the files their _FILE variables name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-config-'));
    try {
      const keys = `1:${Buffer.alloc(32, 7).toString('base64')}`;
      writeFileSync(join(dir, 'master-keys'), `${keys}\n`);
      writeFileSync(join(dir, 'token'), 'a'.repeat(40));
      const config = loadConfig({
        PARLEY_MASTER_KEYS_FILE: join(dir, 'master-keys'),
        PARLEY_REALTIME_TOKEN_SECRET_FILE: join(dir, 'token'),
        PARLEY_METRICS_TOKEN_FILE: join(dir, 'token'),
      });
      assert.equal(config.masterKeys, keys, 'one final line break dropped');
      assert.equal(config.webchat.tokenSecret, 'a'.repeat(40));
      assert.equal(config.metrics.token, 'a'.repeat(40));
      assert.throws(
        () => loadConfig({ PARLEY_MASTER_KEYS: keys, PARLEY_MASTER_KEYS_FILE: join(dir, 'master-keys') }),
        (err: unknown) => err instanceof ConfigError && /not both/.test(err.message),
      );
      assert.throws(
        () => loadConfig({ PARLEY_MASTER_KEYS_FILE: join(dir, 'missing') }),
        (err: unknown) =>
          err instanceof ConfigError && /ENOENT/.test(err.message) && !err.message.includes(keys),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses invalid values, listing every problem without echoing secrets', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://root:hunter2@db/x', LOG_LEVEL: 'loud' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length >= 3, true, err.message);
        assert.match(err.message, /\/port/);
        assert.match(err.message, /\/databaseUrl/);
        assert.match(err.message, /\/logLevel/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      },
    );
  });

  it('does not echo a metrics token that is too short', () => {
    assert.throws(
      () => loadConfig({ PARLEY_METRICS_TOKEN: 'sesame-123' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /\/metrics\/token/);
        assert.doesNotMatch(err.message, /sesame-123/);
        return true;
      },
    );
  });

  it('does not echo a rejected collector endpoint, which may carry credentials', () => {
    assert.throws(
      () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318@user:hunter2' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /\/otel\/endpoint/);
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      },
    );
  });
});
