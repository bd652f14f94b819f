import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal privacy (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      ({ server, acmeId, acme, globex, agent } = await startPortalWorld(database));
    });
    after(() => server.close());

    it('shows retention off by default, saves it per company, refuses bad values, and audits the change', async () => {
      assert.deepEqual((await acme.get('/company/retention')).body, {
        resolved_conversation_days: null,
        delivered_webhook_days: null,
        audit_days: null,
      });
      const settings = { resolved_conversation_days: 90, delivered_webhook_days: 30, audit_days: null };
      const saved = await acme.put('/company/retention', settings);
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual(saved.body, settings);
      assert.deepEqual((await globex.get('/company/retention')).body.resolved_conversation_days, null);
      const bad = await acme.put('/company/retention', { ...settings, audit_days: 0 });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'validation_failed');
      const events = await server.ctx.audit.list({ companyId: acmeId, type: 'company.retention_changed' });
      assert.equal(events.length, 1);
    });

    it('erases a conversation of the admin’s company only; agents are refused', async () => {
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(acmeId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId: acmeId, sessionId: randomUUID() },
        employee.id,
      );
      assert.equal((await agent.post('/privacy/erasures', { conversation_id: conversation.id })).status, 403);
      const foreign = await globex.post('/privacy/erasures', { conversation_id: conversation.id });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'conversation_not_found');
      const res = await acme.post('/privacy/erasures', { conversation_id: conversation.id });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.erased.conversations, 1);
      assert.equal(await server.ctx.webchat.conversations.find(conversation.id), undefined);
      const [event] = await server.ctx.audit.list({ companyId: acmeId, type: 'visitor.erased' });
      assert.match(String(event?.actor), /^user:/);
    });

    it('exports a conversation of the admin’s company as the JSON document; agents and other companies are refused', async () => {
      const canary = `canary-${randomUUID()}`;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(acmeId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId: acmeId, sessionId: randomUUID() },
        employee.id,
      );
      await server.ctx.webchat.store.insert({
        conversationId: conversation.id,
        role: 'user',
        author: null,
        status: 'complete',
        blocks: [{ id: randomUUID(), type: 'markdown', content: `my order ${canary}` }],
      });
      assert.equal((await agent.post('/privacy/exports', { conversation_id: conversation.id })).status, 403);
      const foreign = await globex.post('/privacy/exports', { conversation_id: conversation.id });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'conversation_not_found');
      const none = await acme.post('/privacy/exports', {});
      assert.equal(none.status, 400);
      const res = await acme.post('/privacy/exports', { conversation_id: conversation.id });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.match(String(res.headers.get('content-disposition')), /^attachment;/);
      assert.equal(res.body.conversations.length, 1);
      assert.equal(res.body.conversations[0].id, conversation.id);
      assert.ok(JSON.stringify(res.body.conversations[0].messages).includes(canary));
    });
  });
}
