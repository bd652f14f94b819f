import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal channels (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      ({ server, acmeId, acme, globex, agent } = await startPortalWorld(database));
    });
    after(() => server.close());

    it('creates a channel routed to a digital employee and hands out its widget snippet', async () => {
      const list = await acme.get('/channels');
      assert.equal(list.status, 200);
      const employee = list.body.digital_employees.find((e: { is_default: boolean }) => e.is_default);
      assert.ok(employee, 'the company’s default digital employee is offered');
      const created = await acme.post('/channels', {
        name: 'Shop',
        digital_employee_id: employee.id,
        allowed_origins: ['https://Shop.example'],
      });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body.digital_employee, { id: employee.id, name: employee.name });
      assert.deepEqual(created.body.allowed_origins, ['https://shop.example']);
      assert.equal(
        created.body.snippet,
        `<script src="${server.config.publicUrl}/widget.js" data-company="${acmeId}" data-channel="${created.body.id}"></script>`,
      );
      const again = await acme.get('/channels');
      assert.equal(again.body.total, 1);
      assert.equal(again.body.items[0].snippet, created.body.snippet);
    });

    it('refuses another company’s digital employee and keeps lists apart', async () => {
      const acmeEmployee = (await acme.get('/channels')).body.digital_employees[0].id;
      const res = await globex.post('/channels', { name: 'Stolen', digital_employee_id: acmeEmployee });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'digital_employee_not_found');
      const seen = await globex.get('/channels');
      assert.equal(seen.body.total, 0);
      assert.ok(!seen.body.digital_employees.some((e: { id: string }) => e.id === acmeEmployee));
    });

    it('validates, and refuses agents and forged requests', async () => {
      const employee = (await acme.get('/channels')).body.digital_employees[0].id;
      assert.equal(
        (await acme.post('/channels', { name: ' ', digital_employee_id: employee })).body.code,
        'invalid_name',
      );
      assert.equal(
        (
          await acme.post('/channels', {
            name: 'x',
            digital_employee_id: employee,
            allowed_origins: ['ftp://x'],
          })
        ).body.code,
        'invalid_origin',
      );
      assert.equal((await agent.get('/channels')).status, 403);
      assert.equal(
        (await acme.post('/channels', { name: 'forged', digital_employee_id: employee }, { csrf: null })).body
          .code,
        'csrf_failed',
      );
      assert.equal((await acme.get('/channels')).body.total, 1);
    });
  });
}
