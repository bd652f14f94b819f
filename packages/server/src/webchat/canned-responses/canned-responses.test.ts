import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalWorld, startPortalWorld } from '@parley/testing/portal/portal-fixtures';

// Canned responses (docs/routing.md): admins write, every portal user reads, shortcuts unique per company, tenants
// isolated, on both stores.
for (const database of TEST_DATABASES) {
  describe(`canned responses (${database})`, () => {
    let world: PortalWorld;
    before(async () => {
      world = await startPortalWorld(database);
    });
    after(() => world.server.close());

    it('lets admins create, edit and delete, and agents read and filter', async () => {
      const { acme, agent } = world;
      const created = await acme.post('/canned-responses', {
        shortcut: 'refund',
        title: 'Refund policy',
        content: 'You can get a **full refund** within 30 days.',
      });
      assert.equal(created.status, 201, created.text);
      await acme.post('/canned-responses', {
        shortcut: 'hello',
        title: 'Greeting',
        content: 'Hi! How can I help?',
      });

      const all = await agent.get('/canned-responses');
      assert.deepEqual(
        all.body.items.map((r: { shortcut: string }) => r.shortcut),
        ['hello', 'refund'],
      );
      const filtered = await agent.get('/canned-responses?q=POLICY');
      assert.deepEqual(
        filtered.body.items.map((r: { shortcut: string }) => r.shortcut),
        ['refund'],
      );

      assert.equal(
        (await agent.post('/canned-responses', { shortcut: 'x', title: 'x', content: 'x' })).body.code,
        'forbidden_role',
      );
      const edited = await acme.put(`/canned-responses/${created.body.id}`, {
        shortcut: 'refunds',
        title: 'Refund policy',
        content: 'Refunds within 30 days.',
      });
      assert.equal(edited.status, 200);
      assert.equal(edited.body.shortcut, 'refunds');
      assert.equal((await acme.del(`/canned-responses/${created.body.id}`)).status, 204);
      const gone = await acme.del(`/canned-responses/${created.body.id}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'canned_response_not_found');
      const types = (await world.server.ctx.audit.list({ companyId: world.acmeId }))
        .map((e) => e.type)
        .filter((t) => t.startsWith('canned_response.'));
      assert.deepEqual(types.sort(), [
        'canned_response.created',
        'canned_response.created',
        'canned_response.deleted',
        'canned_response.updated',
      ]);
    });

    it('refuses a taken shortcut, a malformed one, and never shows another company’s', async () => {
      const { acme, globex } = world;
      const first = await acme.post('/canned-responses', {
        shortcut: 'ship',
        title: 'Shipping',
        content: 'Two days.',
      });
      const twice = await acme.post('/canned-responses', {
        shortcut: 'ship',
        title: 'Again',
        content: 'No.',
      });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.code, 'shortcut_taken');
      // Concurrent creations of one shortcut: exactly one wins, the other is the same 409.
      const race = await Promise.all(
        [1, 2, 3].map((i) =>
          acme.post('/canned-responses', { shortcut: 'race', title: `R${i}`, content: 'r' }),
        ),
      );
      assert.deepEqual(race.map((r) => r.status).sort(), [201, 409, 409]);
      const bad = await acme.post('/canned-responses', { shortcut: 'Not OK!', title: 't', content: 'c' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'validation_failed');

      // Globex may use the same shortcut, sees none of Acme's, and cannot touch them.
      assert.equal(
        (await globex.post('/canned-responses', { shortcut: 'ship', title: 'G', content: 'g' })).status,
        201,
      );
      const theirs = await globex.get('/canned-responses');
      assert.deepEqual(
        theirs.body.items.map((r: { title: string }) => r.title),
        ['G'],
      );
      const foreign = await globex.put(`/canned-responses/${first.body.id}`, {
        shortcut: 'ship',
        title: 'x',
        content: 'x',
      });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'canned_response_not_found');
    });
  });
}
