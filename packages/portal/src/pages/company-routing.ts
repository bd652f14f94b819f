import type { CannedResponseList, RoutingSettingsView } from '@parley/wire-types';
import { api } from '../api.ts';
import { createForm, type FieldSpec } from '../components/form.ts';
import { titledSection } from '../components/page-parts.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

const WEEKDAYS = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
] as const;

const INTERVALS = /^\s*(\d{2}:\d{2})\s*-\s*(\d{2}:\d{2})\s*$/;

/** "09:00-12:00, 13:00-17:00" ⇄ intervals; empty means closed that day. */
type BusinessHours = NonNullable<RoutingSettingsView['business_hours']>;
type Interval = NonNullable<BusinessHours['weekly']['mon']>[number];

const formatDay = (intervals: Interval[] = []) => intervals.map((i) => `${i.from}-${i.to}`).join(', ');
function parseDay(text: string): Interval[] | undefined {
  const parts = text.split(',').filter((p) => p.trim() !== '');
  const intervals = parts.map((p) => INTERVALS.exec(p));
  if (intervals.some((m) => !m)) return undefined;
  return intervals.map((m) => ({ from: m![1]!, to: m![2]! }));
}

const openingText = (o: RoutingSettingsView['opening']) =>
  o.open
    ? 'Agents are in now.'
    : o.next_open_at
      ? `Agents are away; back ${formatTime(o.next_open_at)}.`
      : 'Agents are away (the schedule never opens).';

/**
 * Settings → Company → Routing and business hours (docs/routing.md): how many open conversations an agent holds
 * before round-robin passes them by, and when agents are in (time zone, hours per weekday, holidays).
 */
export async function routingSection(say: (text: string) => void): Promise<HTMLElement> {
  const settings = await api<RoutingSettingsView>('GET', '/company/routing');
  const opening = h('p', { class: 'hint opening' }, openingText(settings.opening));
  const hours = settings.business_hours;
  const dayFields: FieldSpec[] = WEEKDAYS.map(([key, label]) => ({
    name: `day_${key}`,
    label,
    value: formatDay(hours?.weekly[key]),
    placeholder: 'closed',
    validate: (value) =>
      parseDay(String(value)) ? undefined : 'Write intervals like 09:00-12:00, 13:00-17:00, or leave empty.',
  }));
  const form = createForm({
    submitLabel: 'Save routing',
    fields: [
      {
        name: 'agent_capacity',
        label: 'Open conversations per agent',
        value: String(settings.agent_capacity),
        required: true,
        validate: (value) =>
          /^\d+$/.test(String(value)) && Number(value) >= 1 && Number(value) <= 100
            ? undefined
            : 'From 1 to 100.',
      },
      {
        name: 'use_hours',
        label: 'Use business hours (otherwise agents are always in)',
        type: 'checkbox',
        value: hours ? 'true' : 'false',
      },
      {
        name: 'time_zone',
        label: 'Time zone',
        value: hours?.time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
        hint: 'An IANA time zone, e.g. Europe/Berlin.',
      },
      ...dayFields,
      {
        name: 'holidays',
        label: 'Holidays',
        type: 'textarea',
        value: hours?.holidays.join('\n') ?? '',
        hint: 'One date per line (YYYY-MM-DD): closed all day.',
      },
    ],
    onSubmit: async (values) => {
      const useHours = values.use_hours === 'true';
      const weekly: BusinessHours['weekly'] = {};
      for (const [key] of WEEKDAYS) {
        const intervals = parseDay(String(values[`day_${key}`] ?? '')) ?? [];
        if (intervals.length > 0) weekly[key] = intervals;
      }
      const saved = await api<RoutingSettingsView>('PUT', '/company/routing', {
        agent_capacity: Number(values.agent_capacity),
        business_hours: useHours
          ? {
              time_zone: String(values.time_zone).trim(),
              weekly,
              holidays: String(values.holidays ?? '')
                .split('\n')
                .map((d) => d.trim())
                .filter(Boolean),
            }
          : null,
      });
      opening.textContent = openingText(saved.opening);
      say('Routing saved.');
    },
  });
  return titledSection('routing-title', 'Routing and business hours', opening, form.el);
}

/** Settings → Company → Canned responses: saved replies agents insert with `/shortcut` in the inbox. */
export async function cannedResponsesSection(say: (text: string) => void): Promise<HTMLElement> {
  const list = h('ul', { class: 'canned-list', 'aria-label': 'Canned responses' });
  const show = async () => {
    const { items } = await api<CannedResponseList>('GET', '/canned-responses');
    replaceChildren(
      list,
      ...(items.length
        ? items.map((r) =>
            h(
              'li',
              { 'data-shortcut': r.shortcut },
              h('strong', {}, `/${r.shortcut}`),
              ` ${r.title} — ${r.content.length > 80 ? `${r.content.slice(0, 79)}…` : r.content} `,
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Delete /${r.shortcut}`,
                  onclick: async () => {
                    await api('DELETE', `/canned-responses/${r.id}`);
                    say(`Deleted /${r.shortcut}.`);
                    await show();
                  },
                },
                'Delete',
              ),
            ),
          )
        : [h('li', { class: 'muted' }, 'No canned responses yet.')]),
    );
  };
  const form = createForm({
    submitLabel: 'Add canned response',
    resetOnSuccess: true,
    codeFields: { shortcut_taken: 'shortcut' },
    fields: [
      {
        name: 'shortcut',
        label: 'Shortcut',
        required: true,
        hint: 'What agents type after / — lower-case letters, digits, - and _.',
        validate: (value) =>
          /^[a-z0-9][a-z0-9_-]{0,31}$/.test(String(value)) ? undefined : 'Use a-z, 0-9, - and _ (up to 32).',
      },
      { name: 'title', label: 'Title', required: true, maxLength: 200 },
      { name: 'content', label: 'Text (markdown)', type: 'textarea', required: true, maxLength: 20000 },
    ],
    onSubmit: async (values) => {
      await api('POST', '/canned-responses', {
        shortcut: values.shortcut,
        title: values.title,
        content: values.content,
      });
      say(`Added /${values.shortcut}.`);
      await show();
    },
  });
  await show();
  return titledSection('canned-title', 'Canned responses', list, form.el);
}
