import type { Kysely } from 'kysely';
import { BadRequestError } from '../../errors/app-error.ts';
import { now } from '../../storage/columns.ts';
import type { Database } from '../../storage/schema.ts';
import { type BusinessHours, isKnownTimeZone, minutesOf, WEEKDAYS } from './business-hours.ts';

/** How many open conversations an agent holds at most before round-robin passes them by (docs/routing.md). */
const DEFAULT_AGENT_CAPACITY = 3;

export interface RoutingSettings {
  agentCapacity: number;
  /** null: no schedule, agents are always considered in. */
  businessHours: BusinessHours | null;
}

/** A company's routing settings (table `company_routing`; a company without a row has the defaults). */
export class RoutingSettingsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(companyId: string): Promise<RoutingSettings> {
    const row = await this.db
      .selectFrom('company_routing')
      .selectAll()
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    return {
      agentCapacity: row?.agent_capacity ?? DEFAULT_AGENT_CAPACITY,
      businessHours: row?.business_hours ? (JSON.parse(row.business_hours) as BusinessHours) : null,
    };
  }

  /** Replaces what `patch` names (`businessHours: null` removes the schedule); answers the settings as they are. */
  async update(companyId: string, patch: Partial<RoutingSettings>): Promise<RoutingSettings> {
    if (patch.businessHours) checkBusinessHours(patch.businessHours);
    const next = { ...(await this.get(companyId)), ...patch };
    const row = {
      agent_capacity: next.agentCapacity,
      business_hours: next.businessHours ? JSON.stringify(normalized(next.businessHours)) : null,
      updated_at: now(),
    };
    await this.db
      .insertInto('company_routing')
      .values({ company_id: companyId, ...row })
      .onConflict((oc) => oc.column('company_id').doUpdateSet(row))
      .execute();
    return this.get(companyId);
  }
}

/** Holidays once each, in date order; weekdays without intervals left out. */
function normalized(hours: BusinessHours): BusinessHours {
  const weekly: BusinessHours['weekly'] = {};
  for (const day of WEEKDAYS) if (hours.weekly[day]?.length) weekly[day] = hours.weekly[day];
  return { time_zone: hours.time_zone, weekly, holidays: [...new Set(hours.holidays)].sort() };
}

/**
 * What the JSON schema cannot say: the zone exists, each interval ends after it starts (an overnight shift is two
 * intervals, one on each day) and holidays are real dates. 400 `invalid_business_hours` naming the field.
 */
export function checkBusinessHours(hours: BusinessHours): void {
  const errors: Array<{ field: string; message: string }> = [];
  if (!isKnownTimeZone(hours.time_zone))
    errors.push({ field: 'business_hours.time_zone', message: 'is not an IANA time zone' });
  for (const day of WEEKDAYS) {
    (hours.weekly[day] ?? []).forEach((interval, i) => {
      if (minutesOf(interval.from) >= minutesOf(interval.to))
        errors.push({ field: `business_hours.weekly.${day}[${i}]`, message: 'must end after it starts' });
    });
  }
  hours.holidays.forEach((date, i) => {
    if (
      Number.isNaN(Date.parse(`${date}T00:00:00Z`)) ||
      new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date
    )
      errors.push({ field: `business_hours.holidays[${i}]`, message: 'is not a date (YYYY-MM-DD)' });
  });
  if (errors.length > 0)
    throw new BadRequestError('invalid_business_hours', 'The business hours are not valid.', { errors });
}
