/** `/portal/api/company/retention`: retention periods in days; `null` keeps for ever (docs/privacy.md "Retention"). */
export interface RetentionSettingsView {
  resolved_conversation_days: number | null;
  delivered_webhook_days: number | null;
  audit_days: number | null;
}

/** `POST /portal/api/privacy/erasures`: the receipt kept of an erasure, counts by kind of what it removed. */
export interface ErasureReceiptView {
  id: string;
  erased_at: string;
  erased: {
    conversations: number;
    messages: number;
    attachments: number;
    attachment_blobs: number;
    webhook_deliveries: number;
    webhook_events: number;
    read_marks: number;
    feedback: number;
    csat: number;
    idempotency_keys: number;
    realtime_histories: number;
  };
}
