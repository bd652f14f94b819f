import type { SessionInfo } from '../api.ts';
import { createForm } from '../components/form.ts';
import { pageIntro, statusArea, titledSection } from '../components/page-parts.ts';
import { h } from '../dom.ts';
import { nameField, saveName, shownName } from './display-name.ts';

/** Your profile (every role): who you are signed in as, and the display name visitors see on your messages. */
export function renderProfile(main: HTMLElement, session: SessionInfo): void {
  const status = statusArea();
  const form = createForm({
    submitLabel: 'Save display name',
    codeFields: { invalid_name: 'name' },
    fields: [nameField(session.user.name)],
    onSubmit: async (values) => {
      const saved = await saveName(session.user.id, String(values.name), session);
      status.say('success', `Visitors now see you as “${shownName(saved)}”.`);
    },
  });
  main.append(
    ...pageIntro('Your profile', 'How visitors and colleagues see you in conversations.'),
    h(
      'dl',
      { class: 'pairs' },
      h('dt', {}, 'Email'),
      h('dd', {}, session.user.email),
      h('dt', {}, 'Role'),
      h('dd', {}, session.user.role),
      h('dt', {}, 'Company'),
      h('dd', {}, session.company.name),
    ),
    status.el,
    titledSection('profile-name', 'How visitors see you', form.el),
  );
}
