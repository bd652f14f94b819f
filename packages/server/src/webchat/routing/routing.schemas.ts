import type { BusinessHoursStatus } from '@parley/webchat-protocol';
import type { AgentView, RoutingSettingsView } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import { openingAt } from './business-hours.ts';
import type { AgentState } from './routing.service.ts';
import type { RoutingSettings } from './routing-settings.ts';

const HHMM = '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';
const Interval = Type.Object(
  { from: Type.String({ pattern: HHMM }), to: Type.String({ pattern: HHMM }) },
  { additionalProperties: false },
);
const Day = Type.Optional(Type.Array(Interval, { maxItems: 12 }));

/** A business-hours schedule (business-hours.ts); semantic checks in routing-settings.ts `checkBusinessHours`. */
export const BusinessHoursSchema = Type.Object(
  {
    time_zone: Type.String({ minLength: 1, maxLength: 64 }),
    weekly: Type.Object(
      { mon: Day, tue: Day, wed: Day, thu: Day, fri: Day, sat: Day, sun: Day },
      { additionalProperties: false },
    ),
    holidays: Type.Array(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }), { maxItems: 400 }),
  },
  { additionalProperties: false },
);

export const RoutingSettingsBody = Type.Object(
  {
    agent_capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    business_hours: Type.Optional(Type.Union([BusinessHoursSchema, Type.Null()])),
  },
  { additionalProperties: false },
);

export const AssignBody = Type.Optional(
  Type.Object(
    { user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
    { additionalProperties: false },
  ),
);

export const AvailabilityBody = Type.Object(
  { availability: Type.Union([Type.Literal('available'), Type.Literal('away')]) },
  { additionalProperties: false },
);

/** Whether agents are in now, and when they are next (null: in now, or no schedule that ever opens). */
export function openingView(settings: RoutingSettings, at = new Date()): BusinessHoursStatus {
  const { open, nextOpenAt } = openingAt(settings.businessHours, at);
  return {
    open,
    next_open_at: nextOpenAt?.toISOString() ?? null,
    time_zone: settings.businessHours?.time_zone ?? null,
  };
}

export function routingSettingsView(settings: RoutingSettings): RoutingSettingsView {
  return {
    agent_capacity: settings.agentCapacity,
    business_hours: settings.businessHours,
    opening: openingView(settings),
  };
}

export const agentView = (a: AgentState): AgentView => ({
  id: a.userId,
  name: a.name,
  email: a.email,
  role: a.role,
  availability: a.availability,
  open_conversations: a.load,
  last_assigned_at: a.lastAssignedAt,
});
