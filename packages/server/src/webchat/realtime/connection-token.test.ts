import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import { newCentrifugeClient } from '@parley/testing/webchat/webchat-fixtures';

/**
 * A connection token signed with the realtime secret but naming a company that does not exist (one signed by hand)
 * is no valid token: the connection closes with 3500, as for any invalid token (docs/design.md "Tokens naming a
 * company"), and nothing is done for that company.
 */
for (const database of TEST_DATABASES) {
  describe(`realtime connection tokens (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    const outcomeOf = (token: string) => {
      const client = newCentrifugeClient(server, token);
      const outcome = new Promise<number | 'connected'>((resolve) => {
        client.on('connected', () => resolve('connected'));
        client.on('disconnected', (ctx) => resolve(ctx.code));
      });
      client.connect();
      return waitForSettled(outcome, 10_000, 'the connect outcome').finally(() => client.disconnect());
    };

    it('closes with 3500 for a company that does not exist, and connects for one that does', async () => {
      const signer = server.ctx.webchat.signer;
      const unknown = signer.connectionToken(randomUUID(), { company_id: randomUUID(), channel_id: null });
      assert.equal(await outcomeOf(unknown), 3500);
      const company = await server.ctx.companies.create('Real Co');
      const real = signer.connectionToken(randomUUID(), { company_id: company.id, channel_id: null });
      assert.equal(await outcomeOf(real), 'connected');
    });
  });
}
