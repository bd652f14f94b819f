import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerError } from '../../broker/errors.ts';
import { waitFor } from '../harness.ts';
import { type BrokerFactory, channelName, startNodes, waitForBarrier } from './support.ts';

/** Lifecycle: health while running, typed errors and no delivery after close. */
export function runLifecycleContract(factory: BrokerFactory): void {
  describe(`${factory.name}: broker contract`, () => {
    describe('close', () => {
      it('is healthy while running and connected, and not after close', async (t) => {
        const [a] = await startNodes(t, factory, 1);
        assert.equal(a!.broker.healthy(), true, 'a running broker is healthy');
        await waitFor('presence manager connected', () => a!.presence.healthy());
        await a!.broker.close();
        await a!.presence.close();
        assert.equal(a!.broker.healthy(), false);
        assert.equal(a!.presence.healthy(), false);
      });

      it('rejects use after close with a typed error and stops delivery', async (t) => {
        const [a, b] = await startNodes(t, factory, 2);
        const channel = channelName('closed');
        await b!.broker.subscribe([channel]);
        await b!.broker.close();
        await b!.presence.close();
        await b!.broker.close(); // idempotent
        await assert.rejects(
          b!.broker.publish({ channel, data: '1' }),
          (e) => e instanceof BrokerError && e.code === 'broker_closed',
        );
        await assert.rejects(
          b!.presence.presence(channel),
          (e) => e instanceof BrokerError && e.code === 'broker_closed',
        );
        await a!.broker.publish({ channel, data: '1' });
        await waitForBarrier(a!, [a!]);
        assert.equal(b!.events.publications(channel).length, 0);
      });
    });
  });
}
