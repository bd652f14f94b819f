import type { Kysely } from 'kysely';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Database } from '../storage/schema.ts';
import type { ConnectorDirectory } from './connector-ports.ts';
import { DigitalEmployeesService } from './digital-employees.service.ts';

/**
 * Builds the digital-employees service and hooks it into company creation, so every company gets its default
 * builtin digital employee in the same transaction that creates it.
 */
export function createDigitalEmployees(
  db: Kysely<Database>,
  companies: CompaniesService,
  connectors: ConnectorDirectory,
): DigitalEmployeesService {
  const service = new DigitalEmployeesService(db, connectors);
  companies.addCreatedHook(service.createDefaultFor);
  return service;
}
