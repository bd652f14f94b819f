import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { build } from 'esbuild';

/**
 * `useParleyChat` in a real React render: a small app (react-dom's `createRoot`, under `<StrictMode>`, so the
 * development double mount runs too) bundled with esbuild and loaded in headless Chromium from the server's origin;
 * it shows the greeting, sends a message and renders the streamed reply, and unmounting the component closes the
 * SDK client.
 */
let server: TestServer;
let browser: TestBrowser;
let companyId: string;

/** The app under test: a chat component with the hook, and a button that mounts and unmounts it. */
const APP = `
import { createElement as h, StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useParleyChat } from ${JSON.stringify(fileURLToPath(new URL('./index.ts', import.meta.url)))};

function Chat() {
  const { messages, state, send, chat } = useParleyChat({ baseUrl: location.origin, companyId: COMPANY_ID });
  window.__chat = chat;
  const [text, setText] = useState('');
  return h('section', { 'aria-label': 'Chat' },
    h('p', { id: 'state' }, state),
    h('ol', { id: 'messages' }, messages.map((m) =>
      h('li', { key: m.key, 'data-role': m.role, 'data-status': m.status }, m.text))),
    h('form', { onSubmit: (e) => { e.preventDefault(); send(text).catch(() => {}); setText(''); } },
      h('input', { id: 'text', 'aria-label': 'Your message', value: text, onChange: (e) => setText(e.target.value) }),
      h('button', { type: 'submit' }, 'Send')));
}

function App() {
  const [shown, setShown] = useState(true);
  return h('main', null,
    h('button', { id: 'toggle', onClick: () => setShown((s) => !s) }, shown ? 'Hide chat' : 'Show chat'),
    shown ? h(Chat) : null);
}

createRoot(document.getElementById('root')).render(h(StrictMode, null, h(App)));
`;

before(async () => {
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('React Co')).id;
  const bundled = await build({
    stdin: { contents: APP, loader: 'js', resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    define: { 'process.env.NODE_ENV': '"development"', COMPANY_ID: JSON.stringify(companyId) },
    logLevel: 'silent',
  });
  const app = bundled.outputFiles[0]!.text;
  browser = await startChromium({ viewport: { width: 800, height: 600 } });
  browser.page.on('pageerror', (err) => console.error('page error:', err.message));
  // The app is served from the server's origin (as the site of a company without a channel would be).
  await browser.page.route(`${server.baseUrl}/react-app/**`, (route) =>
    route.request().url().endsWith('.js')
      ? route.fulfill({ contentType: 'text/javascript', body: app })
      : route.fulfill({
          contentType: 'text/html',
          body: '<!doctype html><html lang="en"><title>React</title><div id="root"></div><script type="module" src="/react-app/app.js"></script>',
        }),
  );
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('useParleyChat renders the conversation, sends, streams the reply, and closes the client on unmount', async () => {
  const { page } = browser;
  await page.goto(`${server.baseUrl}/react-app/`);
  await page.locator('#state', { hasText: 'connected' }).waitFor({ timeout: 20_000 });
  const replies = page.locator('li[data-role="digital_employee"][data-status="complete"]');
  await replies.first().waitFor({ timeout: 20_000 });
  assert.match((await replies.first().textContent()) ?? '', /Ava/, 'the greeting rendered');

  await page.locator('#text').fill('What can you do?');
  await page.locator('button[type="submit"]').click();
  await page.locator('li[data-role="user"]', { hasText: 'What can you do?' }).waitFor();
  await replies.nth(1).waitFor({ timeout: 20_000 });
  assert.match((await replies.nth(1).textContent()) ?? '', /^I can answer common questions about /);
  assert.equal(await page.locator('li[data-role="user"]').count(), 1, 'sent once, StrictMode or not');

  await page.locator('#toggle').click();
  await page.locator('#messages').waitFor({ state: 'detached' });
  await page.waitForFunction(
    () => (window as unknown as { __chat: { state: string } }).__chat.state === 'disconnected',
  );
});
