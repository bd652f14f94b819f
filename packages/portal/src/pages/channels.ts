import type { ChannelIdentityView, ChannelListing, ChannelView, IdentityMode } from '@parley/wire-types';
import { api, pageQuery } from '../api.ts';
import { createForm, splitList } from '../components/form.ts';
import { pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { pagedTable } from '../components/paged-table.ts';
import { showSecretOnce } from '../components/secret-once.ts';
import { copyable, copyButton, formDialog } from '../components/widgets.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

const IDENTITY_LABELS: Record<IdentityMode, string> = {
  off: 'Off — every visitor is anonymous',
  optional: 'Optional — verified when a visitor token is sent',
  required: 'Required — only verified visitors',
};

/** Settings → Channels: one per widget or app placement, each with its ready-to-paste widget snippet. */
export async function renderChannels(main: HTMLElement): Promise<void> {
  const first = await api<ChannelListing>('GET', `/channels?${pageQuery(0, 1)}`);
  const status = statusArea();
  const snippetSlot = h('div');
  const secretSlot = h('div', { class: 'secret-slot' });

  const showSnippet = (c: ChannelView) => {
    const title = `snippet-${c.id}`;
    const box = h(
      'section',
      { class: 'notice info', 'aria-labelledby': title, tabindex: '-1' },
      h('h2', { id: title }, `Widget snippet for “${c.name}”`),
      h(
        'p',
        {},
        'Paste this before the closing ',
        h('code', {}, '</body>'),
        ' tag of each page that should show the chat. The page’s origin must be in the channel’s (or the company’s) allowed origins.',
      ),
      h('pre', { class: 'snippet', 'data-testid': 'widget-snippet' }, c.snippet),
      h('div', { class: 'actions' }, copyButton(c.snippet, 'Copy snippet')),
    );
    replaceChildren(snippetSlot, box);
    box.focus();
  };

  const table = pagedTable<ChannelView>({
    caption: 'Channels',
    empty: 'No channels yet.',
    load: (offset, limit) => api('GET', `/channels?${pageQuery(offset, limit)}`),
    columns: [
      { header: 'Name', cell: (c) => c.name },
      { header: 'Channel ID', cell: (c) => copyable(c.id, 'Copy ID') },
      { header: 'Digital employee', cell: (c) => c.digital_employee.name ?? c.digital_employee.id },
      {
        header: 'Allowed origins',
        cell: (c) =>
          c.allowed_origins.length
            ? h('ul', { class: 'tags' }, ...c.allowed_origins.map((o) => h('li', {}, o)))
            : 'Company’s',
      },
      { header: 'Created', cell: (c) => formatTime(c.created_at) },
      {
        header: 'Visitor identity',
        cell: (c) =>
          h(
            'div',
            { class: 'actions' },
            h('span', { class: `badge identity-${c.identity}` }, c.identity),
            rowButton('Change', `Change visitor identity of ${c.name}`, () => editIdentity(c)),
          ),
      },
      {
        header: 'Widget',
        cell: (c) => rowButton('Show snippet', `Show snippet for ${c.name}`, () => showSnippet(c)),
      },
    ],
  });

  // Visitor identity: the mode, and a rotation; a secret in the answer is shown once (like an API client's).
  const editIdentity = (c: ChannelView) =>
    formDialog(
      `Visitor identity of “${c.name}”`,
      'Verified visitors see their conversations on every device and agents see their name and email. Your backend signs a visitor token (a JWT, HS256 with this channel’s identity secret: sub = your user id, exp at most 24 hours ahead, optional name and email); the widget sends it (data-visitor-token or Parley.init({ getVisitorToken })).',
      (close) =>
        createForm({
          submitLabel: 'Save',
          fields: [
            {
              name: 'mode',
              label: 'Identity',
              type: 'select',
              required: true,
              value: c.identity,
              options: (Object.keys(IDENTITY_LABELS) as IdentityMode[]).map((m) => ({
                value: m,
                label: IDENTITY_LABELS[m],
              })),
            },
            {
              name: 'rotate_secret',
              label: c.identity_secret_set ? 'Rotate the identity secret' : 'Create the identity secret now',
              type: 'checkbox',
              hint: c.identity_secret_set
                ? 'The current secret keeps verifying tokens for 24 hours, so your backend can switch over.'
                : 'Turning identity on creates it anyway.',
            },
          ],
          onSubmit: async (values) => {
            const result = await api<ChannelIdentityView>('PUT', `/channels/${c.id}/identity`, {
              mode: values.mode,
              rotate_secret: values.rotate_secret === 'true',
            });
            close();
            if (result.identity_secret)
              showSecretOnce(secretSlot, {
                title: `Identity secret for “${c.name}”: copy it now`,
                usage:
                  'Store it in your backend, which signs visitor tokens with it (HS256). If you lose it, rotate it.',
                secret: result.identity_secret,
                testId: 'identity-secret',
              });
            else status.say('success', `Visitor identity of “${c.name}” is ${result.identity}.`);
            await table.reload();
          },
        }).el,
    );

  const form = createForm({
    submitLabel: 'Create channel',
    resetOnSuccess: true,
    codeFields: {
      invalid_name: 'name',
      invalid_origin: 'allowed_origins',
      digital_employee_not_found: 'digital_employee_id',
    },
    fields: [
      {
        name: 'name',
        label: 'Name',
        required: true,
        maxLength: 200,
        hint: 'Where the chat appears, e.g. “Web shop” or “Help center”.',
      },
      {
        name: 'digital_employee_id',
        label: 'Digital employee',
        type: 'select',
        required: true,
        value: first.digital_employees.find((e) => e.is_default)?.id,
        options: first.digital_employees.map((e) => ({
          value: e.id,
          label: e.is_default ? `${e.name} (default)` : e.name,
        })),
        hint: 'Who answers visitors of this channel.',
      },
      {
        name: 'allowed_origins',
        label: 'Allowed origins',
        type: 'textarea',
        hint: 'One per line, e.g. https://shop.example. Empty: the company’s allowed origins apply.',
      },
    ],
    onSubmit: async (values) => {
      const created = await api<ChannelView>('POST', '/channels', {
        name: values.name,
        digital_employee_id: values.digital_employee_id,
        allowed_origins: splitList(values.allowed_origins!),
      });
      status.say('success', `Created channel “${created.name}”.`);
      await table.reload();
      showSnippet(created);
    },
  });

  main.append(
    ...pageIntro(
      'Channels',
      'A channel is one place the chat widget or your app appears. Conversations started on a channel go to its digital employee.',
    ),
    status.el,
    secretSlot,
    snippetSlot,
    titledSection('channel-list', 'Your channels', table.el),
    titledSection('create-channel', 'New channel', form.el),
  );
  await table.reload();
}
