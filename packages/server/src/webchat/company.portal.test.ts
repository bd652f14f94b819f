import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal company settings (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let globexId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    before(async () => {
      ({ server, acmeId, globexId, acme, globex } = await startPortalWorld(database));
    });
    after(() => server.close());

    it('shows the signed-in admin’s own company id (the X-Company value) and nothing of others', async () => {
      const a = await acme.get('/company');
      assert.deepEqual(
        { id: a.body.id, name: a.body.name, allowed_origins: a.body.allowed_origins },
        { id: acmeId, name: 'Acme', allowed_origins: [] },
      );
      assert.equal((await globex.get('/company')).body.id, globexId);
    });

    it('saves normalised allowed origins, only for the admin’s company, and audits the change', async () => {
      const saved = await acme.put('/company/allowed-origins', {
        allowed_origins: ['https://Shop.Example', ' http://localhost:3000 ', 'https://shop.example'],
      });
      assert.equal(saved.status, 200);
      assert.deepEqual(saved.body.allowed_origins, ['https://shop.example', 'http://localhost:3000']);
      assert.deepEqual((await server.ctx.companies.get(acmeId)).allowedOrigins, [
        'https://shop.example',
        'http://localhost:3000',
      ]);
      assert.deepEqual((await server.ctx.companies.get(globexId)).allowedOrigins, []);
      const events = await server.ctx.audit.list({
        companyId: acmeId,
        type: 'company.allowed_origins_changed',
      });
      assert.equal(events.length, 1);
    });

    it('shows and saves the attachment limits, refuses unknown types, and audits the change', async () => {
      const shown = await acme.get('/company');
      assert.deepEqual(shown.body.attachments, {
        max_attachment_bytes: 10 * 1024 * 1024,
        allowed_types: [
          'image/png',
          'image/jpeg',
          'image/gif',
          'image/webp',
          'application/pdf',
          'text/plain',
        ],
      });
      const saved = await acme.put('/company/attachments', {
        max_attachment_bytes: 2048,
        allowed_types: ['image/png', 'image/svg+xml'],
      });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual(saved.body.attachments, {
        max_attachment_bytes: 2048,
        allowed_types: ['image/png', 'image/svg+xml'],
      });
      assert.equal(
        (await server.ctx.webchat.attachments.settingsFor(globexId)).maxAttachmentBytes,
        10 * 1024 * 1024,
      );
      for (const body of [
        { max_attachment_bytes: 2048, allowed_types: ['text/html'] },
        { max_attachment_bytes: 0, allowed_types: [] },
        { max_attachment_bytes: 2048 },
      ]) {
        const refused = await acme.put('/company/attachments', body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.code, 'validation_failed');
      }
      const events = await server.ctx.audit.list({
        companyId: acmeId,
        type: 'company.attachment_settings_changed',
      });
      assert.equal(events.length, 1);
    });

    it('refuses an origin with a path', async () => {
      const res = await acme.put('/company/allowed-origins', {
        allowed_origins: ['https://shop.example/path'],
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'invalid_origin');
    });
  });
}
