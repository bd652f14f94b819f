import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PortalTestClient } from '@parley/testing/portal/portal-test-client';
import { PARLEY_CLI } from '@parley/testing/process';
import { startTestServer } from '@parley/testing/test-server';
import { runCli } from '../cli/main.ts';

describe('parley users create (CLI)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-users-cli-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const env = { ...process.env, PARLEY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };

  const parley = (...args: string[]) => {
    const run = spawnSync(process.execPath, [...PARLEY_CLI, ...args, '--json'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return {
      status: run.status,
      out: run.stdout.trim() ? JSON.parse(run.stdout.trim()) : undefined,
      stderr: run.stderr,
    };
  };

  let companyId = '';

  // In-process (same code path as the binary, minus a slow process start per case).
  const parleyInProcess = async (...args: string[]) => {
    const lines: string[] = [];
    const status = await runCli([...args, '--json'], (l) => lines.push(l), { env });
    return { status, out: JSON.parse(lines.join('\n')) };
  };

  it('creates the first admin, who can then sign in to the portal', async () => {
    companyId = (await parleyInProcess('companies', 'create', '--name', 'Acme')).out.id;
    const created = parley(
      'users',
      'create',
      '--company',
      companyId,
      '--email',
      'Boss@Acme.test',
      '--password',
      'twelve chars!',
      '--role',
      'admin',
    );
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(Object.keys(created.out).sort(), ['email', 'id', 'role']);
    assert.equal(created.out.email, 'boss@acme.test');
    assert.equal(created.out.role, 'admin');
    assert.match(created.out.id, /^[0-9a-f-]{36}$/);

    // The server on the same data folder accepts the password.
    const server = await startTestServer({ config: { dataDir } });
    try {
      const portal = new PortalTestClient(server.baseUrl);
      const res = await portal.signIn('boss@acme.test', 'twelve chars!');
      assert.equal(res.status, 200);
      assert.equal(res.body.user.id, created.out.id);
    } finally {
      await server.app.close();
    }
  });

  it('gives the user the display name of --name (in the result only when given), and refuses a bad one', async () => {
    const named = await parleyInProcess(
      'users',
      'create',
      '--company',
      companyId,
      '--email',
      'dana@acme.test',
      '--password',
      'twelve chars!',
      '--role',
      'agent',
      '--name',
      'Dana Reyes',
    );
    assert.equal(named.status, 0);
    assert.deepEqual(Object.keys(named.out).sort(), ['email', 'id', 'name', 'role']);
    assert.equal(named.out.name, 'Dana Reyes');
    const server = await startTestServer({ config: { dataDir } });
    try {
      assert.equal((await server.ctx.users.find(named.out.id))?.name, 'Dana Reyes');
    } finally {
      await server.app.close();
    }
    for (const name of ['', 'Dana\nReyes', 'x'.repeat(81)]) {
      const bad = await parleyInProcess(
        'users',
        'create',
        '--company',
        companyId,
        '--email',
        'other@acme.test',
        '--password',
        'twelve chars!',
        '--role',
        'agent',
        '--name',
        name,
      );
      assert.equal(bad.status, 1, JSON.stringify(name));
      assert.equal(bad.out.error.code, 'invalid_name');
    }
  });

  it('answers stable error codes for a weak password, a bad role or email, a taken email and an unknown company', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--company', companyId, '--email', 'a@acme.test', '--password', 'elevenchars', '--role', 'agent'],
        'weak_password',
      ],
      [
        ['--company', companyId, '--email', 'a@acme.test', '--password', 'twelve chars!', '--role', 'owner'],
        'invalid_role',
      ],
      [
        ['--company', companyId, '--email', 'not-an-email', '--password', 'twelve chars!', '--role', 'agent'],
        'invalid_email',
      ],
      [
        [
          '--company',
          companyId,
          '--email',
          'BOSS@acme.test',
          '--password',
          'twelve chars!',
          '--role',
          'agent',
        ],
        'email_taken',
      ],
      [
        [
          '--company',
          '00000000-0000-4000-8000-000000000000',
          '--email',
          'b@acme.test',
          '--password',
          'twelve chars!',
          '--role',
          'agent',
        ],
        'company_not_found',
      ],
    ];
    for (const [args, code] of cases) {
      const run = await parleyInProcess('users', 'create', ...args);
      assert.equal(run.status, 1, code);
      assert.equal(run.out.error.code, code);
      assert.ok(!JSON.stringify(run.out).includes('twelve chars!'), 'the password is never echoed');
    }
    const missing = await parleyInProcess(
      'users',
      'create',
      '--company',
      companyId,
      '--email',
      'c@acme.test',
      '--role',
      'agent',
    );
    assert.equal(missing.status, 2);
    assert.equal(missing.out.error.code, 'usage');
  });
});
