import type { CompaniesService } from '../companies/companies.service.ts';
import type { Store } from '../storage/database.ts';
import type { ConnectorDirectory } from './connector-ports.ts';
import { DigitalEmployeesService } from './digital-employees.service.ts';

/**
 * Builds the digital-employees service and hooks it into company creation, so every company gets its default
 * builtin digital employee in the same transaction that creates it.
 */
export function createDigitalEmployees(
  store: Store,
  companies: CompaniesService,
  connectors: ConnectorDirectory,
): DigitalEmployeesService {
  const service = new DigitalEmployeesService(store.db, store.dialect, connectors, companies.cache);
  companies.addCreatedHook(service.createDefaultFor);
  return service;
}
