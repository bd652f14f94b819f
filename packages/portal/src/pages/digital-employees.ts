import { api, type Page, pageQuery } from '../api.ts';
import { createForm, type FieldSpec, type FormValues } from '../components/form.ts';
import { pagedTable } from '../components/paged-table.ts';
import { confirmDialog, copyable, formDialog, notice } from '../components/widgets.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

interface Employee {
  id: string;
  name: string;
  responder: 'builtin' | 'webhook' | 'openai';
  connector_id: string | null;
  model: string | null;
  system_prompt: string | null;
  settings: { greeting?: string | null };
  is_default: boolean;
  updated_at: string;
}

interface ConnectorOption {
  id: string;
  name: string;
  type: string;
}

type Listing = Page<Employee> & { connectors: ConnectorOption[]; responders: string[] };

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
};

/** Settings → Digital employees: who answers conversations; create, edit, choose the company default. */
export async function renderDigitalEmployees(main: HTMLElement): Promise<void> {
  let listing = await api<Listing>('GET', `/digital-employees?${pageQuery(0, 1)}`);
  const status = h('div', { 'aria-live': 'polite' });
  const say = (...n: Parameters<typeof notice>) => replaceChildren(status, notice(...n));
  const connectorName = (id: string | null) =>
    id ? (listing.connectors.find((c) => c.id === id)?.name ?? id) : '—';

  const table = pagedTable<Employee>({
    caption: 'Digital employees',
    empty: 'No digital employees.',
    load: async (offset, limit) => {
      listing = await api<Listing>('GET', `/digital-employees?${pageQuery(offset, limit)}`);
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
      { header: 'Updated', cell: (e) => formatTime(e.updated_at) },
      {
        header: 'Actions',
        cell: (e) =>
          h(
            'div',
            { class: 'actions' },
            h(
              'button',
              { type: 'button', class: 'secondary', 'aria-label': `Edit ${e.name}`, onclick: () => edit(e) },
              'Edit',
            ),
            e.is_default
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary',
                    'aria-label': `Make ${e.name} the default`,
                    onclick: () => void makeDefault(e),
                  },
                  'Make default',
                ),
            e.is_default
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    'aria-label': `Delete ${e.name}`,
                    onclick: () => void remove(e),
                  },
                  'Delete',
                ),
          ),
      },
    ],
  });

  const fieldsFor = (e?: Employee): FieldSpec[] => [
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
      greeting: values.greeting || null,
    };
  };

  const edit = (e: Employee) =>
    formDialog(`Edit “${e.name}”`, 'Changes apply to the next reply.', (close) => {
      const form = createForm({
        submitLabel: 'Save changes',
        fields: fieldsFor(e),
        onSubmit: async (values) => {
          const saved = await api<Employee>('PATCH', `/digital-employees/${e.id}`, body(values));
          close();
          say('success', `Saved “${saved.name}”.`);
          await table.reload();
        },
      });
      wireResponder(form);
      return form.el;
    });

  const makeDefault = async (e: Employee) => {
    try {
      await api('POST', `/digital-employees/${e.id}/default`);
      say('success', `“${e.name}” now answers conversations of channels without their own digital employee.`);
    } catch (err) {
      say('error', err instanceof Error ? err.message : 'Failed.');
    }
    await table.reload();
  };

  const remove = async (e: Employee) => {
    if (
      !(await confirmDialog(
        `Delete “${e.name}”?`,
        'Channels routed to it must be moved first. This cannot be undone.',
        'Delete digital employee',
      ))
    )
      return;
    try {
      await api('DELETE', `/digital-employees/${e.id}`);
      say('success', `Deleted “${e.name}”.`);
    } catch (err) {
      say('error', err instanceof Error ? err.message : 'Delete failed.');
    }
    await table.reload();
  };

  const create = createForm({
    submitLabel: 'Create digital employee',
    resetOnSuccess: true,
    fields: [...fieldsFor(), { name: 'is_default', label: 'Make it the default', type: 'checkbox' }],
    onSubmit: async (values) => {
      const created = await api<Employee>('POST', '/digital-employees', {
        ...body(values),
        is_default: values.is_default === 'true',
      });
      say('success', `Created “${created.name}”.`);
      await table.reload();
    },
  });
  wireResponder(create);
  create.el.addEventListener('reset', () =>
    setTimeout(() => create.el.querySelector('select[name="responder"]')?.dispatchEvent(new Event('change'))),
  );

  main.append(
    h('h1', {}, 'Digital employees'),
    h(
      'p',
      { class: 'lead' },
      'Digital employees answer visitors. Each channel routes to one; the default answers everywhere else.',
    ),
    status,
    h(
      'section',
      { 'aria-labelledby': 'de-list' },
      h('h2', { id: 'de-list' }, 'Your digital employees'),
      table.el,
    ),
    h(
      'section',
      { 'aria-labelledby': 'de-create' },
      h('h2', { id: 'de-create' }, 'New digital employee'),
      create.el,
    ),
  );
  await table.reload();
}
