import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PARLEY_BIN } from '@parley/testing/process';
import { installationRoot, resolveDataDir } from './data-folder.ts';
import { loadConfig } from './load.ts';

/** The repository's root folder (where `npm start` runs and the default `data/` lives). */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url)).replace(/\/$/, '');

describe('the data folder is found from any working directory', () => {
  it('the installation root is the folder of the root package.json, wherever the process runs', () => {
    assert.equal(installationRoot(), ROOT);
  });

  it('PARLEY_DATA_DIR (default data) is resolved against the installation root, not the working directory', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'parley-cwd-'));
    const before = process.cwd();
    try {
      process.chdir(elsewhere);
      assert.equal(loadConfig({}).dataDir, join(ROOT, 'data'));
      assert.equal(loadConfig({ PARLEY_DATA_DIR: './data' }).dataDir, join(ROOT, 'data'));
      assert.equal(loadConfig({ PARLEY_DATA_DIR: 'var/parley' }).dataDir, join(ROOT, 'var/parley'));
      assert.equal(loadConfig({ PARLEY_DATA_DIR: '/srv/parley' }).dataDir, '/srv/parley');
      assert.equal(loadConfig({}, { dataDir: 'x' }).dataDir, join(ROOT, 'x'), 'overrides too');
    } finally {
      process.chdir(before);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('without an installation root only an absolute folder will do', () => {
    assert.equal(resolveDataDir(undefined, undefined), undefined);
    assert.equal(resolveDataDir('data', undefined), undefined);
    assert.equal(resolveDataDir('/srv/parley', undefined), '/srv/parley');
  });

  describe('npx parley from two other folders', () => {
    // Relative, so it is resolved like the default; under .tmp/ (git-ignored) so the real data/ is never touched.
    const relative = `.tmp/data-folder-test-${process.pid}`;
    const dataDir = join(ROOT, relative);
    const cwds = [mkdtempSync(join(tmpdir(), 'parley-a-')), join(ROOT, 'packages/server/src')];
    after(() => {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cwds[0]!, { recursive: true, force: true });
    });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(PARLEY_|DATABASE_URL|REDIS_URL|LOG_LEVEL)/.test(k)),
    );
    const parley = (cwd: string, ...args: string[]) =>
      spawnSync(process.execPath, [PARLEY_BIN, ...args, '--json'], {
        cwd,
        env: { ...env, PARLEY_DATA_DIR: relative },
        encoding: 'utf8',
        timeout: 60_000,
      });

    it('both use one data folder, and the first run says it created it', () => {
      const created = parley(cwds[0]!, 'companies', 'create', '--name', 'Made elsewhere');
      assert.equal(created.status, 0, created.stderr);
      const company = JSON.parse(created.stdout);
      assert.match(created.stderr, /created a new data folder/);
      assert.ok(created.stderr.includes(JSON.stringify(dataDir)), 'the message names the folder');
      assert.ok(existsSync(join(dataDir, 'parley.db')) && existsSync(join(dataDir, 'master-keys')));
      assert.ok(!existsSync(join(cwds[0]!, relative)), 'nothing was made in the working directory');

      const listed = parley(cwds[1]!, 'companies', 'list');
      assert.equal(listed.status, 0, listed.stderr);
      assert.ok(
        JSON.parse(listed.stdout).companies.some((c: { id: string }) => c.id === company.id),
        'the company made from the other folder is there',
      );
      assert.doesNotMatch(listed.stderr, /created a new data folder|generated a master key/);
      assert.ok(!existsSync(join(cwds[1]!, relative)));
    });
  });
});
