import type { ErasureReceiptView, RetentionSettingsView } from '@parley/wire-types';
import { api } from '../api.ts';
import { createForm } from '../components/form.ts';
import { titledSection } from '../components/page-parts.ts';
import { confirmDialog } from '../components/widgets.ts';

const RETENTION_FIELDS: Array<{ name: keyof RetentionSettingsView; label: string; hint: string }> = [
  {
    name: 'resolved_conversation_days',
    label: 'Delete resolved conversations after (days)',
    hint: 'With their messages, files, feedback and webhook data. Empty keeps them.',
  },
  {
    name: 'delivered_webhook_days',
    label: 'Delete delivered webhook events after (days)',
    hint: 'Empty keeps them for the delivery log (30 days).',
  },
  { name: 'audit_days', label: 'Delete audit entries after (days)', hint: 'Empty keeps them.' },
];

const SELECTOR_FIELD = {
  name: 'selector',
  label: 'Select by',
  type: 'select' as const,
  value: 'visitor_sub',
  options: [
    { value: 'visitor_sub', label: 'Visitor user id (sub)' },
    { value: 'conversation_id', label: 'Conversation id' },
    { value: 'session_id', label: 'Session id' },
  ],
};

/** Hands `document` to the browser as a file download (an object URL on a transient link, revoked after). */
function saveJson(document_: unknown, filename: string): void {
  const url = URL.createObjectURL(
    new Blob([JSON.stringify(document_, null, 2)], { type: 'application/json' }),
  );
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

const daysOf = (value: string | string[]): number | null =>
  String(value).trim() === '' ? null : Number(value);

/**
 * Settings → Company → Privacy (docs/privacy.md): the retention periods, the export of one visitor's data as a JSON
 * file, and erasure of one visitor's data — by their user id (`sub`), a conversation or a session — after a
 * confirmation, since it cannot be undone.
 */
export async function privacySection(
  say: (kind: 'success' | 'error', text: string) => void,
): Promise<HTMLElement> {
  const settings = await api<RetentionSettingsView>('GET', '/company/retention');
  const retention = createForm({
    submitLabel: 'Save retention',
    fields: RETENTION_FIELDS.map((field) => ({
      ...field,
      value: settings[field.name] === null ? '' : String(settings[field.name]),
      validate: (value) =>
        String(value).trim() === '' || (/^\d{1,5}$/.test(String(value)) && Number(value) >= 1)
          ? undefined
          : 'Enter a whole number of days from 1, or leave it empty to keep.',
    })),
    onSubmit: async (values) => {
      await api<RetentionSettingsView>('PUT', '/company/retention', {
        resolved_conversation_days: daysOf(values.resolved_conversation_days!),
        delivered_webhook_days: daysOf(values.delivered_webhook_days!),
        audit_days: daysOf(values.audit_days!),
      });
      say('success', 'Retention saved.');
    },
  });
  const erase = createForm({
    submitLabel: 'Erase…',
    resetOnSuccess: true,
    fields: [
      { ...SELECTOR_FIELD, label: 'Erase by' },
      { name: 'value', label: 'Value', required: true, maxLength: 200 },
    ],
    onSubmit: async (values) => {
      const key = String(values.selector);
      const confirmed = await confirmDialog(
        'Erase this visitor’s data?',
        'Their conversations, messages, files, feedback and pending webhook deliveries are deleted on every node and cannot be recovered; live chats are disconnected. Only a receipt with counts is kept.',
        'Erase',
      );
      if (!confirmed) return;
      const receipt = await api<ErasureReceiptView>('POST', '/privacy/erasures', {
        [key]: String(values.value).trim(),
      });
      say(
        'success',
        `Erased ${receipt.erased.conversations} conversation(s), ${receipt.erased.messages} message(s), ${receipt.erased.attachments} file(s). Receipt ${receipt.id}.`,
      );
    },
  });
  const exporter = createForm({
    submitLabel: 'Download export',
    fields: [
      { ...SELECTOR_FIELD, label: 'Export by' },
      { name: 'value', label: 'Value', required: true, maxLength: 200 },
    ],
    onSubmit: async (values) => {
      const key = String(values.selector);
      // The document a visitor may be handed (docs/privacy.md "Export"); attachment urls in it are signed for 1 h.
      const exported = await api<{ conversations: unknown[] }>('POST', '/privacy/exports', {
        [key]: String(values.value).trim(),
      });
      saveJson(exported, `visitor-export-${new Date().toISOString().slice(0, 10)}.json`);
      say('success', `Exported ${exported.conversations.length} conversation(s).`);
    },
  });
  const section = document.createElement('div');
  section.append(
    titledSection('retention-title', 'Retention', retention.el),
    titledSection('export-title', 'Export a visitor’s data', exporter.el),
    titledSection('erase-title', 'Erase a visitor', erase.el),
  );
  return section;
}
