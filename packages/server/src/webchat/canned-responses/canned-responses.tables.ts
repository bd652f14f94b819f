/** A company's saved reply (migration 061); `shortcut` is unique within the company. */
export interface CannedResponsesTable {
  id: string;
  company_id: string;
  shortcut: string;
  title: string;
  /** Markdown, inserted into the reply box as written. */
  content: string;
  created_at: string;
  updated_at: string;
}

export interface CannedResponsesTables {
  canned_responses: CannedResponsesTable;
}

// These tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../../storage/schema.ts' {
  interface Database extends CannedResponsesTables {}
}
