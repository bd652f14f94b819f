// Visitors chatting: each sends a message every `minIntervalMs`–`maxIntervalMs` while it has fewer than
// `maxInFlight` unacknowledged ones (a person waits when their messages hang; an outage must not turn into an
// unbounded pile of queued sends that would hide how fast the service recovers).

import { setTimeout as sleep } from 'node:timers/promises';
import type { Visitor } from './visitor.ts';

export interface TrafficOptions {
  minIntervalMs: number;
  maxIntervalMs: number;
  maxInFlight: number;
}

export class Traffic {
  private running = false;
  private loops: Promise<void>[] = [];
  sent = 0;

  constructor(
    readonly visitors: Visitor[],
    private readonly options: TrafficOptions,
  ) {}

  start(): void {
    this.running = true;
    this.loops = this.visitors.map((visitor) => this.chat(visitor));
  }

  /** Stops sending new messages and waits (bounded) until every message in flight is acknowledged or given up. */
  async stop(settleTimeoutMs: number): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    await Promise.all(this.visitors.map((v) => v.settle(settleTimeoutMs)));
  }

  private async chat(visitor: Visitor): Promise<void> {
    const { minIntervalMs, maxIntervalMs, maxInFlight } = this.options;
    // Visitors start out of step, like people do.
    await sleep(Math.random() * maxIntervalMs);
    let n = 0;
    while (this.running) {
      if (visitor.inFlightCount < maxInFlight) {
        n++;
        this.sent++;
        // Plain words: the digital employee answers them with its short fallback (see seed.ts).
        void visitor.send(`hello number ${n} from ${visitor.label}`);
      }
      await sleep(minIntervalMs + Math.random() * (maxIntervalMs - minIntervalMs));
    }
  }
}
