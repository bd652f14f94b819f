import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString, UsageError } from '../cli-kit/command.ts';
import type { Config } from '../config/schema.ts';
import { addMasterKeyVersion, loadMasterKeys, writeMasterKeyFile } from '../crypto/master-keys.ts';
import type { ColumnRewrapReport, ColumnVersionCount, SealedColumn } from '../crypto/sealed-columns.ts';
import { Sealer } from '../crypto/sealing.ts';
import { AppError } from '../errors/app-error.ts';
import type { Store } from '../storage/database.ts';

/**
 * Master-key rotation without downtime (procedure in docs/config.md "Rotating the master key"):
 * 1. a new master version becomes known to every node (file-based keys: this command appends it to the data-folder
 *    file, which live servers re-read; config-based keys: the operator adds it to PARLEY_MASTER_KEYS and restarts
 *    the nodes one by one — old versions stay configured, so everything keeps opening);
 * 2. this command re-wraps every registered sealed value under the newest version (crypto/sealed-columns.ts);
 * 3. once `master-key status` shows an old version unused, it can be dropped (`master-key retire`, or removed from
 *    PARLEY_MASTER_KEYS).
 */

/** What these commands use: the store, the sealer and the sealed columns together (picked by packages/server/src/cli/commands.ts). */
export interface MasterKeyCommandDeps {
  config: Pick<Config, 'masterKeys' | 'masterKeyPrimary' | 'dataDir'>;
  store: Pick<Store, 'db' | 'dialect'>;
  sealer: Sealer;
  /** Every column holding sealed values, as each capability declares them. */
  sealedColumns: readonly SealedColumn[];
  audit: Pick<AuditLog, 'record'>;
}

const sourceOf = (ctx: MasterKeyCommandDeps): 'config' | 'file' =>
  ctx.config.masterKeys ? 'config' : 'file';

interface RotateResult {
  master_key_version: number;
  source: 'config' | 'file';
  /** True when this run added the version (file-based keys). */
  added_version: boolean;
  columns: Array<{
    column: string;
    total: number;
    rewrapped: number;
    already_current: number;
    changed_concurrently: number;
    unreadable: string[];
  }>;
  /** Sealed values in columns nobody registered: not re-wrapped, and they keep their versions in use. */
  unregistered: Array<{ column: string; by_version: Record<string, number> }>;
  /** Master versions still used by some value after the run (only the newest when all went well). */
  versions_in_use: number[];
}

/** Passes over the tables: a value a live server replaced during one pass is looked at again in the next. */
const REWRAP_PASSES = 3;

const rotate: Command<RotateResult, MasterKeyCommandDeps> = {
  name: 'master-key rotate',
  summary:
    'add a master key version (file-based keys) and re-wrap every stored secret under the newest version',
  options: {},
  async run(_options, ctx) {
    const source = sourceOf(ctx);
    if (source === 'file' && ctx.config.masterKeyPrimary !== undefined) {
      throw new AppError(
        409,
        'master_key_primary_pinned',
        'PARLEY_MASTER_KEY_PRIMARY pins sealing to one version; unset it to rotate file-based keys.',
      );
    }
    const sealer = source === 'file' ? new Sealer(addMasterKeyVersion(ctx.config.dataDir)) : ctx.sealer;
    let reports: ColumnRewrapReport[] = [];
    // Loaded when the command runs, not when `parley` starts: `--help` and the other commands need none of it.
    const { rewrapSealedColumns } = await import('../crypto/sealed-columns.ts');
    for (let pass = 0; pass < REWRAP_PASSES; pass++) {
      const run = await rewrapSealedColumns(ctx.store.db, sealer, ctx.sealedColumns);
      reports = pass === 0 ? run : mergeReports(reports, run);
      if (run.every((r) => r.changedConcurrently === 0)) break;
    }
    const { unregistered, versionsInUse } = await usageOf(ctx, sealer);
    await ctx.audit.record({
      type: 'master_key.rotated',
      actor: 'cli',
      details: {
        master_key_version: sealer.currentVersion,
        source,
        rewrapped: reports.reduce((n, r) => n + r.rewrapped, 0),
        unreadable: reports.reduce((n, r) => n + r.unreadable.length, 0),
      },
    });
    return {
      master_key_version: sealer.currentVersion,
      source,
      added_version: source === 'file',
      columns: reports.map((r) => ({
        column: r.column,
        total: r.total,
        rewrapped: r.rewrapped,
        already_current: r.alreadyCurrent,
        changed_concurrently: r.changedConcurrently,
        unreadable: r.unreadable,
      })),
      unregistered: unregistered.map(view),
      versions_in_use: versionsInUse,
    };
  },
  format: (r) =>
    [
      `master key version ${r.master_key_version} (${r.source === 'file' ? 'added to the data-folder key file' : 'newest in PARLEY_MASTER_KEYS'})`,
      ...r.columns.map(
        (c) =>
          `  ${c.column}: ${c.rewrapped} re-wrapped, ${c.already_current} already current${c.unreadable.length ? `, ${c.unreadable.length} UNREADABLE (${c.unreadable.join(', ')})` : ''}`,
      ),
      ...r.unregistered.map(
        (c) => `  ${c.column}: NOT REGISTERED, not re-wrapped (${versionsText(c.by_version)})`,
      ),
      `versions still in use: ${r.versions_in_use.join(', ') || 'none'}`,
      ...(r.source === 'config' && r.columns.every((c) => c.rewrapped === 0)
        ? ['(nothing to re-wrap: to rotate, add a new version to PARLEY_MASTER_KEYS on every node first)']
        : []),
    ].join('\n'),
};

