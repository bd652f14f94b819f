import type { BusinessHoursStatus } from '@parley/webchat-protocol';

type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** `/portal/api/company/routing` (docs/routing.md): agent capacity, business hours, and whether agents are in now. */
export interface RoutingSettingsView {
  agent_capacity: number;
  business_hours: {
    time_zone: string;
    /** Wall-clock `HH:MM` intervals per weekday in `time_zone`; `to` may be `24:00`. */
    weekly: Partial<Record<Weekday, Array<{ from: string; to: string }>>>;
    /** Local dates (`YYYY-MM-DD`) on which nobody answers. */
    holidays: string[];
  } | null;
  opening: BusinessHoursStatus;
}

/** An agent of `/portal/api/inbox/agents`: availability and load. */
export interface AgentView {
  id: string;
  name: string;
  email: string;
  role: string;
  availability: 'available' | 'away';
  open_conversations: number;
  last_assigned_at: string | null;
}

/** `GET /portal/api/inbox/agents`: the company's agents and admins (routing, and whom a note can mention). */
export interface AgentList {
  agents: AgentView[];
}

/** `GET /portal/api/canned-responses`: the company's saved replies (`?q=` filters them). */
export interface CannedResponseList {
  items: CannedResponseView[];
}

/** A saved reply agents insert with `/shortcut` (docs/routing.md "Canned responses"). */
export interface CannedResponseView {
  id: string;
  shortcut: string;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}
