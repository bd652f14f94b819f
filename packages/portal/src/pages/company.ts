import type { AttachmentLimitsView, CompanyView } from '@parley/wire-types';
import { api } from '../api.ts';
import { createForm, splitList } from '../components/form.ts';
import { statusArea, titledSection } from '../components/page-parts.ts';
import { copyable } from '../components/widgets.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';
import { privacySection } from './company-privacy.ts';
import { cannedResponsesSection, routingSection } from './company-routing.ts';

const MIB = 1024 * 1024;

/** The types attachments may have (docs/design.md "Attachments"); SVG is off unless a company turns it on. */
const ATTACHMENT_TYPE_OPTIONS = [
  { value: 'image/png', label: 'PNG images' },
  { value: 'image/jpeg', label: 'JPEG images' },
  { value: 'image/gif', label: 'GIF images' },
  { value: 'image/webp', label: 'WebP images' },
  { value: 'application/pdf', label: 'PDF documents' },
  { value: 'text/plain', label: 'Plain text' },
  { value: 'image/svg+xml', label: 'SVG images (always downloaded, never shown inline)' },
];

/** Settings → Company → Attachments: the largest file and the types visitors and agents may send. */
function attachmentLimitsForm(limits: AttachmentLimitsView, say: (text: string) => void) {
  return createForm({
    submitLabel: 'Save attachment limits',
    fields: [
      {
        name: 'max_attachment_mib',
        label: 'Largest attachment (MiB)',
        value: String(Math.round((limits.max_attachment_bytes / MIB) * 100) / 100),
        required: true,
        validate: (value) =>
          /^\d+(\.\d+)?$/.test(String(value)) && Number(value) > 0 && Number(value) <= 1024
            ? undefined
            : 'Enter a size from 0.01 to 1024 MiB.',
      },
      {
        name: 'allowed_types',
        label: 'Allowed file types',
        type: 'checkboxes',
        options: ATTACHMENT_TYPE_OPTIONS,
        values: limits.allowed_types,
        hint: 'The type is checked on the file’s bytes, whatever its name or declared type says.',
      },
    ],
    onSubmit: async (values) => {
      await api<CompanyView>('PUT', '/company/attachments', {
        max_attachment_bytes: Math.round(Number(values.max_attachment_mib) * MIB),
        allowed_types: values.allowed_types as string[],
      });
      say('Attachment limits saved.');
    },
  });
}

/**
 * Settings → Company: the id integrators send as `X-Company`, the origins allowed to embed the widget, the
 * attachment limits, routing and business hours, and the canned responses.
 */
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
    titledSection(
      'attachments-title',
      'Attachments',
      attachmentLimitsForm(company.attachments, (text) => status.say('success', text)).el,
    ),
    await routingSection((text) => status.say('success', text)),
    await cannedResponsesSection((text) => status.say('success', text)),
    await privacySection((kind, text) => status.say(kind, text)),
  );
}
