import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { collect, messageOf } from '@parley/testing/digital-employees/test-messages';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { createResponder } from './create-responder.ts';
import { ResponderError } from './responder-errors.ts';

// docs/design.md: a config switch blocks loopback and private destinations. Both responders go through the outbound
// client (the openai package gets its fetch), so neither can be pointed at the server's own network.
for (const database of TEST_DATABASES) {
  describe(`responders under the private-destination block (${database})`, () => {
    let server: TestServer;
    let bot: TestBot;
    before(async () => {
      server = await startTestServer({ database, config: { integrations: { outboundBlockPrivate: true } } });
      bot = await TestBot.start();
    });
    after(async () => {
      await bot.close();
      await server.close();
    });

    for (const type of ['webhook', 'openai'] as const) {
      it(`refuses ${type} calls to 127.0.0.1 before any request is sent`, async () => {
        const { companyId, employee } = await createCompanyWithConnector(
          server,
          type,
          `${bot.url}/v1`,
          'key-blocked',
          {
            ...(type === 'openai' ? { model: 'm' } : {}),
          },
        );
        const conversationId = randomUUID();
        const err = await collect(
          createResponder(employee, { connectors: server.ctx.connectorCaller }).respond({
            companyId,
            conversationId,
            digitalEmployee: employee,
            message: messageOf(conversationId, 'user', 'hello'),
            history: [],
            signal: new AbortController().signal,
          }),
        ).then(
          () => assert.fail('expected a refusal'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof ResponderError);
        assert.equal(err.code, 'responder_misconfigured');
        assert.match(err.message, /connector_destination_blocked/);
        assert.equal(bot.requests.length, 0);
      });
    }
  });
}
