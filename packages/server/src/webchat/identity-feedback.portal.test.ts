import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { newIdentifiedVisitor, signVisitorToken } from '@parley/testing/webchat/identity-fixtures';
import { createConversation, listMessages, sdkGet } from '@parley/testing/webchat/webchat-fixtures';

for (const database of TEST_DATABASES) {
  describe(`portal: visitor identity, ratings and unread counts (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    let channelId: string;
    let secret: string;
    before(async () => {
      ({ server, acmeId, acme, globex, agent } = await startPortalWorld(database));
      const employee = (await acme.get('/channels')).body.digital_employees[0].id;
      channelId = (await acme.post('/channels', { name: 'Shop', digital_employee_id: employee })).body.id;
    });
    after(() => server.close());

    it('sets a channel’s identity mode and shows its secret once, on creation and on rotation', async () => {
      const listed = async () =>
        (await acme.get('/channels')).body.items.find((c: { id: string }) => c.id === channelId);
      assert.equal((await listed()).identity, 'off');
      assert.equal((await listed()).identity_secret_set, false);

      const on = await acme.put(`/channels/${channelId}/identity`, { mode: 'required' });
      assert.equal(on.status, 200);
      assert.equal(on.body.channel_id, channelId);
      assert.equal(on.body.identity, 'required');
      assert.match(on.body.identity_secret, /^pvi_/);
      secret = on.body.identity_secret;
      const row = await listed();
      assert.deepEqual(
        [row.identity, row.identity_secret_set, row.identity_previous_secret_until],
        ['required', true, null],
      );
      assert.ok(!JSON.stringify(row).includes(secret), 'lists never hold the secret');

      const same = await acme.put(`/channels/${channelId}/identity`, { mode: 'optional' });
      assert.deepEqual(same.body, { channel_id: channelId, identity: 'optional' });
      const rotated = await acme.put(`/channels/${channelId}/identity`, {
        mode: 'optional',
        rotate_secret: true,
      });
      assert.match(rotated.body.identity_secret, /^pvi_/);
      assert.notEqual(rotated.body.identity_secret, secret);
      assert.ok(Date.parse((await listed()).identity_previous_secret_until) > Date.now() + 23 * 3600_000);
      secret = rotated.body.identity_secret;

      const audit = await acme.get(`/audit?subject=${channelId}`);
      assert.ok(!JSON.stringify(audit.body).includes('pvi_'), 'the audit log never shows a secret');
    });

    it('refuses bad modes, other companies’ channels, agents and forged requests', async () => {
      const bad = await acme.put(`/channels/${channelId}/identity`, { mode: 'sometimes' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'validation_failed');
      const foreign = await globex.put(`/channels/${channelId}/identity`, { mode: 'off' });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'channel_not_found');
      assert.equal(
        (await acme.put(`/channels/${randomUUID()}/identity`, { mode: 'off' })).body.code,
        'channel_not_found',
      );
      assert.equal(
        (await agent.put(`/channels/${channelId}/identity`, { mode: 'off' })).body.code,
        'forbidden_role',
      );
      const forged = await acme.put(`/channels/${channelId}/identity`, { mode: 'off' }, { csrf: null });
      assert.equal(forged.body.code, 'csrf_failed');
    });

    it('shows agents the visitor’s name and email, their unread messages, ratings and CSAT', async () => {
      const token = await signVisitorToken(secret, 'crm-1001', {
        claims: { name: 'Ada Lovelace', email: 'ada@example.com' },
      });
      const v = newIdentifiedVisitor(acmeId, channelId, token);
      const conversation = await createConversation(server, v);
      const greeting = (await listMessages(server, v, conversation.id)).body.messages[0];
      const rated = await http(
        `${server.baseUrl}/sdk/v1/conversations/${conversation.id}/messages/${greeting.id}/feedback`,
        {
          method: 'PUT',
          headers: { ...v.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ rating: 'up', comment: 'Friendly' }),
        },
      );
      assert.equal(rated.status, 200);

      const list = await agent.get('/inbox/conversations?status=open');
      const item = list.body.items.find((c: { id: string }) => c.id === conversation.id);
      assert.deepEqual(item.visitor, {
        id: 'crm-1001',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        attributes: {},
      });
      assert.equal(item.unread_count, 0, 'no visitor message yet');
      assert.equal(item.csat, null);
      const detail = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.deepEqual(detail.body.messages[0].feedback, { rating: 'up', comment: 'Friendly' });

      assert.equal((await agent.post(`/inbox/conversations/${conversation.id}/close`)).status, 200);
      const csat = await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}/csat`, {
        method: 'PUT',
        headers: { ...v.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ score: 4 }),
      });
      assert.equal(csat.status, 200);
      const closed = (await agent.get('/inbox/conversations?status=closed')).body.items.find(
        (c: { id: string }) => c.id === conversation.id,
      );
      assert.deepEqual(closed.csat, { score: 4, comment: null });
      assert.equal((await sdkGet(server, v, `/conversations/${conversation.id}`)).body.status, 'closed');

      // Per digital employee: thumbs-up share and CSAT average, in the list and on their own.
      const employees = await acme.get('/digital-employees');
      const employee = employees.body.items.find((e: { is_default: boolean }) => e.is_default);
      assert.deepEqual(
        {
          up: employee.stats.thumbs_up,
          share: employee.stats.thumbs_up_share,
          count: employee.stats.csat_count,
          average: employee.stats.csat_average,
        },
        { up: 1, share: 1, count: 1, average: 4 },
      );
      const stats = await acme.get(`/digital-employees/${employee.id}/stats`);
      assert.deepEqual(stats.body, employee.stats);
      assert.equal((await globex.get(`/digital-employees/${employee.id}/stats`)).status, 404);
    });
  });
}
