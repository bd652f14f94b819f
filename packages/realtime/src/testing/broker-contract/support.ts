/**
 * Shared by the broker contract suites (`*.test-suite.ts` in this folder): the backend factory each test file
 * provides, nodes that record every event they receive, and the waits the suites use. Every `Broker` +
 * `PresenceManager` pair (see `packages/realtime/src/broker/types.ts`) must pass every suite; the rules are those of
 * docs/protocol.md "History, recovery and positioning" and "Redis broker layout" (streams, offsets, epochs,
 * one PUB/SUB path).
 */
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import type {
  Broker,
  BrokerEventHandler,
  ClientInfo,
  HistoryRetention,
  PresenceManager,
  Publication,
} from '../../broker/types.ts';
import { waitFor } from '../harness.ts';

export interface BrokerNode {
  broker: Broker;
  presence: PresenceManager;
}

/** One backend for the contract suites: `run…Contract(factory)` runs an area against it. */
export interface BrokerFactory {
  /** Names the backend in test names ("memory", "redis"). */
  name: string;
  /**
   * Builds `count` nodes sharing one fresh, empty backend (for Redis: one new key prefix, one connection set
   * per node). The suite calls `run` on each broker itself and closes every node when the test ends.
   */
  createNodes(count: number): Promise<BrokerNode[]>;
  /** True when events reach the handlers before `publish` (or publishJoin/Leave/Control) resolves. */
  synchronousDelivery: boolean;
}

type BrokerEvent =
  | { kind: 'pub'; channel: string; publication: Publication; epoch: string | undefined }
  | { kind: 'join' | 'leave'; channel: string; info: ClientInfo }
  | { kind: 'control'; message: string };

/** Records every event a node receives, so tests can wait for and inspect them. */
export class Recorder implements BrokerEventHandler {
  readonly events: BrokerEvent[] = [];

  onPublication(channel: string, publication: Publication, epoch: string | undefined): void {
    this.events.push({ kind: 'pub', channel, publication, epoch });
  }

  onJoin(channel: string, info: ClientInfo): void {
    this.events.push({ kind: 'join', channel, info });
  }

  onLeave(channel: string, info: ClientInfo): void {
    this.events.push({ kind: 'leave', channel, info });
  }

  onControl(message: string): void {
    this.events.push({ kind: 'control', message });
  }

  publications(channel: string): Publication[] {
    return this.events.flatMap((e) => (e.kind === 'pub' && e.channel === channel ? [e.publication] : []));
  }

  controls(): string[] {
    return this.events.flatMap((e) => (e.kind === 'control' ? [e.message] : []));
  }
}

export interface RunningNode extends BrokerNode {
  events: Recorder;
}

export const LONG: HistoryRetention = { size: 100, ttlMs: 60_000, metaTtlMs: 600_000 };

export function channelName(label: string): string {
  return `test:${label}.${randomUUID().slice(0, 8)}`;
}

export function info(user: string, client: string = randomUUID()): ClientInfo {
  return { user, client };
}

export const offsetsOf = (publications: Publication[]) => publications.map((p) => p.offset);

/**
 * Starts `count` nodes on one fresh backend, each recording its events; they are closed when the test ends.
 */
export async function startNodes(t: TestContext, factory: BrokerFactory, count = 1): Promise<RunningNode[]> {
  const nodes = await factory.createNodes(count);
  t.after(async () => {
    for (const node of nodes) {
      await node.broker.close();
      await node.presence.close();
    }
  });
  const running: RunningNode[] = [];
  for (const node of nodes) {
    const events = new Recorder();
    await node.broker.run(events);
    running.push({ ...node, events });
  }
  return running;
}

/**
 * Waits until everything `sender` published before this call has been delivered to `receivers`: control
 * messages travel the same ordered path as publications (one command stream out, one subscriber stream in).
 */
export async function waitForBarrier(sender: RunningNode, receivers: RunningNode[]): Promise<void> {
  const token = `barrier:${randomUUID()}`;
  await sender.broker.publishControl(token);
  await Promise.all(
    receivers.map((node) => waitFor('barrier control message', () => node.events.controls().includes(token))),
  );
}

export async function publishMany(node: RunningNode, channel: string, count: number, retention = LONG) {
  const positions = [];
  for (let i = 1; i <= count; i++) {
    positions.push(
      await node.broker.publish({ channel, data: JSON.stringify({ n: i }), history: retention }),
    );
  }
  return positions;
}
