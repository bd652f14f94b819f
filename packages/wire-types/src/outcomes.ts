/**
 * One digital employee's outcomes over a period: `GET /portal/api/digital-employees/{id}/outcomes` and the platform
 * route answer this; each figure's query is in docs/outcomes.md.
 */
export interface DigitalEmployeeOutcomes {
  digital_employee_id: string;
  days: number;
  since: string;
  conversations: number;
  replies: number;
  answered_from_knowledge: number;
  handed_over: number;
  resolved_without_person: number;
  thumbs_up: number;
  thumbs_down: number;
  csat_count: number;
  csat_average: number | null;
}
