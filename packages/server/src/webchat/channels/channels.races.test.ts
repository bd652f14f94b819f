import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, signInClient, startAcme } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

/** Rounds of the race: a channel left pointing at nothing showed in 1 of 8 on PostgreSQL before the fix. */
const ROUNDS = 30;

for (const database of TEST_DATABASES) {
  describe(`channels and digital employees changed concurrently (${database})`, () => {
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

    it('a channel created while its digital employee is deleted: either the channel exists and the employee stays, or neither', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { id } = await server.ctx.digitalEmployees.create({
          companyId: acmeId,
          name: `Routed ${round}`,
          responder: 'builtin',
        });
        const [created, deleted] = await Promise.all([
          first.post('/channels', { name: `Shop ${round}`, digital_employee_id: id }),
          second.del(`/digital-employees/${id}`),
        ]);
        const employee = await server.ctx.digitalEmployees.find(acmeId, id);
        const channels = (await server.ctx.webchat.channels.list(acmeId)).filter(
          (c) => c.digitalEmployeeId === id,
        );
        if (employee) {
          assert.deepEqual([created.status, deleted.status], [201, 409], `round ${round}: channel first`);
          assert.equal(deleted.body.code, 'digital_employee_in_use');
          assert.equal(channels.length, 1);
        } else {
          assert.deepEqual([created.status, deleted.status], [404, 204], `round ${round}: delete first`);
          assert.equal(created.body.code, 'digital_employee_not_found');
          assert.deepEqual(channels, [], `round ${round}: no channel points at a deleted digital employee`);
        }
      }
      const dangling = await server.ctx.store.db
        .selectFrom('channels as c')
        .leftJoin('digital_employees as e', 'e.id', 'c.digital_employee_id')
        .select('c.id')
        .where('e.id', 'is', null)
        .execute();
      assert.deepEqual(dangling, []);
    });
  });
}