function mergeReports(a: ColumnRewrapReport[], b: ColumnRewrapReport[]): ColumnRewrapReport[] {
  return a.map((r, i) => ({
    ...r,
    rewrapped: r.rewrapped + b[i]!.rewrapped,
    // Concurrent changes are only what the last pass still saw; earlier ones were looked at again.
    changedConcurrently: b[i]!.changedConcurrently,
    unreadable: b[i]!.unreadable,
  }));
}

const view = (c: ColumnVersionCount) => ({ column: c.column, by_version: c.byVersion });

const versionsText = (byVersion: Record<string, number>): string =>
  Object.entries(byVersion)
    .map(([v, n]) => `v${v}: ${n}`)
    .join(', ') || 'no values';

/** Which master versions the stored secrets use: registered columns, plus any envelope found elsewhere. */
async function usageOf(
  ctx: MasterKeyCommandDeps,
  sealer: Sealer,
): Promise<{
  registered: ColumnVersionCount[];
  unregistered: ColumnVersionCount[];
  versionsInUse: number[];
}> {
  const { countSealedByMasterVersion, findUnregisteredSealedValues } = await import(
    '../crypto/sealed-columns.ts'
  );
  const registered = await countSealedByMasterVersion(ctx.store.db, sealer, ctx.sealedColumns);
  const unregistered = await findUnregisteredSealedValues(
    ctx.store.db,
    ctx.store.dialect,
    sealer,
    ctx.sealedColumns,
  );
  const versions = new Set<number>();
  for (const c of [...registered, ...unregistered]) {
    for (const v of Object.keys(c.byVersion)) if (/^\d+$/.test(v)) versions.add(Number(v));
  }
  return { registered, unregistered, versionsInUse: [...versions].sort((x, y) => y - x) };
}

interface StatusResult {
  master_key_version: number;
  configured_versions: number[];
  source: 'config' | 'file';
  columns: Array<{ column: string; by_version: Record<string, number> }>;
  unregistered: Array<{ column: string; by_version: Record<string, number> }>;
  versions_in_use: number[];
}

const status: Command<StatusResult, MasterKeyCommandDeps> = {
  name: 'master-key status',
  summary: 'show which master key versions the stored secrets are wrapped with',
  options: {},
  async run(_options, ctx) {
    const sealer = currentSealer(ctx);
    const usage = await usageOf(ctx, sealer);
    return {
      master_key_version: sealer.currentVersion,
      configured_versions: sealer.versions,
      source: sourceOf(ctx),
      columns: usage.registered.map(view),
      unregistered: usage.unregistered.map(view),
      versions_in_use: usage.versionsInUse,
    };
  },
  format: (r) =>
    [
      `newest master key version: ${r.master_key_version} (configured: ${r.configured_versions.join(', ')}; ${r.source})`,
      ...r.columns.map((c) => `  ${c.column}: ${versionsText(c.by_version)}`),
      ...r.unregistered.map((c) => `  ${c.column} (NOT REGISTERED): ${versionsText(c.by_version)}`),
      `versions in use: ${r.versions_in_use.join(', ') || 'none'}`,
    ].join('\n'),
};

const retire: Command<
  { version: number; removed: boolean; source: 'config' | 'file' },
  MasterKeyCommandDeps
> = {
  name: 'master-key retire',
  summary:
    'drop an old master key version once no stored secret uses it (file-based keys; checks only for config)',
  options: { version: { description: 'the master key version to drop', required: true } },
  async run(options, ctx) {
    const text = requireString(options, 'version');
    if (!/^\d+$/.test(text)) throw new UsageError('--version must be a positive integer');
    const version = Number(text);
    const sealer = currentSealer(ctx);
    if (!sealer.versions.includes(version))
      throw new AppError(404, 'master_key_not_found', `Master key version ${version} is not configured.`);
    if (version === sealer.currentVersion) {
      throw new AppError(
        409,
        'master_key_current',
        `Version ${version} is the newest master key; rotate first.`,
      );
    }
    const usage = await usageOf(ctx, sealer);
    if (usage.versionsInUse.includes(version)) {
      const where = [...usage.registered, ...usage.unregistered]
        .filter((c) => c.byVersion[version])
        .map((c) => c.column);
      throw new AppError(
        409,
        'master_key_in_use',
        `Stored secrets still use master key version ${version} (${where.join(', ')}); run \`master-key rotate\` first` +
          (usage.unregistered.some((c) => c.byVersion[version])
            ? ' and register the columns marked NOT REGISTERED.'
            : '.'),
        { columns: where },
      );
    }
    const source = sourceOf(ctx);
    if (source === 'file') {
      const keys = loadMasterKeys(undefined, ctx.config.dataDir).keys.filter((k) => k.version !== version);
      writeMasterKeyFile(ctx.config.dataDir, keys);
      await ctx.audit.record({
        type: 'master_key.retired',
        actor: 'cli',
        details: { master_key_version: version },
      });
    }
    return { version, removed: source === 'file', source };
  },
  format: (r) =>
    r.removed
      ? `master key version ${r.version} removed from the data-folder key file`
      : `master key version ${r.version} is unused: remove it from PARLEY_MASTER_KEYS on every node`,
};

/** The key list as it is now (the file may have changed since this process started). */
function currentSealer(ctx: MasterKeyCommandDeps): Sealer {
  return sourceOf(ctx) === 'file'
    ? new Sealer(loadMasterKeys(undefined, ctx.config.dataDir).keys)
    : ctx.sealer;
}

export const masterKeyCommands = [rotate, status, retire];
