import { api } from '../api.ts';
import { createForm, splitList } from '../components/form.ts';
import { statusArea, titledSection } from '../components/page-parts.ts';
import { copyable } from '../components/widgets.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

interface CompanyView {
  id: string;
  name: string;
  allowed_origins: string[];
  created_at: string;
}

/** Settings → Company: the id integrators send as `X-Company`, and the origins allowed to embed the widget. */
export async function renderCompany(main: HTMLElement): Promise<void> {
  const company = await api<CompanyView>('GET', '/company');
  const status = statusArea();
  const current = h('ul', { class: 'tags', 'aria-label': 'Current allowed origins' });
  const showOrigins = (origins: string[]) =>
    replaceChildren(
      current,
      ...(origins.length ? origins.map((o) => h('li', {}, o)) : [h('li', { class: 'muted' }, 'none')]),
    );
  showOrigins(company.allowed_origins);

  const form = createForm({
    submitLabel: 'Save allowed origins',
    codeFields: { invalid_origin: 'allowed_origins' },
    fields: [
      {
        name: 'allowed_origins',
        label: 'Allowed origins',
        type: 'textarea',
        value: company.allowed_origins.join('\n'),
        hint: 'One origin per line, e.g. https://shop.example — websites that may embed the chat widget. Channels can narrow this.',
      },
    ],
    onSubmit: async (values) => {
      const saved = await api<CompanyView>('PUT', '/company/allowed-origins', {
        allowed_origins: splitList(values.allowed_origins!),
      });
      showOrigins(saved.allowed_origins);
      status.say('success', 'Allowed origins saved.');
    },
  });

  main.append(
    h('h1', {}, 'Company'),
    h(
      'dl',
      { class: 'pairs' },
      h('dt', {}, 'Name'),
      h('dd', {}, company.name),
      h('dt', {}, 'Company ID'),
      h(
        'dd',
        {},
        copyable(company.id, 'Copy company ID'),
        h(
          'p',
          { class: 'hint' },
          'Send it as the X-Company header on webchat SDK calls, and as data-company on the widget.',
        ),
      ),
      h('dt', {}, 'Created'),
      h('dd', {}, formatTime(company.created_at)),
      h('dt', {}, 'Allowed origins'),
      h('dd', {}, current),
    ),
    status.el,
    titledSection('origins-title', 'Edit allowed origins', form.el),
  );
}
