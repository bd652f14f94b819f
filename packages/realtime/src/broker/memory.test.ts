import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runBrokerContract } from '../testing/broker-contract/broker.test-suite.ts';
import type { BrokerFactory } from '../testing/broker-contract/support.ts';
import { waitFor } from '../testing/harness.ts';
import { MemoryBroker, MemoryHub, MemoryPresenceManager } from './memory.ts';

const FACTORY: BrokerFactory = {
  name: 'memory',
  synchronousDelivery: true,
  async createNodes(count) {
    // One hub = one backend; several brokers on it are the nodes of an in-process cluster.
    const hub = new MemoryHub({ sweepIntervalMs: 50 });
    return Array.from({ length: count }, () => ({
      broker: new MemoryBroker({ hub }),
      presence: new MemoryPresenceManager({ hub }),
    }));
  },
};

runBrokerContract(FACTORY);

describe('memory: shared sweep timer', () => {
  it('reclaims streams nobody reads any more', async () => {
    const hub = new MemoryHub({ sweepIntervalMs: 20 });
    const broker = new MemoryBroker({ hub });
    await broker.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} });
    const retention = { size: 10, ttlMs: 50, metaTtlMs: 80 };
    for (let i = 0; i < 100; i++) await broker.publish({ channel: `c${i}`, data: '1', history: retention });
    assert.equal(hub.streams.size, 100);
    await waitFor('the sweep to reclaim every stream', () => hub.streams.size === 0, 5_000);
    await broker.close();
  });

  it('separate brokers without a shared hub are separate single-node engines', async () => {
    const a = new MemoryBroker();
    const b = new MemoryBroker();
    const seen: string[] = [];
    await a.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl: (m) => seen.push(`a:${m}`) });
    await b.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl: (m) => seen.push(`b:${m}`) });
    await a.publishControl('x');
    assert.deepEqual(seen, ['a:x']);
    const history = await b.history({ channel: 'c', limit: 0, history: { size: 1, ttlMs: 1, metaTtlMs: 0 } });
    assert.equal(history.position.offset, 0);
    await a.close();
    await b.close();
  });
});
