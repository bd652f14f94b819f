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

/** An action of a digital employee (migration 111; digital-employees/actions/). */
export interface DigitalEmployeeActionsTable {
  id: string;
  company_id: string;
  digital_employee_id: string;
  /** `^[a-z0-9_]{1,64}$`, unique per employee: the tool's name. */
  name: string;
  description: string;
  /** JSON Schema (an object schema) of the arguments, as JSON text. */
  parameters: string;
  /** An `http` connector of the same company. */
  connector_id: string;
  /** `GET | POST`. */
  method: string;
  /** Appended to the connector's URL; `{param}` placeholders are filled from the arguments. */
  path: string;
  /** What the visitor sees while it runs; null: "Working on it…". */
  status_text: string | null;
  created_at: string;
}

export interface DigitalEmployeesTables {
  digital_employees: DigitalEmployeesTable;
  digital_employee_actions: DigitalEmployeeActionsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends DigitalEmployeesTables {}
}
