import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { BrokerError } from '@parley/realtime';
import { waitFor } from '@parley/testing/wait';
import { createLogger } from '../../logging/logger.ts';
import type { MessageEnvelope, MessageSnapshot } from '../messages/message.ts';
import { type Broadcaster, PendingAnnouncements } from './broadcaster.ts';

/** A broker the test switches off and on; `poison` names messages it refuses for a reason other than an outage. */
class SwitchedBroadcaster implements Broadcaster {
  available = true;
  readonly poison = new Set<string>();
  readonly published: Array<{ id: string; sequence: number }> = [];

  async publish(_channel: string, envelope: MessageEnvelope): Promise<void> {
    if (!this.available) throw new BrokerError('broker_unavailable', 'redis: not connected (reconnecting)');
    if (this.poison.has(envelope.message_snapshot.id)) throw new TypeError('not serializable');
    this.published.push({ id: envelope.message_snapshot.id, sequence: envelope.sequence });
  }
}

const logger = createLogger('silent');
const companyId = randomUUID();
const conversationId = randomUUID();

function complete(id = randomUUID()): MessageSnapshot {
  const now = new Date().toISOString();
  return {
    id,
    conversation_id: conversationId,
    role: 'digital_employee',
    author: null,
    status: 'complete',
    blocks: [{ id: randomUUID(), type: 'markdown', content: 'done' }],
    client_message_id: null,
    created_at: now,
    updated_at: now,
  } as MessageSnapshot;
}

describe('pending announcements', () => {
  it('keeps what the broker cannot take and announces it in order, once, when told the broker is back', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger);
    try {
      broker.available = false;
      const [a, b, c] = [complete(), complete(), complete()];
      await pending.announce(companyId, a, 3);
      await pending.announce(companyId, b, 2);
      await pending.announce(companyId, c, 5);
      await pending.announce(companyId, a, 4); // a later sequence of a replaces the kept one, in its place
      assert.equal(pending.size, 3);
      assert.deepEqual(broker.published, []);

      broker.available = true;
      await pending.announceAgain();
      assert.deepEqual(broker.published, [
        { id: a.id, sequence: 4 },
        { id: b.id, sequence: 2 },
        { id: c.id, sequence: 5 },
      ]);
      assert.equal(pending.size, 0);
      await pending.announceAgain();
      assert.equal(broker.published.length, 3, 'nothing twice');
    } finally {
      pending.close();
    }
  });

  it('forgets a kept sequence once a later one of the same message got through, and never keeps an older one', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger);
    try {
      const [a, b] = [complete(), complete()];
      broker.available = false;
      await pending.announce(companyId, a, 3);
      await pending.announce(companyId, b, 5);
      await pending.announce(companyId, b, 4); // older than the one kept: ignored
      broker.available = true;
      await pending.announce(companyId, a, 7);
      assert.equal(pending.size, 1, 'only b is still waiting');
      await pending.announceAgain();
      assert.deepEqual(broker.published, [
        { id: a.id, sequence: 7 },
        { id: b.id, sequence: 5 },
      ]);
    } finally {
      pending.close();
    }
  });

  it('keeps everything, in order, while the broker is still away', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger);
    try {
      broker.available = false;
      const kept = [complete(), complete()];
      for (const snapshot of kept) await pending.announce(companyId, snapshot, 1);
      await pending.announceAgain();
      assert.equal(pending.size, 2);
      broker.available = true;
      await pending.announceAgain();
      assert.deepEqual(
        broker.published.map((p) => p.id),
        kept.map((s) => s.id),
      );
    } finally {
      pending.close();
    }
  });

  it('tries again by itself while the broker stays silent about its return', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger);
    try {
      broker.available = false;
      const snapshot = complete();
      await pending.announce(companyId, snapshot, 1);
      broker.available = true;
      await waitFor('the periodic retry', () => broker.published.length === 1, 5_000);
      assert.equal(pending.size, 0);
    } finally {
      pending.close();
    }
  });

  it('drops a message that fails for another reason than an outage, so it holds up nothing', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger);
    try {
      const [bad, good] = [complete(), complete()];
      broker.available = false;
      await pending.announce(companyId, bad, 1);
      await pending.announce(companyId, good, 1);
      broker.poison.add(bad.id);
      broker.available = true;
      await pending.announceAgain();
      assert.deepEqual(
        broker.published.map((p) => p.id),
        [good.id],
      );
      assert.equal(pending.size, 0);
    } finally {
      pending.close();
    }
  });

  it('keeps at most its bound of messages, giving up the oldest first; a caller that must know still hears of the outage', async () => {
    const broker = new SwitchedBroadcaster();
    const pending = new PendingAnnouncements(broker, logger, { messages: 2, bytes: 1024 * 1024 });
    try {
      broker.available = false;
      const [first, second, third] = [complete(), complete(), complete()];
      await pending.announce(companyId, first, 1);
      await pending.announce(companyId, second, 1);
      await assert.rejects(
        pending.announce(companyId, third, 1, { rethrow: true }),
        (err: unknown) => err instanceof BrokerError,
      );
      assert.equal(pending.size, 2);
      broker.available = true;
      await pending.announceAgain();
      assert.deepEqual(
        broker.published.map((p) => p.id),
        [second.id, third.id],
      );
    } finally {
      pending.close();
    }
  });

  it('keeps at most its bound of bytes, giving up the oldest first', async () => {
    const broker = new SwitchedBroadcaster();
    const size = Buffer.byteLength(JSON.stringify(complete()));
    const pending = new PendingAnnouncements(broker, logger, { messages: 100, bytes: size * 2 + size / 2 });
    try {
      broker.available = false;
      const kept = [complete(), complete(), complete()];
      for (const snapshot of kept) await pending.announce(companyId, snapshot, 1);
      // The same message kept again is counted once.
      await pending.announce(companyId, kept[2]!, 2);
      assert.equal(pending.size, 2);
      broker.available = true;
      await pending.announceAgain();
      assert.deepEqual(
        broker.published.map((p) => p.id),
        [kept[1]!.id, kept[2]!.id],
      );
    } finally {
      pending.close();
    }
  });
});
