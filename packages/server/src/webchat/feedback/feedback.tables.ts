/** The visitors' ratings (migration 023): one per rated message, one per rated conversation. */

export interface MessageFeedbackTable {
  message_id: string;
  conversation_id: string;
  company_id: string;
  /** `up | down`. */
  rating: string;
  comment: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConversationCsatTable {
  conversation_id: string;
  company_id: string;
  /** 1–5. */
  score: number;
  comment: string | null;
  created_at: string;
  updated_at: string;
}

export interface FeedbackTables {
  message_feedback: MessageFeedbackTable;
  conversation_csat: ConversationCsatTable;
}

// These tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../../storage/schema.ts' {
  interface Database extends FeedbackTables {}
}
