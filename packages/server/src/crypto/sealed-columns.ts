import { type Kysely, sql } from 'kysely';
import { SealError, type Sealer } from './sealing.ts';

/**
 * A database column that holds `Sealer` envelopes. Every capability that stores sealed values exports its columns,
 * and the composition root (context.ts `sealedColumns`) lists them all, so `parley master-key rotate` re-wraps all
 * of them under the newest master key and `master-key status` can tell when an old master version is no longer used
 * anywhere (and may be dropped).
 */
export interface SealedColumn {
  table: string;
  /** Column holding the envelope; null values are skipped. */
  column: string;
  /** Single-column primary key, used to page through the table and to update one row. */
  key: string;
  /** Further columns the associated data is built from (the key and the sealed column are always read). */
  context?: string[];
  /** The associated data the value was sealed with, rebuilt from the row (must match what the owner passes to seal). */
  associatedData(row: Record<string, unknown>): string;
}

export const sealedColumnName = (c: Pick<SealedColumn, 'table' | 'column'>): string =>
  `${c.table}.${c.column}`;

export interface ColumnRewrapReport {
  column: string;
  /** Values found (non-null). */
  total: number;
  rewrapped: number;
  alreadyCurrent: number;
  /** Rows whose value changed between our read and our write (a live server sealed a new one); left as written. */
  changedConcurrently: number;
  /** Keys of rows whose value could not be opened (tampered, or its master version is not configured). */
  unreadable: string[];
}

const PAGE = 500;

/**
 * Re-wraps every sealed value of `columns` whose master version is not the sealer's newest. Only the data key is
 * re-wrapped (`Sealer.rewrap`); values are never decrypted into the report. Each row is updated with a conditional
 * write (`where value = what we read`), so a value a live server replaced meanwhile is never overwritten with an
 * older one: the server keeps working during the run.
 */
export async function rewrapSealedColumns(
  // biome-ignore lint/suspicious/noExplicitAny: tables are named at run time by the registry.
  db: Kysely<any>,
  sealer: Sealer,
  columns: readonly SealedColumn[],
): Promise<ColumnRewrapReport[]> {
  const reports: ColumnRewrapReport[] = [];
  for (const column of columns) {
    const report: ColumnRewrapReport = {
      column: sealedColumnName(column),
      total: 0,
      rewrapped: 0,
      alreadyCurrent: 0,
      changedConcurrently: 0,
      unreadable: [],
    };
    for await (const row of pageThrough(db, column)) {
      report.total++;
      const envelope = row[column.column] as string;
      const key = String(row[column.key]);
      let next: string;
      try {
        if (sealer.versionOf(envelope) === sealer.currentVersion) {
          report.alreadyCurrent++;
          continue;
        }
        next = sealer.rewrap(envelope, column.associatedData(row));
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        report.unreadable.push(key);
        continue;
      }
      const result = await db
        .updateTable(column.table)
        .set({ [column.column]: next })
        .where(column.key, '=', row[column.key])
        .where(column.column, '=', envelope)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) report.rewrapped++;
      else report.changedConcurrently++;
    }
    reports.push(report);
  }
  return reports;
}

export interface ColumnVersionCount {
  column: string;
  /** Master version → number of values wrapped with it; `malformed` counts values that are not envelopes. */
  byVersion: Record<string, number>;
}

/** How many values of each listed column are wrapped with each master version. */
export async function countSealedByMasterVersion(
  // biome-ignore lint/suspicious/noExplicitAny: see rewrapSealedColumns.
  db: Kysely<any>,
  sealer: Sealer,
  columns: readonly SealedColumn[],
): Promise<ColumnVersionCount[]> {
  const counts: ColumnVersionCount[] = [];
  for (const column of columns) {
    const byVersion: Record<string, number> = {};
    for await (const row of pageThrough(db, column)) {
      let version: string;
      try {
        version = String(sealer.versionOf(row[column.column] as string));
      } catch {
        version = 'malformed';
      }
      byVersion[version] = (byVersion[version] ?? 0) + 1;
    }
    counts.push({ column: sealedColumnName(column), byVersion });
  }
  return counts;
}

async function* pageThrough(
  // biome-ignore lint/suspicious/noExplicitAny: see rewrapSealedColumns.
  db: Kysely<any>,
  column: SealedColumn,
): AsyncGenerator<Record<string, unknown>> {
  const selected = [...new Set([column.key, column.column, ...(column.context ?? [])])];
  let after: unknown;
  for (;;) {
    let query = db.selectFrom(column.table).select(selected).where(column.column, 'is not', null);
    if (after !== undefined) query = query.where(column.key, '>', after);
    const rows = (await query.orderBy(column.key).limit(PAGE).execute()) as Record<string, unknown>[];
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]![column.key];
  }
}

/**
 * Safety net for columns nobody registered: every text column of the current database/schema that holds values
 * looking like envelopes (`pse1.<version>.…`), other than the registered ones. `master-key rotate` cannot re-wrap
 * them (it does not know their associated data), so `status` lists them and `retire` counts them as in use — an old
 * master version is never dropped while anything still needs it.
 */
export async function findUnregisteredSealedValues(
  // biome-ignore lint/suspicious/noExplicitAny: see rewrapSealedColumns.
  db: Kysely<any>,
  dialect: 'sqlite' | 'postgres',
  sealer: Sealer,
  listed: readonly SealedColumn[],
): Promise<ColumnVersionCount[]> {
  const registered = new Set(listed.map(sealedColumnName));
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  const tables = (await db.introspection.getTables()).filter((t) => !schema || t.schema === schema);
  const found: ColumnVersionCount[] = [];
  for (const table of tables) {
    for (const column of table.columns) {
      const name = `${table.name}.${column.name}`;
      if (registered.has(name) || !/^(text|varchar|character varying)$/i.test(column.dataType)) continue;
      const rows = (await db
        .selectFrom(table.name)
        .select(column.name)
        .where(column.name, 'like', 'pse1.%')
        .execute()) as Record<string, unknown>[];
      if (rows.length === 0) continue;
      const byVersion: Record<string, number> = {};
      for (const row of rows) {
        let version: string;
        try {
          version = String(sealer.versionOf(String(row[column.name])));
        } catch {
          continue;
        }
        byVersion[version] = (byVersion[version] ?? 0) + 1;
      }
      if (Object.keys(byVersion).length > 0) found.push({ column: name, byVersion });
    }
  }
  return found;
}
