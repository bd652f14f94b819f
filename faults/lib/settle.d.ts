import type { FaultCluster } from './cluster.ts';
import { type Figures } from './figures.ts';
import type { Visitor } from './visitor.ts';
/**
 * Once the traffic stopped: waits (at most `timeoutMs`) until the database holds nothing partial, every user
 * message has its reply and no client shows partial what is complete; then returns the figures as they are.
 */
export declare function settle(cluster: FaultCluster, visitors: Visitor[], timeoutMs: number): Promise<Figures>;
/**
 * Writes what the figures were computed from (every stored message, every visitor's sends and final view) to
 * `records.json` in the run's artifacts folder, so a surprising figure can be traced to the messages behind it.
 */
export declare function saveRecords(cluster: FaultCluster, visitors: Visitor[]): Promise<string>;
