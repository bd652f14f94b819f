import type { Page } from './page.ts';

/** Who writes a digital employee's replies (docs/config.md "Digital employees"). */
export type ResponderKind = 'builtin' | 'webhook' | 'openai';

/** One answer of a builtin digital employee's Q&A list. */
export interface BuiltinAnswerView {
  question: string;
  keywords: string[];
  answer: string;
  quick_replies?: Array<{ id: string; label: string }>;
}

/**
 * A digital employee's settings: `greeting` for every responder; `answers`, `fallback` and `word_delay_ms` for
 * builtin; `timeout_ms` and `history_limit` for webhook and openai; `handover_tool` for openai.
 */
export interface DigitalEmployeeSettingsView {
  greeting?: string | null;
  answers?: BuiltinAnswerView[];
  fallback?: string;
  word_delay_ms?: number;
  timeout_ms?: number;
  history_limit?: number;
  handover_tool?: boolean;
}

/** A digital employee as the portal API answers it; it holds no secret (connectors keep their keys). */
export interface DigitalEmployeeView {
  id: string;
  company_id: string;
  name: string;
  responder: ResponderKind;
  connector_id: string | null;
  model: string | null;
  system_prompt: string | null;
  settings: DigitalEmployeeSettingsView;
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

/** How visitors rate a digital employee: thumbs on its messages, CSAT of its conversations. */
export interface DigitalEmployeeStatsView {
  digital_employee_id: string;
  thumbs_up: number;
  thumbs_down: number;
  /** `thumbs_up / (thumbs_up + thumbs_down)`, 0–1; `null` before the first thumb. */
  thumbs_up_share: number | null;
  csat_count: number;
  /** Mean CSAT score (1–5); `null` before the first rating. */
  csat_average: number | null;
}

/** A connector a digital employee may use (the form's choices). */
export interface ConnectorOptionView {
  id: string;
  name: string;
  type: string;
}

/** A row of `GET /portal/api/digital-employees`: the employee and how visitors rate it. */
export interface DigitalEmployeeListItem extends DigitalEmployeeView {
  stats: DigitalEmployeeStatsView;
}

/** `GET /portal/api/digital-employees`: a page of employees, the connectors and responders the form offers. */
export interface DigitalEmployeeListing extends Page<DigitalEmployeeListItem> {
  connectors: ConnectorOptionView[];
  responders: readonly ResponderKind[];
}
