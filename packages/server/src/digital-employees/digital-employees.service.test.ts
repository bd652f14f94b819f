import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import * as m081 from '../storage/migrations/081_neutral_default_digital_employee.ts';
import { ChannelsService } from '../webchat/channels/channels.service.ts';
import { DEFAULT_DIGITAL_EMPLOYEE_NAME, defaultSettingsFor } from './default-digital-employee.ts';

for (const database of TEST_DATABASES) {
  describe(`digital employees service (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    const service = () => server.ctx.digitalEmployees;
    const defaultsOf = async (companyId: string) =>
      (await service().list(companyId)).filter((e) => e.isDefault);

    it('gives every new company a builtin default digital employee with a greeting, answers and a fallback', async () => {
      const company = await server.ctx.companies.create('Acme');
      const employees = await service().list(company.id);
      assert.equal(employees.length, 1);
      const ava = employees[0]!;
      assert.equal(ava.name, DEFAULT_DIGITAL_EMPLOYEE_NAME);
      assert.equal(ava.responder, 'builtin');
      assert.equal(ava.isDefault, true);
      assert.equal(ava.connectorId, null);
      assert.match(ava.settings.greeting ?? '', /^Hi, I'm Ava, Acme's digital assistant/);
      assert.ok((ava.settings.answers ?? []).length >= 3);
      assert.match(ava.settings.fallback ?? '', /Acme/);
      assert.deepEqual(ava.settings, defaultSettingsFor('Acme'));
      assert.deepEqual(await service().getDefault(company.id), ava);
    });

    it('migration 081 gives the neutral default to employees still holding the old text, and only to them', async () => {
      const db = server.ctx.store.db;
      const setSettings = (id: string, settings: object) =>
        db
          .updateTable('digital_employees')
          .set({ settings: JSON.stringify(settings) })
          .where('id', '=', id)
          .execute();
      const settingsOf = async (id: string) =>
        JSON.parse(
          (
            await db
              .selectFrom('digital_employees')
              .select('settings')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).settings,
        );
      const old = await server.ctx.companies.create('Old Shop');
      const oldAva = (await service().getDefault(old.id)).id;
      await setSettings(oldAva, m081.OLD_DEFAULT);
      const edited = await server.ctx.companies.create('Edited Shop');
      const editedAva = (await service().getDefault(edited.id)).id;
      const customised = { ...m081.OLD_DEFAULT, greeting: 'Welcome to Edited Shop!' };
      await setSettings(editedAva, customised);

      await m081.up(db);
      assert.deepEqual(await settingsOf(oldAva), defaultSettingsFor('Old Shop'));
      assert.deepEqual(await settingsOf(editedAva), customised, "an operator's text is kept");

      await m081.down(db);
      assert.deepEqual(await settingsOf(oldAva), m081.OLD_DEFAULT);
      assert.deepEqual(await settingsOf(editedAva), customised);
    });

    it('creates the default inside the company transaction: a failing later hook leaves no digital employee behind', async () => {
      const companies = server.ctx.companies;
      companies.addCreatedHook(async (_trx, company) => {
        if (company.name === 'Half set up') throw new Error('later hook failed');
      });
      await assert.rejects(companies.create('Half set up'), /later hook failed/);
      const rows = await server.ctx.store.db
        .selectFrom('digital_employees')
        .innerJoin('companies', 'companies.id', 'digital_employees.company_id')
        .select('digital_employees.id')
        .where('companies.name', '=', 'Half set up')
        .execute();
      assert.deepEqual(rows, []);
      const orphans = await server.ctx.store.db
        .selectFrom('digital_employees')
        .leftJoin('companies', 'companies.id', 'digital_employees.company_id')
        .select('digital_employees.id')
        .where('companies.id', 'is', null)
        .execute();
      assert.deepEqual(orphans, []);
    });

    it('keeps exactly one default: a new employee is not default unless asked, --default and setDefault move it', async () => {
      const company = await server.ctx.companies.create('Globex');
      const ava = await service().getDefault(company.id);
      const bob = await service().create({ companyId: company.id, name: '  Bob  ', responder: 'builtin' });
      assert.equal(bob.name, 'Bob');
      assert.equal(bob.isDefault, false);
      assert.equal((await service().getDefault(company.id)).id, ava.id);

      const cleo = await service().create({
        companyId: company.id,
        name: 'Cleo',
        responder: 'builtin',
        isDefault: true,
      });
      assert.equal(cleo.isDefault, true);
      assert.deepEqual(
        (await defaultsOf(company.id)).map((e) => e.id),
        [cleo.id],
      );

      const again = await service().setDefault(company.id, bob.id);
      assert.equal(again.isDefault, true);
      assert.deepEqual(
        (await defaultsOf(company.id)).map((e) => e.id),
        [bob.id],
      );
      assert.equal((await service().get(company.id, cleo.id)).isDefault, false);
    });

    it('survives concurrent default changes: every call succeeds and one default remains', async () => {
      const company = await server.ctx.companies.create('Racers');
      const bots = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          service().create({ companyId: company.id, name: `Bot ${i}`, responder: 'builtin' }),
        ),
      );
      await Promise.all([
        ...bots.map((bot) => service().setDefault(company.id, bot.id)),
        ...Array.from({ length: 4 }, (_, i) =>
          service().create({
            companyId: company.id,
            name: `New ${i}`,
            responder: 'builtin',
            isDefault: true,
          }),
        ),
      ]);
      assert.equal((await defaultsOf(company.id)).length, 1);
      assert.equal((await service().list(company.id)).length, 9);
    });

    it('lets the database itself refuse a second default for a company', async () => {
      const company = await server.ctx.companies.create('Initech');
      const ava = await service().getDefault(company.id);
      const stamp = new Date().toISOString();
      await assert.rejects(
        server.ctx.store.db
          .insertInto('digital_employees')
          .values({
            ...{ id: randomUUID(), company_id: company.id, name: 'Second', responder: 'builtin' },
            ...{ connector_id: null, model: null, system_prompt: null, settings: '{}', is_default: 1 },
            ...{ created_at: stamp, updated_at: stamp },
          })
          .execute(),
        /unique|UNIQUE/,
      );
      assert.deepEqual(
        (await defaultsOf(company.id)).map((e) => e.id),
        [ava.id],
      );
    });

    it('refuses to remove the default or one a channel routes to, but removes another digital employee', async () => {
      const company = await server.ctx.companies.create('Hooli');
      const ava = await service().getDefault(company.id);
      await assert.rejects(service().remove(company.id, ava.id), {
        code: 'default_digital_employee_required',
        status: 409,
      });
      const extra = await service().create({ companyId: company.id, name: 'Extra', responder: 'builtin' });
      const routed = await service().create({ companyId: company.id, name: 'Routed', responder: 'builtin' });
      await new ChannelsService(server.ctx.store.db, server.ctx.store.dialect).create({
        companyId: company.id,
        name: 'Site',
        digitalEmployeeId: routed.id,
      });
      await assert.rejects(service().remove(company.id, routed.id), {
        code: 'digital_employee_in_use',
        status: 409,
      });
      assert.ok(await service().find(company.id, routed.id));
      await service().remove(company.id, extra.id);
      assert.equal(await service().find(company.id, extra.id), undefined);
    });

    it('validates fields with stable codes', async () => {
      const company = await server.ctx.companies.create('Validators');
      const base = { companyId: company.id, name: 'Bot', responder: 'builtin' };
      const cases: Array<[Record<string, unknown>, string, string?]> = [
        [{ name: '   ' }, 'invalid_name', 'name'],
        [{ name: 'x'.repeat(101) }, 'invalid_name', 'name'],
        [{ responder: 'magic' }, 'invalid_responder', 'responder'],
        [{ connectorId: randomUUID() }, 'connector_not_allowed', 'connector_id'],
        [{ responder: 'webhook' }, 'connector_required', 'connector_id'],
        [{ responder: 'openai', model: 'gpt-4o-mini' }, 'connector_required', 'connector_id'],
        [{ responder: 'webhook', connectorId: randomUUID() }, 'connector_not_found', 'connector_id'],
        [{ responder: 'openai' }, 'invalid_model', 'model'],
        [{ model: 'gpt-4o' }, 'invalid_model', 'model'],
        [{ systemPrompt: 'Be nice' }, 'invalid_system_prompt', 'system_prompt'],
        [{ settings: [] }, 'invalid_settings', 'settings'],
        [{ settings: { greeting: 42 } }, 'invalid_settings', 'settings.greeting'],
        [{ settings: { colour: 'red' } }, 'invalid_settings'],
        [{ settings: { answers: [{ question: 'Q', keywords: [], answer: 'A' }] } }, 'invalid_settings'],
        [{ settings: { timeout_ms: 1000 } }, 'invalid_settings', 'settings.timeout_ms'],
        [{ settings: { word_delay_ms: -1 } }, 'invalid_settings', 'settings.word_delay_ms'],
        // Quick replies of a builtin answer follow the rules of interactive blocks (docs/design.md).
        [
          { settings: { answers: [{ question: 'Q', keywords: ['q'], answer: 'A', quick_replies: [] }] } },
          'invalid_settings',
          'settings.answers.0.quick_replies',
        ],
        [
          {
            settings: {
              answers: [
                {
                  question: 'Q',
                  keywords: ['q'],
                  answer: 'A',
                  quick_replies: [
                    { id: 'a', label: 'A' },
                    { id: 'a', label: 'Again' },
                  ],
                },
              ],
            },
          },
          'invalid_settings',
          'settings.answers.0.quick_replies',
        ],
      ];
      for (const [override, code, field] of cases) {
        const error = await service()
          .create({ ...base, ...override } as never)
          .then(
            () => undefined,
            (e: unknown) =>
              e as { code: string; status: number; extensions: { errors: Array<{ field: string }> } },
          );
        assert.ok(error, `expected ${code} for ${JSON.stringify(override)}`);
        assert.equal(error.code, code, JSON.stringify(override));
        assert.equal(error.status, 400);
        if (field) assert.equal(error.extensions.errors[0]!.field, field, JSON.stringify(override));
      }
      await assert.rejects(service().create({ ...base, companyId: randomUUID() }), {
        code: 'company_not_found',
        status: 404,
      });
      assert.equal((await service().list(company.id)).length, 1, 'no invalid digital employee was stored');
    });

    it('accepts only a connector of the same company and of the matching type', async () => {
      const company = await server.ctx.companies.create('Connected');
      const other = await server.ctx.companies.create('Elsewhere');
      const connector = (companyId: string, type: string) =>
        server.ctx.connectors.create(
          { companyId, name: `${type} connector`, type, url: 'http://127.0.0.1:9/bot', apiKey: 'k-123' },
          { actor: 'test' },
        );
      const webhook = await connector(company.id, 'webhook');
      const openai = await connector(company.id, 'openai');
      const foreign = await connector(other.id, 'webhook');

      const hook = await service().create({
        companyId: company.id,
        name: 'Hook',
        responder: 'webhook',
        connectorId: webhook.id,
      });
      assert.equal(hook.connectorId, webhook.id);
      const model = await service().create({
        companyId: company.id,
        name: 'Model',
        responder: 'openai',
        connectorId: openai.id,
        model: ' gpt-4o-mini ',
        systemPrompt: 'Be brief.',
        settings: { greeting: 'Hello from the model', timeout_ms: 20_000, history_limit: 10 },
      });
      assert.deepEqual(
        [model.model, model.systemPrompt, model.settings.history_limit],
        ['gpt-4o-mini', 'Be brief.', 10],
      );

      await assert.rejects(
        service().create({ companyId: company.id, name: 'X', responder: 'webhook', connectorId: openai.id }),
        { code: 'connector_type_mismatch', status: 400 },
      );
      await assert.rejects(
        service().create({
          companyId: company.id,
          name: 'X',
          responder: 'openai',
          model: 'm',
          connectorId: webhook.id,
        }),
        { code: 'connector_type_mismatch' },
      );
      await assert.rejects(
        service().create({ companyId: company.id, name: 'X', responder: 'webhook', connectorId: foreign.id }),
        { code: 'connector_not_found' },
      );
      await assert.rejects(service().update(company.id, hook.id, { connectorId: foreign.id }), {
        code: 'connector_not_found',
      });
      const switched = await service().update(company.id, hook.id, {
        responder: 'openai',
        connectorId: openai.id,
        model: 'gpt-4o',
      });
      assert.deepEqual(
        [switched.responder, switched.connectorId, switched.model],
        ['openai', openai.id, 'gpt-4o'],
      );
      const backToBuiltin = await service().update(company.id, model.id, { responder: 'builtin' });
      assert.deepEqual(
        [backToBuiltin.connectorId, backToBuiltin.model, backToBuiltin.systemPrompt, backToBuiltin.settings],
        [null, null, null, { greeting: 'Hello from the model' }],
      );
      const json = JSON.stringify(await service().list(company.id));
      assert.ok(!json.includes('k-123'), 'a digital employee never carries its connector key');
    });

    it('updates with the same validation and keeps companies apart', async () => {
      const company = await server.ctx.companies.create('Updaters');
      const other = await server.ctx.companies.create('Others');
      const bot = await service().create({ companyId: company.id, name: 'Bot', responder: 'builtin' });
      const answers = [{ question: 'Price?', keywords: ['price', 'cost'], answer: 'It is free.' }];
      const updated = await service().update(company.id, bot.id, {
        name: 'Priced Bot',
        settings: { greeting: 'Hello!', answers, fallback: 'No idea.', word_delay_ms: 0 },
      });
      assert.equal(updated.name, 'Priced Bot');
      assert.deepEqual(await service().get(company.id, bot.id), updated);
      assert.deepEqual(updated.settings.answers, answers);
      assert.ok(updated.updatedAt >= bot.updatedAt);
      // Switching to webhook drops the builtin-only settings (the greeting stays) but still needs a connector.
      await assert.rejects(service().update(company.id, bot.id, { responder: 'webhook' }), {
        code: 'connector_required',
      });
      await assert.rejects(
        service().update(company.id, bot.id, { responder: 'webhook', settings: { answers } }),
        { code: 'invalid_settings' },
      );
      await assert.rejects(service().update(company.id, bot.id, { name: '' }), { code: 'invalid_name' });
      await assert.rejects(service().get(other.id, bot.id), {
        code: 'digital_employee_not_found',
        status: 404,
      });
      await assert.rejects(service().update(other.id, bot.id, { name: 'Stolen' }), {
        code: 'digital_employee_not_found',
      });
      await assert.rejects(service().setDefault(other.id, bot.id), { code: 'digital_employee_not_found' });
      assert.equal(await service().find(company.id, 'not-a-uuid'), undefined);
      assert.deepEqual(await service().list('not-a-uuid'), []);
    });
  });
}
