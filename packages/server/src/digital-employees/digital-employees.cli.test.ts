import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
interface ListedEmployee {
  id: string;
  name: string;
  responder: string;
  is_default: boolean;
  settings: { greeting?: string };
}

const bin = new URL('../../bin/parley.js', import.meta.url).pathname;

// The real CLI in a child process, against its own SQLite data folder (same env contract as `npx parley`).
describe('digital-employees CLI', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-de-cli-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // biome-ignore lint/suspicious/noExplicitAny: CLI output is parsed JSON, asserted field by field.
  async function parley(...args: string[]): Promise<{ code: number; json: Record<string, any> }> {
    const env: NodeJS.ProcessEnv = { ...process.env, PARLEY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.PARLEY_MASTER_KEYS;
    try {
      const { stdout } = await run(process.execPath, [bin, ...args, '--json'], { env, timeout: 60_000 });
      return { code: 0, json: JSON.parse(stdout) };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, json: JSON.parse(e.stdout) };
    }
  }

  it('creates and lists digital employees; the company starts with Ava as its default', async () => {
    const company = (await parley('companies', 'create', '--name', 'CLI Co')).json;
    const initial = (await parley('digital-employees', 'list', '--company', company.id)).json;
    assert.deepEqual(
      initial.digital_employees.map((e: ListedEmployee) => [e.name, e.responder, e.is_default]),
      [['Ava', 'builtin', true]],
    );

    const created = await parley(
      ...['digital-employees', 'create', '--company', company.id, '--name', 'Bert', '--responder', 'builtin'],
      ...['--greeting', 'Hi from Bert', '--default'],
    );
    assert.equal(created.code, 0);
    assert.deepEqual(Object.keys(created.json), ['id']);

    const listed = (await parley('digital-employees', 'list', '--company', company.id)).json
      .digital_employees;
    const bert = listed.find((e: ListedEmployee) => e.id === created.json.id);
    assert.equal(bert.name, 'Bert');
    assert.equal(bert.settings.greeting, 'Hi from Bert');
    assert.deepEqual(
      listed.filter((e: ListedEmployee) => e.is_default).map((e: ListedEmployee) => e.id),
      [created.json.id],
    );

    const invalid = await parley(
      'digital-employees',
      'create',
      '--company',
      company.id,
      '--name',
      'W',
      '--responder',
      'webhook',
    );
    assert.equal(invalid.code, 1);
    assert.equal(invalid.json.error.code, 'connector_required');
  });
});
