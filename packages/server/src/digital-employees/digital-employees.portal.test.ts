import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal digital employees (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      ({ server, acmeId, acme, globex, agent } = await startPortalWorld(database));
    });
    after(() => server.close());

    it('lists the builtin default, creates a webhook employee on a connector, edits it and makes it the default', async () => {
      const list = await acme.get('/digital-employees');
      assert.equal(list.body.total, 1);
      const builtin = list.body.items[0];
      assert.equal(builtin.is_default, true);
      assert.deepEqual(list.body.responders, ['builtin', 'webhook', 'openai']);

      const connector = await acme.post('/connectors', {
        name: 'Hook',
        type: 'webhook',
        url: 'http://127.0.0.1:9/hook',
      });
      const created = await acme.post('/digital-employees', {
        name: 'Ava',
        responder: 'webhook',
        connector_id: connector.body.id,
        greeting: 'Hi!',
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.is_default, false);
      assert.deepEqual(created.body.settings, { greeting: 'Hi!' });

      const edited = await acme.request('PATCH', `/digital-employees/${created.body.id}`, {
        name: 'Ava 2',
        greeting: '',
      });
      assert.equal(edited.status, 200);
      assert.equal(edited.body.name, 'Ava 2');
      assert.deepEqual(edited.body.settings, {});

      const made = await acme.post(`/digital-employees/${created.body.id}/default`);
      assert.equal(made.body.is_default, true);
      assert.equal((await server.ctx.digitalEmployees.getDefault(acmeId)).id, created.body.id);
      const refused = await acme.del(`/digital-employees/${created.body.id}`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'default_digital_employee_required');
      assert.equal((await acme.del(`/digital-employees/${builtin.id}`)).status, 204);
      const events = await server.ctx.audit.list({ companyId: acmeId });
      for (const type of [
        'digital_employee.created',
        'digital_employee.updated',
        'digital_employee.default_changed',
        'digital_employee.deleted',
      ]) {
        assert.ok(
          events.some((e) => e.type === type && e.actor?.startsWith('user:')),
          type,
        );
      }
    });

    it("switches an openai employee's handover tool off and on again; other responders refuse it", async () => {
      const connector = await acme.post('/connectors', {
        name: 'Model',
        type: 'openai',
        url: 'http://127.0.0.1:9/v1',
        api_key: 'sk-portal-test',
      });
      assert.equal(connector.status, 201, connector.text);
      const created = await acme.post('/digital-employees', {
        name: 'Modelled',
        responder: 'openai',
        connector_id: connector.body.id,
        model: 'm',
        handover_tool: false,
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.settings, { handover_tool: false });
      const on = await acme.request('PATCH', `/digital-employees/${created.body.id}`, {
        handover_tool: true,
      });
      assert.equal(on.status, 200);
      assert.deepEqual(on.body.settings, {}, 'on is the default: nothing stored');
      const builtin = await acme.post('/digital-employees', {
        name: 'Scripted',
        responder: 'builtin',
        handover_tool: false,
      });
      assert.equal(builtin.status, 400);
      assert.equal(builtin.body.code, 'invalid_settings');
    });

    it('answers field errors', async () => {
      const noConnector = await acme.post('/digital-employees', { name: 'Bot', responder: 'webhook' });
      assert.equal(noConnector.body.code, 'connector_required');
      assert.equal(noConnector.body.errors[0].field, 'connector_id');
      const blank = await acme.post('/digital-employees', { name: ' ', responder: 'builtin' });
      assert.equal(blank.body.code, 'invalid_name');
      const noModel = await acme.post('/digital-employees', {
        name: 'GPT',
        responder: 'openai',
        connector_id: null,
      });
      assert.equal(noModel.status, 400);
    });

    it('keeps companies apart and refuses agents and forged requests', async () => {
      const acmeEmployee = (await acme.get('/digital-employees')).body.items[0].id;
      assert.ok(
        !(await globex.get('/digital-employees')).body.items.some(
          (e: { id: string }) => e.id === acmeEmployee,
        ),
      );
      assert.equal(
        (await globex.request('PATCH', `/digital-employees/${acmeEmployee}`, { name: 'pwned' })).status,
        404,
      );
      assert.equal((await globex.post(`/digital-employees/${acmeEmployee}/default`)).status, 404);
      assert.equal((await globex.del(`/digital-employees/${acmeEmployee}`)).status, 404);
      assert.equal((await agent.get('/digital-employees')).status, 403);
      assert.equal(
        (
          await acme.request(
            'PATCH',
            `/digital-employees/${acmeEmployee}`,
            { name: 'forged' },
            { csrf: null },
          )
        ).body.code,
        'csrf_failed',
      );
      assert.notEqual((await server.ctx.digitalEmployees.get(acmeId, acmeEmployee)).name, 'forged');
    });
  });
}
