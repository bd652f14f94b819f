import { h } from '../dom.ts';

export function renderForbidden(main: HTMLElement): void {
  main.append(
    h('h1', {}, 'Not available'),
    h(
      'p',
      { class: 'notice error', role: 'alert' },
      'Your role does not allow this page. Settings are for company admins.',
    ),
  );
}

export function renderAgentHome(main: HTMLElement): void {
  main.append(
    h('h1', {}, 'Welcome'),
    h('p', {}, 'You are signed in as an agent. Settings pages are for company admins.'),
  );
}
