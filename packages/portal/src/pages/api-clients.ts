import type { ApiClientListing, ApiClientView, CreatedApiClientView } from '@parley/wire-types';
import { api, pageQuery } from '../api.ts';
import { createForm } from '../components/form.ts';
import { confirmDelete, pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { pagedTable } from '../components/paged-table.ts';
import { showSecretOnce } from '../components/secret-once.ts';
import { copyable } from '../components/widgets.ts';
import { formatTime, h } from '../dom.ts';
import { renderClientSecrets } from './api-client-secrets.ts';

const SCOPE_HELP: Record<string, string> = {
  'connector:write': 'connector:write — rotate connector API keys',
  'connector:read': 'connector:read — list and check connectors',
  'conversations:read': 'conversations:read — read conversations',
  'conversations:write': 'conversations:write — post agent messages',
  'webhooks:read': 'webhooks:read — list webhooks and their deliveries',
  'webhooks:write': 'webhooks:write — create, delete and rotate webhooks, retry deliveries',
};

/**
 * Settings → API clients. The secret of a new client is rendered once from the creation response and lives only
 * in this page's DOM: navigating away or reloading drops it for good (the server keeps only a digest).
 */
export async function renderApiClients(main: HTMLElement): Promise<void> {
  const first = await api<ApiClientListing>('GET', `/api-clients?${pageQuery(0, 1)}`);
  const secretSlot = h('div', { class: 'secret-slot' });
  const status = statusArea();
  /** The secrets and quotas of the client chosen with "Secrets" (pages/api-client-secrets.ts). */
  const manageSlot = h('div', {});

  const table = pagedTable<ApiClientView>({
    caption: 'API clients',
    empty: 'No API clients yet.',
    load: (offset, limit) => api<ApiClientListing>('GET', `/api-clients?${pageQuery(offset, limit)}`),
    columns: [
      { header: 'Name', cell: (c) => c.name },
      { header: 'Client ID', cell: (c) => copyable(c.client_id, 'Copy ID') },
      { header: 'Scopes', cell: (c) => h('ul', { class: 'tags' }, ...c.scopes.map((s) => h('li', {}, s))) },
      { header: 'Created', cell: (c) => formatTime(c.created_at) },
      { header: 'Last used', cell: (c) => (c.last_used_at ? formatTime(c.last_used_at) : 'Never') },
      {
        header: 'Actions',
        cell: (c) =>
          h(
            'div',
            { class: 'actions' },
            rowButton('Secrets', `Secrets of ${c.name}`, () => renderClientSecrets(manageSlot, c, status)),
            rowButton('Delete', `Delete ${c.name}`, () => remove(c), 'danger'),
          ),
      },
    ],
  });

  const remove = (c: ApiClientView): Promise<void> =>
    confirmDelete({
      title: `Delete “${c.name}”?`,
      consequence:
        'The client can no longer obtain tokens. Tokens it already holds keep working until they expire (within the hour). This cannot be undone.',
      confirmLabel: 'Delete client',
      path: `/api-clients/${encodeURIComponent(c.client_id)}`,
      deleted: `Deleted “${c.name}”. Its issued tokens lapse within the hour.`,
      status,
      reload: () => table.reload(),
    });

  const form = createForm({
    submitLabel: 'Create API client',
    resetOnSuccess: true,
    codeFields: { invalid_name: 'name', invalid_scopes: 'scopes' },
    fields: [
      {
        name: 'name',
        label: 'Name',
        required: true,
        maxLength: 200,
        hint: 'Who uses it, e.g. “CI bot” or “CRM sync”.',
      },
      {
        name: 'scopes',
        label: 'Scopes',
        type: 'checkboxes',
        required: true,
        options: first.available_scopes.map((s) => ({ value: s, label: SCOPE_HELP[s] ?? s })),
      },
    ],
    onSubmit: async (values) => {
      const created = await api<CreatedApiClientView>('POST', '/api-clients', {
        name: values.name,
        scopes: values.scopes,
      });
      showSecretOnce(secretSlot, {
        title: `Secret for “${created.name}”: copy it now`,
        usage:
          'Parley stores only a digest of it; if you lose it, add a new secret (Secrets) and revoke the old one.',
        secret: created.client_secret,
        testId: 'client-secret',
        details: h(
          'dl',
          { class: 'pairs' },
          h('dt', {}, 'Client ID'),
          h('dd', {}, copyable(created.client_id, 'Copy ID')),
        ),
      });
      await table.reload();
    },
  });

  main.append(
    ...pageIntro(
      'API clients',
      'External systems use an API client’s ID and secret to get access tokens (OAuth 2.0 client credentials) at ',
      h('code', {}, '/platform/v1/auth/token/client-credentials'),
      '. To rotate a secret without downtime, open the client’s Secrets, add a second secret, move your systems to it, then revoke the old one.',
    ),
    status.el,
    secretSlot,
    titledSection('create-client', 'New API client', form.el),
    titledSection('client-list', 'Your API clients', table.el),
    manageSlot,
  );
  await table.reload();
}
