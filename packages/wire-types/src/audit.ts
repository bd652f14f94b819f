/** One audit event as Settings → Audit log shows it: identifiers and versions only, never a secret. */
export interface AuditEntryView {
  id: string;
  type: string;
  actor: string | null;
  /** The actor as a reader knows them (a portal user's email), else `actor`. */
  actor_label: string | null;
  subject: string | null;
  ip: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

/** `/portal/api/audit`: newest first; `next_before` pages back. */
export interface AuditPage {
  items: AuditEntryView[];
  next_before: string | null;
  limit: number;
}
