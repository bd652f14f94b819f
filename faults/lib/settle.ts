import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultCluster } from './cluster.ts';
import { computeFigures, type Figures, readStoredMessages, type StoredMessage } from './figures.ts';
import type { Visitor } from './visitor.ts';

/** Every stored message of the run's company, oldest first per conversation (figures.ts). */
export type StoredReader = () => Promise<StoredMessage[]>;

const readerOf =
  (cluster: FaultCluster): StoredReader =>
  () =>
    readStoredMessages(cluster.pg, cluster.seeded.companyId);

const figuresNow = async (read: StoredReader, visitors: Visitor[]) =>
  computeFigures(
    await read(),
    visitors.map((v) => v.record()),
  );

/**
 * Once the traffic stopped: waits (at most `timeoutMs`) until the database holds nothing partial, every user
 * message has its reply and no client shows partial what is complete; then returns the figures as they are.
 */
export function settle(cluster: FaultCluster, visitors: Visitor[], timeoutMs: number): Promise<Figures> {
  return settleFrom(readerOf(cluster), visitors, timeoutMs);
}

/** `settle`, reading the stored messages with `read` (a system other than the PostgreSQL cluster). */
export async function settleFrom(
  read: StoredReader,
  visitors: Visitor[],
  timeoutMs: number,
): Promise<Figures> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const figures = await figuresNow(read, visitors);
    if (Date.now() >= deadline) return figures;
    if (figures.partial === 0 && figures.unanswered === 0) {
      // Settled in the database: give envelopes already on their way a moment to reach the clients.
      await sleep(1_000);
      return figuresNow(read, visitors);
    }
    await sleep(500);
  }
}

/**
 * Writes what the figures were computed from (every stored message, every visitor's sends and final view) to
 * `records.json` in the run's artifacts folder, so a surprising figure can be traced to the messages behind it.
 */
export function saveRecords(cluster: FaultCluster, visitors: Visitor[]): Promise<string> {
  return saveRecordsFrom(readerOf(cluster), cluster.artifacts, visitors);
}

/** `saveRecords`, reading the stored messages with `read`. */
export async function saveRecordsFrom(
  read: StoredReader,
  artifacts: string,
  visitors: Visitor[],
): Promise<string> {
  const file = join(artifacts, 'records.json');
  const stored = await read();
  writeFileSync(file, JSON.stringify({ stored, visitors: visitors.map((v) => v.record()) }, null, 1));
  return file;
}
