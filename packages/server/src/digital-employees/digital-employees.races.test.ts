import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, signInClient, startAcme } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

/** Rounds of each race: the losing interleaving showed in 8 of 10 on PostgreSQL before the fix. */
const ROUNDS = 25;

// Two admins act at the same moment, as two browser tabs or two people do: every round must end in one of the
// states a one-at-a-time order would give, and the company always keeps exactly one default.
for (const database of TEST_DATABASES) {
  describe(`digital employees changed concurrently (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let first: PortalTestClient;
    let second: PortalTestClient;
    before(async () => {
      ({ server, acmeId } = await startAcme(database, {
        'one@acme.test': 'admin',
        'two@acme.test': 'admin',
      }));
      first = await signInClient(server, 'one@acme.test');
      second = await signInClient(server, 'two@acme.test');
    });
    after(() => server.close());

    const defaults = async () =>
      (await server.ctx.digitalEmployees.list(acmeId)).filter((e) => e.isDefault).map((e) => e.id);
    const newEmployee = async (name: string) =>
      (await server.ctx.digitalEmployees.create({ companyId: acmeId, name, responder: 'builtin' })).id;

    it('"make it the default" and "delete it" at once: either it is the default and stays, or it is gone and the old default stays', async () => {
      const outcomes = new Set<string>();
      for (let round = 0; round < ROUNDS; round++) {
        const [before] = await defaults();
        const id = await newEmployee(`Race ${round}`);
        const [made, deleted] = await Promise.all([
          first.post(`/digital-employees/${id}/default`),
          second.del(`/digital-employees/${id}`),
        ]);
        const exists = (await server.ctx.digitalEmployees.find(acmeId, id)) !== undefined;
        const now = await defaults();
        assert.equal(now.length, 1, `round ${round}: exactly one default (${now.length})`);
        if (exists) {
          assert.deepEqual([made.status, deleted.status], [200, 409], `round ${round}: default first`);
          assert.equal(deleted.body.code, 'default_digital_employee_required');
          assert.deepEqual(now, [id]);
        } else {
          assert.deepEqual([made.status, deleted.status], [404, 204], `round ${round}: delete first`);
          assert.deepEqual(now, [before]);
        }
        outcomes.add(exists ? 'made the default' : 'deleted');
      }
      assert.ok(outcomes.size > 0);
    });

    it('two employees made the default at once: exactly one of them is', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const a = await newEmployee(`A ${round}`);
        const b = await newEmployee(`B ${round}`);
        const answers = await Promise.all([
          first.post(`/digital-employees/${a}/default`),
          second.post(`/digital-employees/${b}/default`),
        ]);
        assert.deepEqual(
          answers.map((r) => r.status),
          [200, 200],
        );
        const now = await defaults();
        assert.equal(now.length, 1, `round ${round}`);
        assert.ok(now[0] === a || now[0] === b);
      }
    });
  });
}
