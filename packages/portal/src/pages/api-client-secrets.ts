import type {
  ApiClientQuotasAnswer,
  ApiClientSecretList,
  ApiClientSecretView,
  ApiClientView,
  RotatedClientSecretView,
} from '@parley/wire-types';
import { api } from '../api.ts';
import { createForm } from '../components/form.ts';
import { confirmDelete, rowButton, type StatusArea, titledSection } from '../components/page-parts.ts';
import { showSecretOnce } from '../components/secret-once.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

/** What the secrets and quotas section needs of the client chosen in the table. */
export type ManagedClient = Pick<ApiClientView, 'client_id' | 'name' | 'auth_method' | 'quotas'>;

/** How long the secrets in use keep working after a second one is added (the API's `old_expires_in_seconds`). */
const OVERLAPS = [
  { value: String(7 * 86_400), label: '7 days (default)' },
  { value: String(86_400), label: '1 day' },
  { value: String(3_600), label: '1 hour' },
  { value: String(30 * 86_400), label: '30 days' },
];

/**
 * One API client's secrets and quotas (docs/machine-access.md): add a second secret with an overlap (shown once),
 * see when each secret was last used and when it expires, revoke an old one; set the client's quotas per minute.
 * Rendered into `slot` below the clients' table; everything goes through the portal API.
 */
export async function renderClientSecrets(
  slot: HTMLElement,
  client: ManagedClient,
  status: StatusArea,
): Promise<void> {
  const base = `/api-clients/${encodeURIComponent(client.client_id)}`;
  const secretSlot = h('div', { class: 'secret-slot' });
  const list = h('div', {});

  const reload = async () => {
    const { secrets } = await api<ApiClientSecretList>('GET', `${base}/secrets`);
    const rows = secrets.map((s) =>
      h(
        'tr',
        {},
        h('td', {}, h('code', {}, s.id)),
        h('td', {}, formatTime(s.created_at)),
        h('td', {}, s.expires_at ? formatTime(s.expires_at) : 'Never'),
        h('td', {}, s.last_used_at ? formatTime(s.last_used_at) : 'Never'),
        h(
          'td',
          {},
          secrets.length > 1
            ? rowButton('Revoke', `Revoke ${s.id}`, () => revoke(s), 'danger')
            : 'Its only secret: add one first',
        ),
      ),
    );
    replaceChildren(
      list,
      h(
        'table',
        {},
        h('caption', {}, `Working secrets of “${client.name}”`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Secret ID', 'Created', 'Expires', 'Last used', 'Actions'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    );
  };

  const revoke = (s: ApiClientSecretView): Promise<void> =>
    confirmDelete({
      title: `Revoke secret ${s.id}?`,
      consequence:
        'It stops working at once: the next token request with it is refused. Tokens already issued keep working until they expire.',
      confirmLabel: 'Revoke secret',
      path: `${base}/secrets/${encodeURIComponent(s.id)}`,
      deleted: `Revoked ${s.id}.`,
      status,
      reload,
    });

  const addSecret = createForm({
    submitLabel: 'Add a second secret',
    fields: [
      {
        name: 'overlap',
        label: 'The secrets in use keep working for',
        type: 'select',
        value: OVERLAPS[0]!.value,
        options: OVERLAPS,
        hint: 'Move your systems to the new secret within this time, then revoke the old one.',
      },
    ],
    onSubmit: async (values) => {
      const rotated = await api<RotatedClientSecretView>('POST', `${base}/secrets`, {
        old_expires_in_seconds: Number(values.overlap),
      });
      showSecretOnce(secretSlot, {
        title: `New secret for “${client.name}”: copy it now`,
        usage: `The secrets it had work until ${formatTime(rotated.old_secret_expires_at)}, or until you revoke them.`,
        secret: rotated.client_secret,
        testId: 'rotated-secret',
      });
      await reload();
    },
  });

  const { quotas } = client;
  const perMinute = (value: string | string[]) => {
    const text = String(value).trim();
    return text === '' || /^[1-9]\d{0,6}$/.test(text)
      ? undefined
      : 'A whole number from 1, or empty for the default.';
  };
  const quotaForm = createForm({
    submitLabel: 'Save quotas',
    codeFields: { invalid_quota: 'tokens_per_minute' },
    fields: [
      {
        name: 'tokens_per_minute',
        label: 'Token requests per minute',
        value: quotas.tokens_per_minute?.toString() ?? '',
        placeholder: 'default',
        hint: 'Empty: the deployment’s default.',
        validate: perMinute,
      },
      {
        name: 'api_calls_per_minute',
        label: 'API calls per minute',
        value: quotas.api_calls_per_minute?.toString() ?? '',
        placeholder: 'default',
        hint: 'Empty: the deployment’s default.',
        validate: perMinute,
      },
    ],
    onSubmit: async (values) => {
      const number = (v: string | string[]) => (String(v).trim() === '' ? null : Number(v));
      const saved = await api<ApiClientQuotasAnswer>('PUT', `${base}/quotas`, {
        tokens_per_minute: number(values.tokens_per_minute!),
        api_calls_per_minute: number(values.api_calls_per_minute!),
      });
      // The client is the table's row: opening its Secrets again shows what was saved, not what it had before.
      client.quotas = saved.quotas;
      status.say('success', `Saved the quotas of “${client.name}”.`);
    },
  });

  const secretsPart =
    client.auth_method === 'private_key_jwt'
      ? [h('p', {}, 'This client signs assertions with its private key (private_key_jwt): it has no secret.')]
      : [secretSlot, list, addSecret.el];
  replaceChildren(
    slot,
    titledSection(
      'client-secrets',
      `Secrets and quotas of “${client.name}”`,
      ...secretsPart,
      h('h3', {}, 'Quotas'),
      quotaForm.el,
    ),
  );
  if (client.auth_method !== 'private_key_jwt') await reload();
  slot.scrollIntoView?.({ block: 'start' });
}
