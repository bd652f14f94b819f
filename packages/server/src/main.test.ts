import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startServerProcess } from '@parley/testing/process';

describe('the server process (npm start)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-main-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts with no setup, answers health checks, logs JSON lines, and shuts down gracefully on SIGTERM', async () => {
    const server = await startServerProcess({ PARLEY_DATA_DIR: dataDir });
    try {
      assert.deepEqual(await (await fetch(`${server.baseUrl}/healthz`)).json(), { status: 'ok' });
      const ready = await fetch(`${server.baseUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok' } });
      assert.ok(existsSync(join(dataDir, 'parley.db')), 'SQLite database created in the data folder');
      assert.ok(existsSync(join(dataDir, 'master-keys')), 'master key generated in the data folder');
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
    const lines = server
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    assert.ok(lines.length > 0);
    for (const line of lines) JSON.parse(line);
    assert.ok(lines.some((l) => JSON.parse(l).msg === 'parley is serving'));
    assert.ok(lines.some((l) => JSON.parse(l).msg === 'shutting down'));
  });

  it('refuses to start with an invalid configuration and says why', async () => {
    await assert.rejects(startServerProcess({ PARLEY_DATA_DIR: dataDir, LOG_LEVEL: 'loud' }), /logLevel/);
  });
});
