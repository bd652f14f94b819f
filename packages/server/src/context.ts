import type { Logger } from 'pino';
import { AuditLog } from './audit/audit.service.ts';
import { CompaniesService } from './companies/companies.service.ts';
import type { Config } from './config/schema.ts';
import { loadMasterKeys, watchMasterKeyFile, withPrimary } from './crypto/master-keys.ts';
import { Sealer } from './crypto/sealing.ts';
import { createDigitalEmployees } from './digital-employees/digital-employees.module.ts';
import type { DigitalEmployeesService } from './digital-employees/digital-employees.service.ts';
import type { ConnectorsService } from './integrations/connectors.service.ts';
import { createIntegrations } from './integrations/integrations.module.ts';
import type { OutboundClient } from './integrations/outbound.ts';
import { openStore, type Store } from './storage/database.ts';
import { migrateToLatest } from './storage/migrate.ts';

/**
 * What every capability is built from: the config, the store and the few shared services. Built once per process
 * (server or CLI command) by `createContext`; tests build one per test server.
 */
export interface AppContext {
  config: Config;
  store: Store;
  logger: Logger;
  sealer: Sealer;
  audit: AuditLog;
  companies: CompaniesService;
  digitalEmployees: DigitalEmployeesService;
  /** Integration connectors and their write-only keys (src/integrations/). */
  connectors: ConnectorsService;
  /** The one outbound client for calls to connectors (reads the current key at call time). */
  connectorCaller: OutboundClient;
  /** Closed in reverse order of registration when the process shuts down. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface ContextOptions {
  /** PostgreSQL schema (tests isolate themselves with one). */
  schema?: string;
}

export async function createContext(
  config: Config,
  logger: Logger,
  options: ContextOptions = {},
): Promise<AppContext> {
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: options.schema,
  });
  const closers: Array<() => Promise<void> | void> = [() => store.close()];
  const closeAll = async () => {
    for (const fn of closers.reverse().splice(0)) {
      try {
        await fn();
      } catch (err) {
        logger.error({ err }, 'error while closing');
      }
    }
  };
  try {
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied, store: store.describe }, 'database migrated');

    const masterKeys = loadMasterKeys(config.masterKeys, config.dataDir);
    if (masterKeys.generated) {
      logger.warn(
        { file: masterKeys.source },
        'generated a master key in the data folder; set PARLEY_MASTER_KEYS (see docs/config.md) for production',
      );
    }
    const companies = new CompaniesService(store.db);
    // File-based keys are re-read when `master-key rotate` changes the file, so a live server follows a rotation.
    const primary = config.masterKeyPrimary;
    const sealer = new Sealer(
      withPrimary(masterKeys.keys, primary),
      masterKeys.source === 'config'
        ? undefined
        : watchMasterKeyFile(config.dataDir, {
            primary,
            onInvalid: (err) =>
              logger.warn(
                { err, file: masterKeys.source },
                'the changed master key file cannot be used; keeping the previous master keys',
              ),
          }),
    );
    const audit = new AuditLog(store.db);
    const integrations = createIntegrations({ config, store, sealer, audit, logger });
    closers.push(() => integrations.close());
    return {
      config,
      store,
      logger,
      sealer,
      audit,
      companies,
      connectors: integrations.connectors,
      connectorCaller: integrations.outbound,
      digitalEmployees: createDigitalEmployees(store, companies, integrations.connectors),
      onClose: (fn) => closers.push(fn),
      close: closeAll,
    };
  } catch (err) {
    // Whatever was opened before the failure (store, outbound sockets) is closed; the cause is what is thrown.
    await closeAll();
    throw err;
  }
}
