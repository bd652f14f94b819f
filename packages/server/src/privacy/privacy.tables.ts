import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';

/** A company's retention periods in days (migration 130); `null` = keep for ever (off). */
export interface PrivacySettingsTable {
  company_id: string;
  resolved_conversation_days: number | null;
  delivered_webhook_days: number | null;
  audit_days: number | null;
  updated_at: string;
}

/** The receipt of an erasure: ids, counts, who and when — never what was erased. */
export interface PrivacyErasuresTable {
  id: string;
  company_id: string;
  /** `visitor_sub`, `conversation_id` or `session_id`: which selector was used (not its value). */
  selector: string;
  actor: string;
  /** JSON array of the erased conversations' ids. */
  conversation_ids: string;
  /** JSON object of counts by kind. */
  erased: string;
  erased_at: string;
}

export interface PrivacyTables {
  privacy_settings: PrivacySettingsTable;
  privacy_erasures: PrivacyErasuresTable;
}

/**
 * The database as privacy/ sees it. Its tables are declared here rather than in storage/schema.ts: the base tier
 * must not import a tier above it (docs/layers.json), and only this folder reads them.
 */
export interface PrivacyDatabase extends Database, PrivacyTables {}

export const privacyDb = (db: Kysely<Database>): Kysely<PrivacyDatabase> =>
  db as unknown as Kysely<PrivacyDatabase>;

// These tables join the one database type (storage/schema.ts) from here too, so every Kysely<Database> sees them.
declare module '../storage/schema.ts' {
  interface Database extends PrivacyTables {}
}
