import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnvFor } from '@parley/testing/cli';
import { PortalTestClient } from '@parley/testing/portal/portal-test-client';
import { PARLEY_CLI } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { runCli } from './main.ts';

/**
 * Secrets the CLI takes (docs/design.md "CLI"): `--password`, `--api-key` also come from a file (`--password-file
 * PATH`) or standard input (`--password-file -`), so they need not be in the process list or the shell history.
 */
describe('CLI secrets from files and standard input', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let companyId: string;
  const dir = mkdtempSync(join(tmpdir(), 'parley-cli-secrets-'));
  before(async () => {
    server = await startTestServer();
    env = { ...(await cliEnvFor(server)), LOG_LEVEL: 'silent' };
    companyId = (await server.ctx.companies.create('Secret Co')).id;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The real binary as a child process: what `ps` would show is its argv, which holds no secret here. */
  const parley = (args: string[], input?: string) => {
    const run = spawnSync(process.execPath, [...PARLEY_CLI, ...args, '--json'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 60_000,
      input,
    });
    return { status: run.status, out: JSON.parse(run.stdout.trim() || '{}'), stderr: run.stderr };
  };
  const inProcess = async (args: string[], stdin?: string) => {
    const lines: string[] = [];
    const status = await runCli([...args, '--json'], (l) => lines.push(l), {
      env,
      readStdin: () => {
        if (stdin === undefined) throw Object.assign(new Error('no input'), { code: 'EAGAIN' });
        return stdin;
      },
    });
    return { status, out: JSON.parse(lines.join('\n')) };
  };
  const signIn = (email: string, password: string) =>
    new PortalTestClient(server.baseUrl).signIn(email, password);
  const user = (email: string) => [
    'users',
    'create',
    '--company',
    companyId,
    '--email',
    email,
    '--role',
    'agent',
  ];

  it('creates a user with --password-file (one final line break dropped, spaces kept) and with --password-file - (standard input)', async () => {
    const file = join(dir, 'password');
    writeFileSync(file, ' a file password \n');
    const fromFile = parley([...user('file@secret.test'), '--password-file', file]);
    assert.equal(fromFile.status, 0, fromFile.stderr);
    assert.equal((await signIn('file@secret.test', ' a file password ')).status, 200);

    const fromStdin = parley([...user('stdin@secret.test'), '--password-file', '-'], 'piped password!\n');
    assert.equal(fromStdin.status, 0, fromStdin.stderr);
    assert.equal((await signIn('stdin@secret.test', 'piped password!')).status, 200);
  });

  it('stores a connector key given with --api-key-file, and shows it nowhere', async () => {
    const file = join(dir, 'api-key');
    writeFileSync(file, 'sk-from-a-file\n');
    const created = await inProcess([
      ...['connectors', 'create', '--company', companyId, '--name', 'LLM', '--type', 'openai'],
      ...['--url', 'http://127.0.0.1:9/v1', '--api-key-file', file],
    ]);
    assert.equal(created.status, 0, JSON.stringify(created.out));
    assert.ok(!JSON.stringify(created.out).includes('sk-from-a-file'));
    const { apiKey } = await server.ctx.connectors.readCredentials(companyId, created.out.id);
    assert.equal(apiKey, 'sk-from-a-file');
  });

  it('refuses a secret given twice, a file that cannot be read and an empty one, as usage errors that quote no secret', async () => {
    const file = join(dir, 'twice');
    writeFileSync(file, 'twelve chars or more');
    const twice = await inProcess([
      ...user('twice@secret.test'),
      '--password',
      'also twelve chars',
      '--password-file',
      file,
    ]);
    assert.equal(twice.status, 2);
    assert.equal(twice.out.error.code, 'usage');
    assert.match(twice.out.error.message, /given twice/);
    assert.ok(!JSON.stringify(twice.out).includes('twelve chars'));

    const missing = await inProcess([...user('missing@secret.test'), '--password-file', join(dir, 'nope')]);
    assert.equal(missing.status, 2);
    assert.match(missing.out.error.message, /cannot read .* \(ENOENT\)/);

    writeFileSync(join(dir, 'empty'), '\n');
    const empty = await inProcess([...user('empty@secret.test'), '--password-file', join(dir, 'empty')]);
    assert.equal(empty.status, 2);
    assert.match(empty.out.error.message, /is empty/);

    const neither = await inProcess(user('neither@secret.test'));
    assert.equal(neither.status, 2);
    assert.match(neither.out.error.message, /--password is required \(or --password-file\)/);

    const notSecret = await inProcess([...user('x@secret.test'), '--email-file', file]);
    assert.equal(notSecret.status, 2, 'only secret options have a -file form');
    assert.match(notSecret.out.error.message, /unknown option --email-file/);
  });
});
