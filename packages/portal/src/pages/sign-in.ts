import { api, type SessionInfo } from '../api.ts';
import { createForm } from '../components/form.ts';
import { h } from '../dom.ts';

/** The sign-in page: email and password; the server answers with the session (cookie) and its CSRF token. */
export function renderSignIn(
  root: HTMLElement,
  onSignedIn: (session: SessionInfo) => void,
  reason?: string,
): void {
  const form = createForm({
    submitLabel: 'Sign in',
    fields: [
      {
        name: 'email',
        label: 'Email',
        type: 'email',
        required: true,
        autocomplete: 'username',
        maxLength: 254,
      },
      {
        name: 'password',
        label: 'Password',
        type: 'password',
        required: true,
        autocomplete: 'current-password',
        maxLength: 256,
      },
    ],
    onSubmit: async (values) => {
      const session = await api<SessionInfo>('POST', '/session', {
        email: values.email,
        password: values.password,
      });
      onSignedIn(session);
    },
  });
  root.replaceChildren(
    h(
      'main',
      { class: 'sign-in', id: 'main' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'sign-in-title' },
        h('p', { class: 'brand' }, 'Parley'),
        h('h1', { id: 'sign-in-title' }, 'Sign in to the portal'),
        reason ? h('p', { class: 'notice info', role: 'status' }, reason) : null,
        form.el,
        h(
          'p',
          { class: 'hint' },
          'Accounts are created by an administrator with ',
          h('code', {}, 'npx parley users create'),
          '.',
        ),
      ),
    ),
  );
  (form.el.querySelector('input') as HTMLInputElement | null)?.focus();
}
