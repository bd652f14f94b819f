import type { PortalUserList, PortalUserView } from '@parley/wire-types';
import { api, type SessionInfo } from '../api.ts';
import { createForm } from '../components/form.ts';
import { pageIntro, statusArea, titledSection } from '../components/page-parts.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';
import { nameField, saveName, shownName } from './display-name.ts';

/**
 * Settings → Users: the company's portal users and the names visitors see on their messages. Admins give anyone a
 * display name here; everyone can set their own on their profile page. Users are created with `parley users create`.
 */
export async function renderUsers(main: HTMLElement, session: SessionInfo): Promise<void> {
  const status = statusArea();
  const rows = h('tbody');
  const table = h(
    'table',
    {},
    h('caption', { class: 'visually-hidden' }, 'Portal users'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Display name', 'Email', 'Role', 'Last sign-in'].map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    rows,
  );
  const formSlot = h('div');

  const show = (users: PortalUserView[]) => {
    replaceChildren(
      rows,
      ...users.map((u) =>
        h(
          'tr',
          { 'data-user': u.id },
          h('td', {}, u.name ?? h('span', { class: 'muted' }, `${shownName(u)} (from the email)`)),
          h('td', {}, u.email),
          h('td', {}, u.role),
          h('td', {}, formatTime(u.last_login_at)),
        ),
      ),
    );
    const form = createForm({
      submitLabel: 'Save display name',
      codeFields: { invalid_name: 'name' },
      fields: [
        {
          name: 'user',
          label: 'User',
          type: 'select',
          required: true,
          value: session.user.id,
          options: users.map((u) => ({ value: u.id, label: `${shownName(u)} — ${u.email}` })),
        },
        nameField(null),
      ],
      onSubmit: async (values) => {
        const saved = await saveName(String(values.user), String(values.name), session);
        status.say('success', `${saved.email} is now shown as “${shownName(saved)}”.`);
        await load();
      },
    });
    replaceChildren(formSlot, form.el);
  };
  const load = async () => show((await api<PortalUserList>('GET', '/users')).users);

  main.append(
    ...pageIntro(
      'Users',
      'The people who sign in to this company’s portal, and the names visitors see on their messages. New users are created with ',
      h('code', {}, 'npx parley users create'),
      '.',
    ),
    status.el,
    titledSection('users-list', 'Portal users', h('div', { class: 'table-wrap' }, table)),
    titledSection('users-name', 'Give a display name', formSlot),
  );
  await load();
}
