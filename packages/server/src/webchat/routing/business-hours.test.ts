import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BusinessHours, instantOf, openingAt } from './business-hours.ts';

const berlin: BusinessHours = {
  time_zone: 'Europe/Berlin',
  weekly: {
    mon: [{ from: '09:00', to: '17:00' }],
    tue: [
      { from: '09:00', to: '12:00' },
      { from: '13:00', to: '17:00' },
    ],
    sun: [{ from: '02:30', to: '04:00' }],
  },
  holidays: ['2026-12-28'],
};
const at = (iso: string) => new Date(iso);

describe('business hours: open at an instant, next opening', () => {
  it('is always open without a schedule', () => {
    assert.deepEqual(openingAt(null, new Date()), { open: true, nextOpenAt: null });
  });

  it('reads the wall clock of the zone, not UTC (09:00 CET is 08:00Z in winter, 07:00Z in summer)', () => {
    assert.equal(openingAt(berlin, at('2026-01-05T07:59:00Z')).open, false); // Monday 08:59 CET
    assert.equal(openingAt(berlin, at('2026-01-05T08:00:00Z')).open, true);
    assert.equal(openingAt(berlin, at('2026-07-06T07:00:00Z')).open, true); // Monday 09:00 CEST
    assert.equal(openingAt(berlin, at('2026-07-06T14:59:59Z')).open, true);
    assert.equal(openingAt(berlin, at('2026-07-06T15:00:00Z')).open, false); // 17:00 CEST: closed (end excluded)
  });

  it('names the next opening across a lunch break, the weekend and a holiday', () => {
    assert.deepEqual(openingAt(berlin, at('2026-01-06T11:30:00Z')), {
      open: false,
      nextOpenAt: at('2026-01-06T12:00:00Z'), // Tuesday 13:00 CET
    });
    // Tuesday evening → the Sunday night slot.
    assert.deepEqual(openingAt(berlin, at('2026-01-06T17:00:00Z')).nextOpenAt, at('2026-01-11T01:30:00Z'));
    // Monday 28 December is a holiday: the Sunday night before opens, Monday stays shut, Tuesday opens.
    assert.equal(openingAt(berlin, at('2026-12-28T10:00:00Z')).open, false);
    assert.deepEqual(openingAt(berlin, at('2026-12-28T10:00:00Z')).nextOpenAt, at('2026-12-29T08:00:00Z'));
  });

  it('moves an opening that daylight saving skips past the gap (spring forward)', () => {
    // Sunday 29 March 2026: 02:00 CET jumps to 03:00 CEST, so "02:30" is 03:30 CEST = 01:30Z.
    assert.deepEqual(instantOf('Europe/Berlin', '2026-03-29', 150), at('2026-03-29T01:30:00Z'));
    assert.deepEqual(openingAt(berlin, at('2026-03-28T20:00:00Z')).nextOpenAt, at('2026-03-29T01:30:00Z'));
    assert.equal(openingAt(berlin, at('2026-03-29T01:45:00Z')).open, true); // 03:45 CEST
    assert.equal(openingAt(berlin, at('2026-03-29T02:00:00Z')).open, false); // 04:00 CEST
  });

  it('takes the first of a repeated hour (fall back) and stays open through both', () => {
    // Sunday 25 October 2026: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice, first at 00:30Z.
    assert.deepEqual(instantOf('Europe/Berlin', '2026-10-25', 150), at('2026-10-25T00:30:00Z'));
    assert.deepEqual(openingAt(berlin, at('2026-10-24T20:00:00Z')).nextOpenAt, at('2026-10-25T00:30:00Z'));
    assert.equal(openingAt(berlin, at('2026-10-25T00:45:00Z')).open, true); // 02:45 CEST, the first pass
    assert.equal(openingAt(berlin, at('2026-10-25T01:45:00Z')).open, true); // 02:45 CET, the second pass
    assert.equal(openingAt(berlin, at('2026-10-25T03:00:00Z')).open, false); // 04:00 CET
  });

  it('handles zones with half-hour offsets and the southern hemisphere', () => {
    const adelaide: BusinessHours = {
      time_zone: 'Australia/Adelaide',
      weekly: { fri: [{ from: '08:00', to: '24:00' }] },
      holidays: [],
    };
    // Friday 9 January 2026 08:00 ACDT (+10:30) = Thursday 21:30Z.
    assert.deepEqual(openingAt(adelaide, at('2026-01-08T12:00:00Z')).nextOpenAt, at('2026-01-08T21:30:00Z'));
    assert.equal(openingAt(adelaide, at('2026-01-09T13:29:00Z')).open, true); // 23:59 local
    assert.equal(openingAt(adelaide, at('2026-01-09T13:30:00Z')).open, false); // midnight: Saturday
  });

  it('has no next opening when the schedule never opens', () => {
    const never: BusinessHours = { time_zone: 'UTC', weekly: {}, holidays: [] };
    assert.deepEqual(openingAt(never, at('2026-01-01T00:00:00Z')), { open: false, nextOpenAt: null });
  });
});
