import type {
  CreatedWebhookView,
  WebhookDeliveryList,
  WebhookListing,
  WebhookSecretView,
  WebhookView,
} from '@parley/wire-types';
import { api, pageQuery } from '../api.ts';
import { createForm } from '../components/form.ts';
import { confirmDelete, pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { pagedTable } from '../components/paged-table.ts';
import { showSecretOnce } from '../components/secret-once.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

/**
 * Settings → Webhooks (docs/webhooks.md). A signing secret is rendered once, from the answer of create or rotate,
 * and lives only in this page's DOM: reloading drops it for good (the server keeps it sealed and never shows it).
 */
export async function renderWebhooks(main: HTMLElement): Promise<void> {
  const first = await api<WebhookListing>('GET', `/webhooks?${pageQuery(0, 1)}`);
  const secretSlot = h('div', { class: 'secret-slot' });
  const deliveriesSlot = h('div', { class: 'deliveries-slot' });
  const status = statusArea();
  const { say } = status;

  const table = pagedTable<WebhookView>({
    caption: 'Webhooks',
    empty: 'No webhooks yet.',
    load: (offset, limit) => api<WebhookListing>('GET', `/webhooks?${pageQuery(offset, limit)}`),
    columns: [
      { header: 'URL', cell: (w) => h('span', { class: 'url' }, w.url) },
      { header: 'Events', cell: (w) => h('ul', { class: 'tags' }, ...w.events.map((e) => h('li', {}, e))) },
      { header: 'Description', cell: (w) => w.description ?? '' },
      {
        header: 'Status',
        cell: (w) => (w.enabled ? 'Enabled' : `Disabled ${formatTime(w.disabled_at)} (failed for 3 days)`),
      },
      { header: 'Created', cell: (w) => formatTime(w.created_at) },
      {
        header: 'Actions',
        cell: (w) =>
          h(
            'div',
            { class: 'actions' },
            rowButton('Deliveries', `Deliveries of ${w.url}`, () => showDeliveries(w)),
            rowButton('Rotate secret', `Rotate secret of ${w.url}`, () => rotate(w)),
            rowButton('Delete', `Delete ${w.url}`, () => remove(w), 'danger'),
          ),
      },
    ],
  });

  const rotate = async (w: WebhookView) => {
    try {
      const { secret } = await api<WebhookSecretView>('POST', `/webhooks/${w.id}/secret`);
      showSecretOnce(secretSlot, {
        title: `New secret for ${w.url}: copy it now`,
        usage:
          'The previous secret keeps signing beside it for 24 hours, so receivers can switch in their own time.',
        secret,
        testId: 'webhook-secret',
      });
    } catch (err) {
      say('error', err instanceof Error ? err.message : 'The secret could not be rotated.');
    }
  };

  const remove = (w: WebhookView): Promise<void> =>
    confirmDelete({
      title: `Delete the webhook to ${w.url}?`,
      consequence:
        'Nothing more is sent to it, including deliveries still waiting for a retry. This cannot be undone.',
      confirmLabel: 'Delete webhook',
      path: `/webhooks/${w.id}`,
      deleted: `Deleted the webhook to ${w.url}.`,
      status,
      reload: async () => {
        replaceChildren(deliveriesSlot);
        await table.reload();
      },
    });

  const showDeliveries = async (w: WebhookView): Promise<void> => {
    const { deliveries } = await api<WebhookDeliveryList>('GET', `/webhooks/${w.id}/deliveries`);
    const rows = deliveries.map((d) =>
      h(
        'tr',
        {},
        h('td', {}, d.type),
        h('td', {}, h('code', {}, d.event_id)),
        h('td', {}, d.status),
        h('td', {}, String(d.attempts)),
        h(
          'td',
          {},
          d.last_status_code === null
            ? '—'
            : d.last_status_code === 0
              ? 'no answer'
              : String(d.last_status_code),
        ),
        h('td', {}, d.next_attempt_at ? formatTime(d.next_attempt_at) : '—'),
        h(
          'td',
          {},
          w.enabled
            ? rowButton('Retry', `Retry delivery ${d.id}`, async () => {
                try {
                  await api('POST', `/webhooks/${w.id}/deliveries/${d.id}/retry`);
                  say('success', `Delivery of ${d.type} queued again.`);
                  await showDeliveries(w);
                } catch (err) {
                  say('error', err instanceof Error ? err.message : 'The retry failed.');
                }
              })
            : '',
        ),
      ),
    );
    replaceChildren(
      deliveriesSlot,
      titledSection(
        'webhook-deliveries',
        `Deliveries to ${w.url}`,
        deliveries.length === 0
          ? h('p', {}, 'No deliveries yet.')
          : h(
              'table',
              {},
              h('caption', { class: 'visually-hidden' }, 'Deliveries'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ...[
                    'Event',
                    'Event ID',
                    'Status',
                    'Attempts',
                    'Last answer',
                    'Next attempt',
                    'Actions',
                  ].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h('tbody', {}, ...rows),
            ),
      ),
    );
  };

  const form = createForm({
    submitLabel: 'Create webhook',
    resetOnSuccess: true,
    codeFields: { invalid_url: 'url', invalid_events: 'events', invalid_description: 'description' },
    fields: [
      {
        name: 'url',
        label: 'URL',
        type: 'url',
        required: true,
        maxLength: 2048,
        placeholder: 'https://crm.example.com/parley-events',
      },
      {
        name: 'events',
        label: 'Events',
        type: 'checkboxes',
        required: true,
        options: first.event_types.map((e) => ({ value: e, label: e })),
      },
      { name: 'description', label: 'Description (optional)', maxLength: 500 },
    ],
    onSubmit: async (values) => {
      const created = await api<CreatedWebhookView>('POST', '/webhooks', {
        url: values.url,
        events: values.events,
        ...(values.description ? { description: values.description } : {}),
      });
      showSecretOnce(secretSlot, {
        title: `Signing secret for ${created.url}: copy it now`,
        usage: 'Receivers verify each delivery’s webhook-signature header with it (Standard Webhooks).',
        secret: created.secret,
        testId: 'webhook-secret',
      });
      await table.reload();
    },
  });

  main.append(
    ...pageIntro(
      'Webhooks',
      'Parley POSTs your company’s events (new conversations, messages, handovers, ratings, connector key rotations) to these URLs, signed as ',
      h('a', { href: 'https://www.standardwebhooks.com/' }, 'Standard Webhooks'),
      ' specifies. Failed deliveries are retried for 24 hours.',
    ),
    status.el,
    secretSlot,
    titledSection('webhook-list', 'Your webhooks', table.el),
    deliveriesSlot,
    titledSection('create-webhook', 'New webhook', form.el),
  );
  await table.reload();
}
