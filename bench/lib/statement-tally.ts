/**
 * Counts the statements a server runs while a bench measures it, by kind (the SQL's first words), with the time each
 * kind held its connection (from send to answer): where the round trips and pool holds of a burst go.
 * `--statements` on bench/webchat/streaming.bench.ts.
 */
import type { FinishedQuery } from '@parley/server/internal/storage/database';

interface Kind {
  count: number;
  totalMs: number;
}

export class StatementTally {
  private readonly kinds = new Map<string, Kind>();
  private counting = false;

  /** Wraps `observe` (the server's query hook) so every statement also passes here while counting. */
  wrap(observe: (query: FinishedQuery) => void): (query: FinishedQuery) => void {
    return (query) => {
      if (this.counting) this.add(query);
      observe(query);
    };
  }

  start(): void {
    this.counting = true;
  }

  stop(): void {
    this.counting = false;
  }

  /** The kinds, most frequent first, per visitor message (`perUnit`, e.g. 1,000 messages). */
  summary(perUnit: number, top = 20): string {
    const rows = [...this.kinds.entries()].sort((a, b) => b[1].count - a[1].count);
    const total = rows.reduce((n, [, k]) => n + k.count, 0);
    const lines = rows
      .slice(0, top)
      .map(
        ([sql, k]) =>
          `${String(k.count).padStart(7)} ${(k.count / perUnit).toFixed(2).padStart(6)}/msg ${(k.totalMs / k.count).toFixed(1).padStart(6)} ms  ${sql}`,
      );
    return [
      `${total} statements (${(total / perUnit).toFixed(1)} per message); count, per message, mean hold, kind:`,
    ]
      .concat(lines)
      .join('\n');
  }

  private add(query: FinishedQuery): void {
    const key = query.sql.replace(/\s+/g, ' ').replace(/\$\d+/g, '?').slice(0, 110);
    const kind = this.kinds.get(key) ?? { count: 0, totalMs: 0 };
    kind.count++;
    kind.totalMs += query.endedAt - query.startedAt;
    this.kinds.set(key, kind);
  }
}
