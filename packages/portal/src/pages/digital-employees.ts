import type {
  DigitalEmployeeListItem,
  DigitalEmployeeListing,
  DigitalEmployeeStatsView,
  DigitalEmployeeView,
} from '@parley/wire-types';
import { api, pageQuery } from '../api.ts';
import { createForm, type FieldSpec, type FormValues } from '../components/form.ts';
import { confirmDelete, pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { pagedTable } from '../components/paged-table.ts';
import { copyable, formDialog } from '../components/widgets.ts';
import { formatTime, h } from '../dom.ts';
import { outcomesSection } from './digital-employee-outcomes.ts';

/** "👍 67% of 3 · CSAT 4.3 (3)", or that nobody has rated it yet. */
function ratings(stats: DigitalEmployeeStatsView): HTMLElement {
  const rated = stats.thumbs_up + stats.thumbs_down > 0 || stats.csat_count > 0;
  if (!rated) return h('span', { class: 'muted' }, 'No ratings yet');
  const thumbs = stats.thumbs_up + stats.thumbs_down;
  return h(
    'span',
    { class: 'ratings' },
    h(
      'span',
      { class: 'thumbs' },
      thumbs > 0
        ? `${Math.round((stats.thumbs_up_share ?? 0) * 100)}% helpful (${stats.thumbs_up} of ${thumbs})`
        : 'No thumbs yet',
    ),
    h('br'),
    h(
      'span',
      { class: 'csat' },
      stats.csat_average !== null
        ? `CSAT ${stats.csat_average.toFixed(1)} / 5 (${stats.csat_count})`
        : 'No CSAT yet',
    ),
  );
}

const RESPONDER_LABELS: Record<string, string> = {
  builtin: 'builtin — answers from its own Q&A list',
  webhook: 'webhook — your bot behind a webhook connector',
  openai: 'openai — an OpenAI-compatible model via a connector',
};

/** Which fields apply to which responder (the service refuses the others). */
const APPLIES: Record<string, string[]> = {
  connector_id: ['webhook', 'openai'],
  model: ['openai'],
  system_prompt: ['openai'],
  handover_tool: ['openai'],
};

/** Settings → Digital employees: who answers conversations; create, edit, choose the company default. */
export async function renderDigitalEmployees(main: HTMLElement): Promise<void> {
  let listing = await api<DigitalEmployeeListing>('GET', `/digital-employees?${pageQuery(0, 1)}`);
  const status = statusArea();
  const { say } = status;
  const outcomes = outcomesSection();
  const connectorName = (id: string | null) =>
    id ? (listing.connectors.find((c) => c.id === id)?.name ?? id) : '—';

  const table = pagedTable<DigitalEmployeeListItem>({
    caption: 'Digital employees',
    empty: 'No digital employees.',
    load: async (offset, limit) => {
      listing = await api<DigitalEmployeeListing>('GET', `/digital-employees?${pageQuery(offset, limit)}`);
      return listing;
    },
    columns: [
      {
        header: 'Name',
        cell: (e) => h('span', {}, e.name, e.is_default ? h('span', { class: 'badge' }, 'Default') : null),
      },
      { header: 'ID', cell: (e) => copyable(e.id, 'Copy ID') },
      { header: 'Responder', cell: (e) => e.responder },
      { header: 'Connector', cell: (e) => connectorName(e.connector_id) },
      { header: 'Model', cell: (e) => e.model ?? '—' },
      { header: 'Ratings', cell: (e) => ratings(e.stats) },
      { header: 'Updated', cell: (e) => formatTime(e.updated_at) },
      {
        header: 'Actions',
        cell: (e) =>
          h(
            'div',
            { class: 'actions' },
            rowButton('Edit', `Edit ${e.name}`, () => edit(e)),
            e.is_default
              ? null
              : rowButton('Make default', `Make ${e.name} the default`, () => makeDefault(e)),
            e.is_default ? null : rowButton('Delete', `Delete ${e.name}`, () => remove(e), 'danger'),
          ),
      },
    ],
  });

  /** After a change: the list, and the outcomes' choice of employees (names, who is the default). */
  const reloadAll = async () => {
    await table.reload();
    await outcomes.refresh();
  };

  const fieldsFor = (e?: DigitalEmployeeView): FieldSpec[] => [
    {
      name: 'name',
      label: 'Name',
      required: true,
      maxLength: 100,
      value: e?.name,
      hint: 'Shown to visitors as the author of replies.',
    },
    {
      name: 'responder',
      label: 'Responder',
      type: 'select',
      required: true,
      value: e?.responder ?? 'builtin',
      options: listing.responders.map((r) => ({ value: r, label: RESPONDER_LABELS[r] ?? r })),
    },
    {
      name: 'connector_id',
      label: 'Connector',
      type: 'select',
      value: e?.connector_id ?? '',
      options: [
        { value: '', label: '— choose a connector —' },
        ...listing.connectors.map((c) => ({ value: c.id, label: `${c.name} (${c.type})` })),
      ],
      hint: 'Of the same type as the responder; create one on the Connectors page.',
    },
    { name: 'model', label: 'Model', maxLength: 200, value: e?.model ?? '', placeholder: 'gpt-4o-mini' },
    {
      name: 'system_prompt',
      label: 'System prompt',
      type: 'textarea',
      maxLength: 20000,
      value: e?.system_prompt ?? '',
    },
    {
      name: 'handover_tool',
      label: 'May hand the conversation to a person (handover tool)',
      type: 'checkbox',
      value: e?.settings.handover_tool === false ? 'false' : 'true',
      hint: 'Offers the model the built-in handover tool. Visitors can always ask for a person.',
    },
    {
      name: 'greeting',
      label: 'Greeting',
      type: 'textarea',
      maxLength: 4000,
      value: e?.settings.greeting ?? '',
      hint: 'Posted when a conversation starts. Empty: no greeting.',
    },
  ];

  /** Hides the fields that do not apply to the chosen responder (and sends them as null). */
  const wireResponder = (form: ReturnType<typeof createForm>) => {
    const select = form.el.querySelector('select[name="responder"]') as HTMLSelectElement;
    const sync = () => {
      for (const [name, responders] of Object.entries(APPLIES)) {
        const field = form.fields.get(name);
        if (field) field.wrapper.hidden = !responders.includes(select.value);
      }
    };
    select.addEventListener('change', sync);
    sync();
  };

  const body = (values: FormValues) => {
    const responder = String(values.responder);
    const applies = (name: string) => APPLIES[name]!.includes(responder);
    return {
      name: values.name,
      responder,
      connector_id: applies('connector_id') ? values.connector_id || null : null,
      model: applies('model') ? values.model || null : null,
      system_prompt: applies('system_prompt') ? values.system_prompt || null : null,
      ...(applies('handover_tool') ? { handover_tool: values.handover_tool === 'true' } : {}),
      greeting: values.greeting || null,
    };
  };

  const edit = (e: DigitalEmployeeView) =>
    formDialog(`Edit “${e.name}”`, 'Changes apply to the next reply.', (close) => {
      const form = createForm({
        submitLabel: 'Save changes',
        fields: fieldsFor(e),
        onSubmit: async (values) => {
          const saved = await api<DigitalEmployeeView>('PATCH', `/digital-employees/${e.id}`, body(values));
          close();
          say('success', `Saved “${saved.name}”.`);
          await reloadAll();
        },
      });
      wireResponder(form);
      return form.el;
    });

  const makeDefault = async (e: DigitalEmployeeView) => {
    try {
      await api('POST', `/digital-employees/${e.id}/default`);
      say('success', `“${e.name}” now answers conversations of channels without their own digital employee.`);
    } catch (err) {
      say('error', err instanceof Error ? err.message : 'Failed.');
    }
    await reloadAll();
  };

  const remove = (e: DigitalEmployeeView): Promise<void> =>
    confirmDelete({
      title: `Delete “${e.name}”?`,
      consequence: 'Channels routed to it must be moved first. This cannot be undone.',
      confirmLabel: 'Delete digital employee',
      path: `/digital-employees/${e.id}`,
      deleted: `Deleted “${e.name}”.`,
      status,
      reload: () => reloadAll(),
    });

  const create = createForm({
    submitLabel: 'Create digital employee',
    resetOnSuccess: true,
    fields: [...fieldsFor(), { name: 'is_default', label: 'Make it the default', type: 'checkbox' }],
    onSubmit: async (values) => {
      const created = await api<DigitalEmployeeView>('POST', '/digital-employees', {
        ...body(values),
        is_default: values.is_default === 'true',
      });
      say('success', `Created “${created.name}”.`);
      await reloadAll();
    },
  });
  wireResponder(create);
  create.el.addEventListener('reset', () =>
    setTimeout(() => create.el.querySelector('select[name="responder"]')?.dispatchEvent(new Event('change'))),
  );

  main.append(
    ...pageIntro(
      'Digital employees',
      'Digital employees answer visitors. Each channel routes to one; the default answers everywhere else.',
    ),
    status.el,
    titledSection('de-list', 'Your digital employees', table.el),
    titledSection('de-outcomes', 'Outcomes', outcomes.el),
    titledSection('de-create', 'New digital employee', create.el),
  );
  await reloadAll();
}
