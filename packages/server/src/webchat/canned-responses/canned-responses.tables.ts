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
