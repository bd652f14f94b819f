import type { AuditTables } from '../audit/audit.tables.ts';
import type { CompaniesTables } from '../companies/companies.tables.ts';
import type { DigitalEmployeesTables } from '../digital-employees/digital-employees.tables.ts';
import type { IdempotencyTables } from '../idempotency/idempotency.tables.ts';
import type { IntegrationsTables } from '../integrations/connectors.tables.ts';
import type { JobsTables } from '../jobs/jobs.tables.ts';
import type { KnowledgeTables } from '../knowledge/knowledge.tables.ts';
import type { OAuthTables } from '../oauth/oauth.tables.ts';
import type { UsersTables } from '../users/users.tables.ts';
import type { WebchatTables } from '../webchat/webchat.tables.ts';
import type { WebhooksTables } from '../webhooks/webhooks.tables.ts';

/**
 * The whole database as Kysely sees it: each capability declares its own tables next to its code and is listed
 * here. Migrations in ./migrations create them for SQLite and PostgreSQL alike.
 */
export interface Database
  extends CompaniesTables,
    AuditTables,
    OAuthTables,
    DigitalEmployeesTables,
    WebchatTables,
    UsersTables,
    IntegrationsTables,
    WebhooksTables,
    IdempotencyTables,
    JobsTables,
    KnowledgeTables {}
