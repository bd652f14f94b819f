// Node A is cut off from Redis for 20 s under traffic: its Redis connections go through a TCP proxy the suite
// pauses (a blackhole: nothing crosses either way and nothing is closed, as when packets are dropped), then
// resumes. Node B and Redis stay up. Judged by what clients saw, besides the usual goals:
//   - every publish made on node A during the partition is answered (stored, or error 503 temporary) within 2 s;
//   - messages finished meanwhile reach their clients within 2 s of the partition's end: replies node A completed
//     while it could not publish them, and messages node B published that node A's subscribers could not get.
//     Delivered late, or the engine told the client to resubscribe (2500) and recovery filled the gap.
// A witness visitor talks to node A only; a sender talks to node B while a follower of the same conversation
// listens on node A.

import { setTimeout as sleep } from 'node:timers/promises';
import { PausableProxy } from '@parley/testing/pausable-proxy';
import { CentrifugeVisitor } from '../lib/centrifuge-visitor.ts';
import { onCleanup } from '../lib/cleanup.ts';
import type { ClientView } from '../lib/client-view.ts';
import { readStoredMessages, type StoredMessage } from '../lib/figures.ts';
import { Follower } from '../lib/follower.ts';
import { runScenario } from '../lib/scenario.ts';
import type { PublishAnswer } from '../lib/visitor.ts';

const PARTITION_MS = 20_000;
/** The contract (docs/operations.md "Redis outages"): answers and late deliveries within 2 s. */
const GOAL_MS = 2_000;
/** How long after the partition the scenario waits for what was finished meanwhile to be shown. */
const DELIVERY_BOUND_MS = 20_000;
/** How often the witness and the sender write during the partition. */
const CHAT_EVERY_MS = 1_500;

let proxy: PausableProxy | undefined;

/** Complete in the database, not shown complete by `view`: what the client still has to be given. */
function notShownYet(stored: StoredMessage[], conversationId: string, view: ClientView): string[] {
  return stored
    .filter((m) => m.conversationId === conversationId && m.status === 'complete')
    .filter((m) => view.messages.get(m.id)?.status !== 'complete')
    .map((m) => m.id);
}

/** Milliseconds from `t0` until each of `ids` was shown complete (null: not within the bound). */
async function deliveryDelays(view: ClientView, ids: string[], t0: number): Promise<Array<number | null>> {
  const shown = (id: string) => view.messages.get(id)?.completedAt;
  await view.holdsWithin(
    () => ids.every((id) => shown(id) !== undefined),
    t0 + DELIVERY_BOUND_MS - Date.now(),
  );
  return ids.map((id) => {
    const at = shown(id);
    return at === undefined ? null : Math.max(0, at - t0);
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Milliseconds from `t0` until `node` answers /readyz 200 again (its broker is back), or null within 10 s. */
async function readyAgain(node: { answers(path: string): Promise<boolean> }, t0: number) {
  while (Date.now() - t0 < 10_000) {
    if (await node.answers('/readyz')) return Date.now() - t0;
    await sleep(100);
  }
  return null;
}

await runScenario({
  name: 'redis-partition-20s',
  cluster: {
    async nodeRedisUrl(index, redis) {
      if (index !== 0) return redis.url;
      const nodeProxy = new PausableProxy(redis.port);
      await nodeProxy.listen();
      onCleanup('Redis proxy of node-a', () => nodeProxy.close());
      proxy = nodeProxy;
      return nodeProxy.url;
    },
  },
  async fault(ctx) {
    const { cluster } = ctx;
    const { companyId } = cluster.seeded;
    const [nodeA, nodeB] = cluster.nodes as [(typeof cluster.nodes)[0], (typeof cluster.nodes)[0]];
    if (!proxy) throw new Error('node-a has no Redis proxy');
    const witness = new CentrifugeVisitor('witness-a', nodeA.url, companyId);
    const sender = new CentrifugeVisitor('sender-b', nodeB.url, companyId);
    ctx.visitors.push(witness, sender);
    await Promise.all([witness.start(), sender.start()]);
    const follower = new Follower(
      'follower-a',
      { baseUrl: nodeA.url, companyId, sessionId: sender.sessionId },
      sender.conversationId,
    );
    await follower.start();

    // Long replies that are still streaming when the link goes away, and finish during the partition.
    void witness.send('tell me a story');
    void sender.send('tell me a story');
    const streaming = await witness.view.holdsWithin(
      (v) => [...v.messages.values()].some((m) => m.role === 'digital_employee' && m.status === 'partial'),
      15_000,
    );
    if (!streaming) throw new Error("the witness's story did not start streaming within 15 s");

    proxy.pause();
    const cutAt = Date.now();
    ctx.log(`node-a cut off from Redis (proxy paused, ${proxy.connections} connections held)`);
    let turn = 0;
    while (Date.now() + CHAT_EVERY_MS < cutAt + PARTITION_MS) {
      turn++;
      void witness.send(`during the partition ${turn}`);
      void sender.send(`during the partition ${turn}`);
      await sleep(CHAT_EVERY_MS);
    }
    await sleep(Math.max(0, cutAt + PARTITION_MS - Date.now()));

    // What was finished meanwhile and not shown yet, read while the partition still holds.
    const stored = await readStoredMessages(cluster.pg, companyId);
    const pendingA = notShownYet(stored, witness.conversationId, witness.view);
    const pendingB = notShownYet(stored, sender.conversationId, follower.view);
    proxy.resume();
    const healedAt = Date.now();
    ctx.log(
      `link back after ${seconds(healedAt - cutAt)}; ${pendingA.length + pendingB.length} finished meanwhile`,
    );

    const [delaysA, delaysB, readyMs] = await Promise.all([
      deliveryDelays(witness.view, pendingA, healedAt),
      deliveryDelays(follower.view, pendingB, healedAt),
      readyAgain(nodeA, healedAt),
    ]);
    const delays = [...delaysA, ...delaysB];
    const late = delays.filter((ms) => ms === null || ms > GOAL_MS).length;
    const worst = delays.some((ms) => ms === null)
      ? `not within ${seconds(DELIVERY_BOUND_MS)}`
      : seconds(Math.max(0, ...(delays as number[])));
    const resyncs = follower.resubscriptions.filter((r) => r.at >= cutAt);
    ctx.note(
      `finished during the partition: ${delaysA.length} on node-a (witness), ${delaysB.length} from node-b ` +
        `(follower on node-a); shown after the link came back within ${worst}; the follower was told to ` +
        `resubscribe ${resyncs.length} time(s) (${resyncs.filter((r) => r.recovered).length} recovered); ` +
        `node-a ready again after ${readyMs === null ? 'more than 10 s' : seconds(readyMs)}`,
    );
    if (late > 0)
      ctx.problem(
        `${late} message(s) finished during the partition shown later than ${seconds(GOAL_MS)}: ${worst}`,
      );

    const answers = [...witness.sends.values()]
      .flatMap((send) => send.answers ?? [])
      .filter((answer: PublishAnswer) => answer.at >= cutAt && answer.at < healedAt);
    const slow = answers.filter((answer) => answer.ms > GOAL_MS);
    const slowest = Math.max(0, ...answers.map((answer) => answer.ms));
    ctx.note(
      `publishes on node-a during the partition: ${answers.length}, answered within ${seconds(slowest)} ` +
        `(${answers.filter((answer) => answer.error).length} refused as temporary)`,
    );
    if (slow.length > 0)
      ctx.problem(`${slow.length} of ${answers.length} publishes on node-a answered after more than 2 s`);

    await ctx.measureAnswersAgain(healedAt, witness);
    follower.close();
  },
});
