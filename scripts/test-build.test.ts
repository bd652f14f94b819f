import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildTests } from './test-build.mjs';

// What `npm test` runs is the test files compiled into bundles (scripts/test-build.mjs); a test must not be able to
// tell that from running its TypeScript source.
const root = join(import.meta.dirname, '..');
const outDir = join(root, 'test-artifacts', `test-build-check-${process.pid}`);
const sample = 'scripts/test-build-fixtures/sample.fixture.ts';
after(() => rmSync(outDir, { recursive: true, force: true }));

test('a compiled test file sees its own place, its packages, class names and TypeScript lines as its source would', async () => {
  const bundles = await buildTests([sample], { root, outDir });
  const bundle = bundles.get(sample) ?? '';
  assert.ok(bundle.startsWith(outDir), `${bundle} lies in the build folder`);
  const run = spawnSync(process.execPath, ['--enable-source-maps', bundle], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const seen = JSON.parse(run.stdout);
  const source = join(root, sample);
  assert.equal(seen.url, pathToFileURL(source).href);
  assert.equal(seen.dirname, join(root, 'scripts', 'test-build-fixtures'));
  assert.equal(seen.filename, source);
  assert.equal(
    seen.otherUrl,
    pathToFileURL(join(root, 'scripts/test-build-fixtures/other-place.fixture.ts')).href,
  );
  assert.equal(seen.spelled, 'import.meta.url', 'a string that spells the expression is left alone');
  assert.deepEqual(seen.names, ['Sample', 'Sample', 'sample', 'other-place']);
  assert.equal(seen.clock, 'function', 'a workspace package (@parley/testing) is compiled in');
  assert.equal(seen.pgClient, 'function', 'a dependency is loaded from node_modules');
  assert.match(seen.stackLine, /sample\.fixture\.ts:\d+:\d+/, 'stack traces name the TypeScript file');
});
