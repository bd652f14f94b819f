import type {
  ConnectorCheckView,
  ConnectorListing,
  ConnectorView,
  KeyRotationView,
} from '@parley/wire-types';
import { api, pageQuery } from '../api.ts';
import { createForm } from '../components/form.ts';
import { confirmDelete, pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { pagedTable } from '../components/paged-table.ts';
import { copyable, formDialog } from '../components/widgets.ts';
import { formatTime, h } from '../dom.ts';

/**
 * Settings → Connectors. The API key is write-only: it goes in through password fields (create, rotate) and no
 * screen ever shows it; the list shows whether one is set, its version and when it last changed.
 */
export async function renderConnectors(main: HTMLElement): Promise<void> {
  const first = await api<ConnectorListing>('GET', `/connectors?${pageQuery(0, 1)}`);
  const status = statusArea();
  const { say } = status;

  const table = pagedTable<ConnectorView>({
    caption: 'Connectors',
    empty: 'No connectors yet.',
    load: (offset, limit) => api<ConnectorListing>('GET', `/connectors?${pageQuery(offset, limit)}`),
    columns: [
      { header: 'Name', cell: (c) => c.name },
      { header: 'Connector ID', cell: (c) => copyable(c.id, 'Copy ID') },
      { header: 'Type', cell: (c) => c.type },
      { header: 'URL', cell: (c) => h('span', { class: 'url' }, c.url) },
      { header: 'API key', cell: (c) => (c.api_key_set ? `Set (version ${c.key_version})` : 'Not set') },
      { header: 'Last rotation', cell: (c) => (c.rotated_at ? formatTime(c.rotated_at) : 'Never') },
      {
        header: 'Actions',
        cell: (c) =>
          h(
            'div',
            { class: 'actions' },
            rowButton('Rotate key', `Rotate key of ${c.name}`, () => rotate(c)),
            rowButton('Test connection', `Test connection of ${c.name}`, () => check(c)),
            rowButton('Delete', `Delete ${c.name}`, () => remove(c), 'danger'),
          ),
      },
    ],
  });

  const rotate = (c: ConnectorView) =>
    formDialog(
      `Rotate the API key of “${c.name}”`,
      'The new key is used from the very next call; the old one is no longer used. Parley never shows a stored key.',
      (close) =>
        createForm({
          submitLabel: 'Save new key',
          codeFields: { invalid_api_key: 'api_key' },
          fields: [
            {
              name: 'api_key',
              label: 'New API key',
              type: 'password',
              required: true,
              autocomplete: 'off',
              maxLength: 4096,
            },
          ],
          onSubmit: async (values) => {
            const r = await api<KeyRotationView>('PUT', `/connectors/${c.id}/api-key`, {
              api_key: values.api_key,
            });
            close();
            say(
              'success',
              r.changed
                ? `Key of “${c.name}” rotated: now version ${r.key_version}.`
                : `That key is already the current one (version ${r.key_version}).`,
            );
            await table.reload();
          },
        }).el,
    );

  const check = async (c: ConnectorView) => {
    say('info', `Testing “${c.name}”…`);
    try {
      const r = await api<ConnectorCheckView>('POST', `/connectors/${c.id}/check`);
      if (r.ok)
        say(
          'success',
          `“${c.name}” answered HTTP ${r.status} in ${r.latency_ms} ms (key version ${r.key_version}).`,
        );
      else if (r.status)
        say(
          'error',
          `“${c.name}” answered HTTP ${r.status} in ${r.latency_ms} ms (key version ${r.key_version}).`,
        );
      else say('error', `“${c.name}” could not be reached: ${r.detail ?? r.error ?? 'no answer'}`);
    } catch (err) {
      say('error', err instanceof Error ? err.message : 'The test failed.');
    }
  };

  const remove = (c: ConnectorView): Promise<void> =>
    confirmDelete({
      title: `Delete “${c.name}”?`,
      consequence: 'Digital employees that use this connector stop working. This cannot be undone.',
      confirmLabel: 'Delete connector',
      path: `/connectors/${c.id}`,
      deleted: `Deleted “${c.name}”.`,
      status,
      reload: () => table.reload(),
    });

  const form = createForm({
    submitLabel: 'Create connector',
    resetOnSuccess: true,
    codeFields: {
      invalid_name: 'name',
      invalid_type: 'type',
      invalid_url: 'url',
      invalid_api_key: 'api_key',
    },
    fields: [
      { name: 'name', label: 'Name', required: true, maxLength: 200 },
      {
        name: 'type',
        label: 'Type',
        type: 'select',
        required: true,
        options: first.types.map((t) => ({ value: t.name, label: `${t.name} — ${t.summary}` })),
      },
      {
        name: 'url',
        label: 'URL',
        type: 'url',
        maxLength: 2048,
        placeholder: 'https://bot.example.com/hook',
        hint: `Required for webhooks. ${first.types
          .filter((t) => t.default_url)
          .map((t) => `${t.name} defaults to ${t.default_url}`)
          .join('; ')}.`,
      },
      {
        name: 'api_key',
        label: 'API key (optional)',
        type: 'password',
        autocomplete: 'off',
        maxLength: 4096,
        hint: 'Write-only: it can be replaced later but never read back.',
      },
    ],
    onSubmit: async (values) => {
      const created = await api<ConnectorView>('POST', '/connectors', {
        name: values.name,
        type: values.type,
        url: values.url || undefined,
        api_key: values.api_key || undefined,
      });
      say('success', `Created “${created.name}”. Its ID is `, h('code', {}, created.id), '.');
      await table.reload();
    },
  });

  main.append(
    ...pageIntro(
      'Connectors',
      'Connectors are the outside services your digital employees call. An API client with ',
      h('code', {}, 'connector:write'),
      ' can rotate a key with ',
      h('code', {}, 'PUT /integrations/v1/connectors/api-keys/{connector ID}'),
      '.',
    ),
    status.el,
    titledSection('connector-list', 'Your connectors', table.el),
    titledSection('create-connector', 'New connector', form.el),
  );
  await table.reload();
}
