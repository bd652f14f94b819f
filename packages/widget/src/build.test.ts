import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { buildWidgetAssets } from './build.ts';

test('the launcher stays under 15 KiB gzipped and names the chat module and stylesheet it loads', async () => {
  const assets = await buildWidgetAssets();
  const launcher = gzipSync(assets.launcher, { level: 9 }).length;
  assert.ok(launcher <= 15 * 1024, `launcher: ${launcher} B gzipped`);
  assert.ok(assets.launcher.includes(assets.chat.name), 'the launcher imports the chat by its hashed name');
  assert.ok(assets.launcher.includes(assets.css.name), 'and knows the stylesheet for old browsers');
  // The realtime client, the markdown parser and the panel are in the chat module only.
  for (const marker of ['centrifuge', 'parley-panel', 'unread-separator'])
    assert.ok(assets.chat.code.includes(marker), `chat has ${marker}`);
  for (const marker of ['unread-separator', 'parley-open'])
    assert.ok(!assets.launcher.includes(marker), `launcher has no ${marker}`);
  assert.match(assets.chat.name, /^chat\.[\w-]{16}\.js$/);
  assert.match(assets.chat.code, /export\s*\{/, 'the chat is an ES module');
  // No eval or new Function anywhere: a strict CSP has no 'unsafe-eval'.
  for (const code of [assets.launcher, assets.chat.code])
    assert.doesNotMatch(code, /\beval\(|new Function\(/);
});
