/**
 * Business hours: when a company's agents answer (docs/routing.md "Business hours"). A schedule names an IANA time
 * zone, the opening intervals of each weekday in that zone's wall-clock time, and holidays (local dates, closed all
 * day). Everything here is pure: `openingAt(schedule, instant)` says whether agents are in and, if not, when they
 * are next, whatever daylight-saving transitions lie between.
 */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One opening interval of a day, wall-clock `HH:MM` in the schedule's zone; `to` may be `24:00`. */
export interface OpeningInterval {
  from: string;
  to: string;
}

export interface BusinessHours {
  time_zone: string;
  weekly: Partial<Record<Weekday, OpeningInterval[]>>;
  /** Local dates (`YYYY-MM-DD`) on which nobody answers. */
  holidays: string[];
}

export interface Opening {
  open: boolean;
  /** When closed: the next instant agents are in; null when open, or when the schedule never opens. */
  nextOpenAt: Date | null;
}

/** How far ahead the next opening is looked for: a year of holidays in a row is the most a schedule can say. */
const SEARCH_DAYS = 400;
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** `null` schedule: no business hours configured, agents are always considered in. */
export function openingAt(schedule: BusinessHours | null, at: Date): Opening {
  if (!schedule) return { open: true, nextOpenAt: null };
  const local = wallClockOf(schedule.time_zone, at);
  const holidays = new Set(schedule.holidays);
  if (!holidays.has(local.date) && intervalsOf(schedule, local.weekday).some((i) => within(i, local.minutes)))
    return { open: true, nextOpenAt: null };
  return { open: false, nextOpenAt: nextOpening(schedule, holidays, at, local.date) };
}

function nextOpening(schedule: BusinessHours, holidays: Set<string>, at: Date, today: string): Date | null {
  const start = Date.parse(`${today}T00:00:00Z`);
  for (let day = 0; day < SEARCH_DAYS; day++) {
    const dayStart = new Date(start + day * DAY_MS);
    const date = dayStart.toISOString().slice(0, 10);
    if (holidays.has(date)) continue;
    for (const interval of intervalsOf(schedule, WEEKDAYS[dayStart.getUTCDay()]!)) {
      const opensAt = instantOf(schedule.time_zone, date, minutesOf(interval.from));
      // A start that daylight saving skipped maps past the gap, which may already be later than the interval's end.
      if (
        opensAt.getTime() > at.getTime() &&
        opensAt < instantOf(schedule.time_zone, date, minutesOf(interval.to))
      )
        return opensAt;
    }
  }
  return null;
}

const intervalsOf = (schedule: BusinessHours, weekday: Weekday): OpeningInterval[] =>
  [...(schedule.weekly[weekday] ?? [])].sort((a, b) => minutesOf(a.from) - minutesOf(b.from));

const within = (interval: OpeningInterval, minutes: number): boolean =>
  minutes >= minutesOf(interval.from) && minutes < minutesOf(interval.to);

export const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

interface WallClock {
  date: string;
  weekday: Weekday;
  /** Minutes since local midnight. */
  minutes: number;
  /** The wall-clock reading as if it were UTC, in ms (for offsets). */
  asUtcMs: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `timeZone` is an IANA zone this runtime knows. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

function wallClockOf(timeZone: string, at: Date): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(at))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const asUtcMs = Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day!,
    parts.hour!,
    parts.minute!,
    parts.second!,
  );
  const midnight = new Date(Date.UTC(parts.year!, parts.month! - 1, parts.day!));
  return {
    date: midnight.toISOString().slice(0, 10),
    weekday: WEEKDAYS[midnight.getUTCDay()]!,
    minutes: parts.hour! * 60 + parts.minute!,
    asUtcMs,
  };
}

const offsetMs = (timeZone: string, instantMs: number): number =>
  wallClockOf(timeZone, new Date(instantMs)).asUtcMs - Math.floor(instantMs / 1000) * 1000;

/**
 * The instant a local wall-clock time names. Where daylight saving repeats an hour the earlier instant is taken;
 * where it skips one the time moves forward by the gap (02:30 on a spring-forward night in Berlin is 03:30 CEST),
 * as RFC 5545 §3.3.5 and Temporal's "compatible" disambiguation do.
 */
export function instantOf(timeZone: string, date: string, minutes: number): Date {
  const wall = Date.parse(`${date}T00:00:00Z`) + minutes * MINUTE_MS;
  const before = wall - offsetMs(timeZone, wall - DAY_MS / 2);
  const after = wall - offsetMs(timeZone, wall + DAY_MS / 2);
  const fits = (t: number) => wallClockOf(timeZone, new Date(t)).asUtcMs === wall;
  if (fits(Math.min(before, after))) return new Date(Math.min(before, after));
  if (fits(Math.max(before, after))) return new Date(Math.max(before, after));
  // Skipped by a transition: the earlier offset read forward lands after the gap.
  return new Date(Math.max(before, after));
}
