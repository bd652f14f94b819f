import { runFanOutContract } from './fan-out.test-suite.ts';
import { runHistoryContract } from './history.test-suite.ts';
import { runIdempotencyContract } from './idempotency.test-suite.ts';
import { runLifecycleContract } from './lifecycle.test-suite.ts';
import { runPresenceContract } from './presence.test-suite.ts';
import { runStreamContract } from './streams.test-suite.ts';
import type { BrokerFactory } from './support.ts';

/** The whole broker contract, area by area: what every `Broker` implementation must pass. */
export function runBrokerContract(factory: BrokerFactory): void {
  runStreamContract(factory);
  runHistoryContract(factory);
  runIdempotencyContract(factory);
  runFanOutContract(factory);
  runPresenceContract(factory);
  runLifecycleContract(factory);
}
