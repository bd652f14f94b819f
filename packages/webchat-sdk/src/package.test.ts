import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { stagePackage } from './package.ts';

/**
 * `@parley/webchat-sdk` as an integrator gets it: staged and packed with `npm pack`, installed from the tarball into
 * an empty project outside the repository (offline, no registry: the tarball has no dependencies; `ws`, which Node 20
 * needs for WebSocket, is packed from this repository's copy), then its example chats with a real server, and a
 * TypeScript file type-checks against the published declarations.
 */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
let server: TestServer;
let work: string;

before(async () => {
  server = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'parley-sdk-pack-'));
});

after(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

/** npm, kept off the network: any registry request fails at once instead of being made. */
function npm(args: string[], cwd: string) {
  const result = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
  });
  assert.equal(result.status, 0, `npm ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout.trim();
}

test('the packed SDK installs alone from its tarball, chats from Node, and its types check', async () => {
  const staged = join(work, 'staged');
  await stagePackage(staged);
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  npm(['pack', '--pack-destination', tarballs], staged);
  npm(['pack', '--pack-destination', tarballs, join(REPO, 'node_modules/ws')], work);
  const files = readdirSync(tarballs);
  const sdk = files.find((f) => f.startsWith('parley-webchat-sdk-'));
  const ws = files.find((f) => f.startsWith('ws-'));
  assert.ok(sdk && ws, files.join(', '));

  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'shop', private: true, type: 'module' }),
  );
  npm(['install', '--offline', '--ignore-scripts', join(tarballs, sdk), join(tarballs, ws)], project);

  const installed = join(project, 'node_modules/@parley/webchat-sdk');
  const published = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(
    published.dependencies,
    undefined,
    'no dependencies: the protocol and the realtime client are bundled',
  );
  assert.ok(!existsSync(join(installed, 'src')), 'no TypeScript sources, only dist/');
  const bundle = readFileSync(join(installed, 'dist/index.js'), 'utf8');
  assert.doesNotMatch(
    bundle,
    /from\s*["'](@parley|centrifuge)/,
    'nothing imported from the repository or npm',
  );
  assert.deepEqual(readdirSync(join(project, 'node_modules')).sort(), [
    '.package-lock.json',
    '@parley',
    'ws',
  ]);

  // The package's own example, run as documented, against a real server.
  const companyId = (await server.ctx.companies.create('Pack Co')).id;
  writeFileSync(join(project, 'chat.mjs'), readFileSync(join(installed, 'examples/node-chat.mjs')));
  // Asynchronously: the server runs in this process, and a blocking spawn would stop it from answering.
  const run = await promisify(execFile)(process.execPath, ['chat.mjs', 'What can you do?'], {
    cwd: project,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, PARLEY_URL: server.baseUrl, PARLEY_COMPANY: companyId },
  });
  const [sent, reply] = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(sent.sent, 'What can you do?');
  assert.match(sent.status, /^(sent|complete)$/, 'stored by the server');
  assert.match(reply.reply, /^I can answer common questions about Pack Co/);

  // A TypeScript consumer: the published declarations type the API (an error is caught, so they are not `any`).
  writeFileSync(
    join(project, 'check.ts'),
    `import { createWebchat, type ChatMessage, type WebchatOptions, WebchatError } from '@parley/webchat-sdk';
const options: WebchatOptions = { baseUrl: 'https://chat.example.com', companyId: 'c', transports: ['websocket'] };
export const textOf = (m: ChatMessage): string => m.text;
export const isError = (e: unknown): boolean => e instanceof WebchatError && e.code === 'send_failed';
export async function start() {
  const chat = await createWebchat(options);
  chat.on('message:completed', (m) => m.blocks.length);
  // @ts-expect-error: status is a union of strings, not a number
  const n: number = chat.messages[0]!.status;
  return n;
}
`,
  );
  const tsc = spawnSync(
    process.execPath,
    [
      join(REPO, 'node_modules/typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
      '--types',
      '',
      'check.ts',
    ],
    { cwd: project, encoding: 'utf8' },
  );
  assert.equal(tsc.status, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`);
});
