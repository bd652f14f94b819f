/** Tables of routing (migration 060; webchat/routing/). Timestamps are ISO-8601 UTC text (storage/columns.ts). */

export type Availability = 'available' | 'away';

/** Whether a portal user takes conversations now; a user without a row is `away`. */
export interface AgentAvailabilityTable {
  user_id: string;
  company_id: string;
  availability: string;
  /** When routing last gave this agent a conversation: round-robin picks the least recent (never first). */
  last_assigned_at: string | null;
  updated_at: string;
}

/** A company's routing settings; a company without a row has the defaults (routing-settings.ts). */
export interface CompanyRoutingTable {
  company_id: string;
  agent_capacity: number;
  /** JSON BusinessHours (business-hours.ts), or null: always open. */
  business_hours: string | null;
  updated_at: string;
}

export interface RoutingTables {
  agent_availability: AgentAvailabilityTable;
  company_routing: CompanyRoutingTable;
}

// These tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../../storage/schema.ts' {
  interface Database extends RoutingTables {}
}
