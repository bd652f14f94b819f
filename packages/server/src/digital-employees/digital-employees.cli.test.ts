import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../cli/main.ts';

interface ListedEmployee {
  id: string;
  name: string;
  responder: string;
  is_default: boolean;
  settings: { greeting?: string; handover_tool?: boolean };
}

// The real CLI entry (argument parsing, config from the environment, a context per command, `--json` output) run
// in this test process against its own SQLite data folder: the same path `npx parley …` takes after tsx starts.
describe('digital-employees CLI', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-de-cli-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // Passed to runCli rather than written into process.env, so other suites in this process are not affected.
  const env = {
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    PARLEY_MASTER_KEYS: undefined,
  };

  // biome-ignore lint/suspicious/noExplicitAny: CLI output is parsed JSON, asserted field by field.
  async function parley(...args: string[]): Promise<{ code: number; json: Record<string, any> }> {
    const lines: string[] = [];
    const code = await runCli([...args, '--json'], (line) => lines.push(line), { env });
    assert.equal(lines.length, 1, 'one JSON object on stdout');
    return { code, json: JSON.parse(lines[0]!) };
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

    const connector = (
      await parley(
        ...['connectors', 'create', '--company', company.id, '--name', 'LLM', '--type', 'openai'],
        ...['--url', 'http://127.0.0.1:9/v1', '--api-key', 'sk-cli-secret'],
      )
    ).json;
    const model = await parley(
      ...['digital-employees', 'create', '--company', company.id, '--name', 'Max', '--responder', 'openai'],
      ...['--connector', connector.id, '--model', 'gpt-4o-mini', '--system-prompt', 'Be brief.'],
      '--no-handover-tool',
    );
    assert.equal(model.code, 0, JSON.stringify(model.json));
    const listedMax = (await parley('digital-employees', 'list', '--company', company.id)).json
      .digital_employees;
    assert.deepEqual(
      listedMax.find((e: ListedEmployee) => e.id === model.json.id).settings,
      { handover_tool: false },
      'the model is not offered the handover tool',
    );
    const max = (
      await parley('digital-employees', 'list', '--company', company.id)
    ).json.digital_employees.find((e: ListedEmployee) => e.id === model.json.id);
    assert.deepEqual(
      [max.responder, max.connector_id, max.model, max.system_prompt, max.is_default],
      ['openai', connector.id, 'gpt-4o-mini', 'Be brief.', false],
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

  it('adds, lists and deletes actions of a digital employee with an http connector', async () => {
    const company = (await parley('companies', 'create', '--name', 'Actions Co')).json;
    const employee = (await parley('digital-employees', 'list', '--company', company.id)).json
      .digital_employees[0];
    const connector = (
      await parley(
        ...['connectors', 'create', '--company', company.id, '--name', 'shop', '--type', 'http'],
        ...['--url', 'https://shop.example.com/api', '--api-key', 'shop-key-1'],
      )
    ).json;
    assert.ok(connector.id, JSON.stringify(connector));
    const schema = JSON.stringify({
      type: 'object',
      properties: { order_id: { type: 'string' } },
      required: ['order_id'],
    });
    const added = await parley(
      ...['digital-employees', 'actions', 'add', '--company', company.id, '--employee', employee.id],
      ...['--name', 'lookup_order', '--description', 'Finds an order', '--parameters', schema],
      ...['--connector', connector.id, '--method', 'GET', '--path', '/orders/{order_id}'],
    );
    assert.equal(added.code, 0, JSON.stringify(added.json));
    assert.equal(added.json.name, 'lookup_order');
    const bad = await parley(
      ...['digital-employees', 'actions', 'add', '--company', company.id, '--employee', employee.id],
      ...[
        '--name',
        'Bad Name',
        '--description',
        'x',
        '--connector',
        connector.id,
        '--method',
        'GET',
        '--path',
        '/x',
      ],
    );
    assert.notEqual(bad.code, 0);
    assert.equal(bad.json.error.code, 'invalid_action');
    const listed = (
      await parley('digital-employees', 'actions', 'list', '--company', company.id, '--employee', employee.id)
    ).json;
    assert.deepEqual(
      listed.actions.map((a: { name: string }) => a.name),
      ['lookup_order'],
    );
    const deleted = await parley(
      ...['digital-employees', 'actions', 'delete', '--company', company.id, '--employee', employee.id],
      ...['--action-id', added.json.id],
    );
    assert.equal(deleted.code, 0);
    const after = (
      await parley('digital-employees', 'actions', 'list', '--company', company.id, '--employee', employee.id)
    ).json;
    assert.deepEqual(after.actions, []);
  });
});
