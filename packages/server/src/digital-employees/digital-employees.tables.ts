export interface DigitalEmployeesTable {
  id: string;
  company_id: string;
  name: string;
  /** `builtin | webhook | openai`: which responder answers for this digital employee. */
  responder: string;
  /** The connector (same company, matching type) a webhook/openai responder calls; null for builtin. */
  connector_id: string | null;
  /** Model name for the openai responder; null otherwise. */
  model: string | null;
  system_prompt: string | null;
  /** JSON object, see DigitalEmployeeSettings. */
  settings: string;
  /** 0/1; a partial unique index keeps exactly one default per company. */
  is_default: number;
  created_at: string;
  updated_at: string;
}

export interface DigitalEmployeesTables {
  digital_employees: DigitalEmployeesTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends DigitalEmployeesTables {}
}
