import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '@parley/testing/process';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const PACKAGES = ['realtime', 'webchat-sdk', 'widget', 'portal'];

/**
 * A throwaway checkout of the repository: the root files, scripts and the server's bin copied, the sources and
 * node_modules linked. Builds land in its own dist/, so this test never touches the repository's build (nor races
 * other tests that run `npx parley`).
 */
function throwawayCheckout(): string {
  const root = mkdtempSync(join(tmpdir(), 'parley-build-'));
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(REPO, file), join(root, file));
  cpSync(join(REPO, 'scripts'), join(root, 'scripts'), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  mkdirSync(join(root, 'packages', 'server'), { recursive: true });
  for (const name of PACKAGES) symlinkSync(join(REPO, 'packages', name), join(root, 'packages', name));
  cpSync(join(REPO, 'packages/server/bin'), join(root, 'packages/server/bin'), { recursive: true });
  cpSync(join(REPO, 'packages/server/package.json'), join(root, 'packages/server/package.json'));
  symlinkSync(join(REPO, 'packages/server/src'), join(root, 'packages/server/src'));
  return root;
}

describe('production build (npm run build, npm start)', () => {
  let root: string;
  let dataDir: string;
  before(() => {
    root = throwawayCheckout();
    dataDir = mkdtempSync(join(tmpdir(), 'parley-build-data-'));
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  const dist = (file = '') => join(root, 'dist', file);
  const npm = (...args: string[]) =>
    spawnSync('npm', args, { cwd: root, encoding: 'utf8', timeout: 120_000, env: process.env });
  const npmStart = () =>
    startServerProcess({ PARLEY_DATA_DIR: dataDir }, { command: 'npm', args: ['start'], cwd: root });
  const BUILDS_FIRST = 'running `npm run build` first';

  it('`npm run build` emits JavaScript and the assets; the built server answers /healthz and /readyz', async () => {
    const build = npm('run', 'build');
    assert.equal(build.status, 0, build.stderr);
    for (const file of [
      'parley.mjs',
      'build-info.json',
      'assets/widget.js',
      'assets/widget.json',
      'assets/portal.js',
      'assets/portal.css',
    ])
      assert.ok(existsSync(dist(file)), file);
    const bundle = readFileSync(dist('parley.mjs'), 'utf8');
    assert.doesNotMatch(bundle, /\bfrom ["']tsx|import\(["']tsx/, 'no TypeScript loader at run time');

    const server = await npmStart();
    try {
      assert.ok(!server.stdout().includes(BUILDS_FIRST), 'a current build is used as it is');
      assert.deepEqual(await (await fetch(`${server.baseUrl}/healthz`)).json(), { status: 'ok' });
      const ready = await fetch(`${server.baseUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok' } });
      // The browser assets are the build's files, not bundled again at run time.
      const widget = await (await fetch(`${server.baseUrl}/widget.js`)).text();
      assert.equal(widget, readFileSync(dist('assets/widget.js'), 'utf8'));
      // The chat the launcher loads later: named by its hash in the launcher, served long-cached from the build.
      const names = JSON.parse(readFileSync(dist('assets/widget.json'), 'utf8')) as {
        chat: string;
        css: string;
      };
      assert.ok(widget.includes(names.chat), 'the launcher names the chat module it loads');
      const chat = await fetch(`${server.baseUrl}/widget/${names.chat}`);
      assert.equal(chat.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(await chat.text(), readFileSync(dist(`assets/widget/${names.chat}`), 'utf8'));
      const portal = await (await fetch(`${server.baseUrl}/portal/assets/app.js`)).text();
      assert.equal(portal, readFileSync(dist('assets/portal.js'), 'utf8'));
    } finally {
      await server.stop();
    }
    assert.match(server.stdout(), /"msg":"shutting down"/);
  });

  it('`npx parley` runs the build when it is current, and the sources when it is not', () => {
    // A marker appended to this throwaway build shows which one ran.
    appendFileSync(dist('parley.mjs'), '\nprocess.stderr.write("ran dist/parley.mjs\\n");\n');
    const parley = () =>
      spawnSync(
        process.execPath,
        [join(root, 'packages/server/bin/parley.js'), 'companies', 'create'].concat([
          '--name',
          'Acme',
          '--json',
        ]),
        { encoding: 'utf8', env: { ...process.env, PARLEY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' } },
      );
    const built = parley();
    assert.equal(built.status, 0, built.stderr);
    assert.equal(JSON.parse(built.stdout).name, 'Acme');
    assert.match(built.stderr, /ran dist\/parley\.mjs/);

    utimesSync(dist('build-info.json'), new Date(1_000_000), new Date(1_000_000));
    const fromSources = parley();
    assert.equal(fromSources.status, 0, fromSources.stderr);
    assert.equal(JSON.parse(fromSources.stdout).name, 'Acme');
    assert.doesNotMatch(fromSources.stderr, /ran dist/);
  });

  it('`npm start` builds first when the build is older than the sources, or missing', async () => {
    for (const state of ['older than the sources', 'missing']) {
      if (state === 'missing') rmSync(dist(), { recursive: true, force: true });
      else utimesSync(dist('build-info.json'), new Date(1_000_000), new Date(1_000_000));
      const server = await npmStart();
      try {
        assert.ok(
          server.stdout().includes(`the build in dist/ is ${state}; ${BUILDS_FIRST}`),
          server.stdout(),
        );
        assert.equal((await fetch(`${server.baseUrl}/readyz`)).status, 200);
      } finally {
        await server.stop();
      }
      assert.ok(statSync(dist('build-info.json')).mtimeMs > 1_000_000_000, 'a new build');
    }
  });
});
