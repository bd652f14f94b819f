import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { auditCursor } from '../audit/audit.service.ts';
import { compileOnce } from './compiled.ts';

// The foundation's store contract: the same assertions on SQLite and PostgreSQL.
for (const database of TEST_DATABASES) {
  describe(`store contract (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    it('creates, finds and lists companies', async () => {
      const a = await server.ctx.companies.create('  Acme  ');
      const b = await server.ctx.companies.create('Globex');
      assert.equal(a.name, 'Acme');
      assert.match(a.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(await server.ctx.companies.find(a.id), a);
      const ids = (await server.ctx.companies.list()).map((c) => c.id);
      assert.ok(ids.includes(a.id) && ids.includes(b.id));
    });

    it('rejects blank and oversized company names and unknown ids', async () => {
      await assert.rejects(server.ctx.companies.create('   '), { code: 'invalid_name' });
      await assert.rejects(server.ctx.companies.create('x'.repeat(201)), { code: 'invalid_name' });
      assert.equal(await server.ctx.companies.find('not-a-uuid'), undefined);
      await assert.rejects(server.ctx.companies.get('00000000-0000-4000-8000-000000000000'), {
        code: 'company_not_found',
      });
    });

    it('sets allowed origins and answers the updated company; unknown ids are company_not_found', async () => {
      const company = await server.ctx.companies.create('Origins Co');
      const updated = await server.ctx.companies.setAllowedOrigins(company.id, ['https://shop.example']);
      assert.deepEqual(updated, { ...company, allowedOrigins: ['https://shop.example'] });
      assert.deepEqual(await server.ctx.companies.find(company.id), updated);
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid'])
        await assert.rejects(server.ctx.companies.setAllowedOrigins(id, []), { code: 'company_not_found' });
    });

    it('rolls back a company whose creation hook fails', async () => {
      const before = (await server.ctx.companies.list()).length;
      const companies = server.ctx.companies;
      companies.addCreatedHook(async (_trx, company) => {
        if (company.name === 'Doomed') throw new Error('hook failed');
      });
      await assert.rejects(companies.create('Doomed'), /hook failed/);
      assert.equal((await companies.list()).length, before);
    });

    it('compiles a query once and binds named arguments in the order the dialect needs', async () => {
      const { db } = server.ctx.store;
      const company = await server.ctx.companies.create('Compiled Co');
      // Arguments named out of SQL order, plus a constant of the query itself ('[]').
      const rename = compileOnce<{ id: string; name: string }>((arg) =>
        db
          .updateTable('companies')
          .set({ name: arg('name'), allowed_origins: '[]' })
          .where('id', '=', arg('id'))
          .returning(['id', 'name', 'allowed_origins']),
      );
      const first = rename({ name: 'Renamed Co', id: company.id });
      assert.deepEqual(first.parameters, ['Renamed Co', '[]', company.id]);
      const { rows } = await db.executeQuery(first);
      assert.deepEqual(rows, [{ id: company.id, name: 'Renamed Co', allowed_origins: '[]' }]);
      // Same SQL text for every call: one prepared statement.
      assert.equal(rename({ id: 'x', name: 'y' }).sql, first.sql);
    });

    it('reads with a precompiled statement, never inside another open transaction', async () => {
      const { db } = server.ctx.store;
      const byName = db.selectFrom('companies').select(['id', 'name']).where('name', '=', '').compile().sql;
      const acme = await server.ctx.companies.create('Read Acme');
      assert.deepEqual(await server.ctx.store.read(byName, ['Read Acme']), [
        { id: acme.id, name: 'Read Acme' },
      ]);
      assert.deepEqual(await server.ctx.store.read(byName, ['Nobody']), []);

      // A read issued while a transaction has written but not committed must not see that write, and must
      // still answer once the transaction is gone (rolled back here).
      let pending: Promise<unknown[]> | undefined;
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await trx
            .insertInto('companies')
            .values({
              id: crypto.randomUUID(),
              name: 'Uncommitted',
              allowed_origins: '[]',
              created_at: new Date().toISOString(),
            })
            .execute();
          pending = server.ctx.store.read(byName, ['Uncommitted']);
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual(await pending, []);
    });

    it('records and pages audit events newest first, filtered by company and type', async () => {
      const company = await server.ctx.companies.create('Audited');
      for (let i = 0; i < 3; i++) {
        await server.ctx.audit.record({
          type: 'thing.happened',
          companyId: company.id,
          subject: `s${i}`,
          details: { i },
        });
        // Each in its own millisecond: the `before` cursor below is a bare timestamp (the next test pages events
        // that share one). A wait for the clock to tick, not for an event.
        await new Promise((r) => setTimeout(r, 2));
      }
      await server.ctx.audit.record({ type: 'other.happened', companyId: company.id });
      const events = await server.ctx.audit.list({ companyId: company.id, type: 'thing.happened' });
      assert.deepEqual(
        events.map((e) => e.details),
        [{ i: 2 }, { i: 1 }, { i: 0 }],
      );
      const older = await server.ctx.audit.list({
        companyId: company.id,
        type: 'thing.happened',
        before: events[0]!.createdAt,
      });
      assert.deepEqual(
        older.map((e) => e.subject),
        ['s1', 's0'],
      );
    });

    it('pages audit events that share a timestamp without skipping any', async () => {
      const company = await server.ctx.companies.create('Same millisecond');
      // Insert rows with one identical timestamp directly: only the id can order them.
      const createdAt = new Date().toISOString();
      const ids = [
        '00000000-0000-4000-8000-000000000001',
        '00000000-0000-4000-8000-000000000002',
        '00000000-0000-4000-8000-000000000003',
      ];
      for (const id of ids) {
        await server.ctx.store.db
          .insertInto('audit_events')
          .values({
            id,
            company_id: company.id,
            type: 'tie.happened',
            actor: null,
            subject: id,
            ip: null,
            details: '{}',
            created_at: createdAt,
          })
          .execute();
      }
      const seen: string[] = [];
      let before: string | undefined;
      for (let page = 0; page < 5; page++) {
        const events = await server.ctx.audit.list({ companyId: company.id, limit: 1, before });
        if (events.length === 0) break;
        seen.push(events[0]!.id);
        before = auditCursor(events[0]!);
      }
      assert.deepEqual(seen, [...ids].reverse());
    });
  });
}
