import type { ActionCallNote } from '@parley/webchat-protocol';
import { type Child, h } from '../../dom.ts';

/** How each outcome of an action call reads for an agent (docs/design.md "Actions"). */
const OUTCOME_LABELS: Record<string, string> = {
  ok: 'Succeeded',
  http_error: 'HTTP error',
  invalid_arguments: 'Invalid arguments',
  timeout: 'Timed out',
  failed: 'Failed',
  too_large: 'Response too large',
};

/** Most fields a card lists before it says how many more there are. */
const MAX_FIELDS = 8;

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** One value as a short line: strings as they are, anything else as compact JSON. */
const valueText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** An object's fields as name/value pairs, the first few of them. */
function fields(entries: Array<[string, unknown]>): HTMLElement {
  const shown = entries.slice(0, MAX_FIELDS);
  return h(
    'dl',
    { class: 'action-fields' },
    ...shown.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, valueText(v))]),
    entries.length > shown.length
      ? h('dd', { class: 'muted more' }, `and ${entries.length - shown.length} more`)
      : null,
  );
}

/**
 * Arguments or a result as an agent reads them: an object's fields as name/value pairs, a failure's `error`
 * (packages/server/src/digital-employees/actions/action-runner.ts) as its message above the other fields, anything
 * else (an excerpt, an array, text) as preformatted text.
 */
function payload(text: string): HTMLElement {
  const value = parseJson(text);
  if (!isPlainObject(value))
    return h('pre', { class: 'action-raw' }, value === undefined ? text : JSON.stringify(value, null, 2));
  const { error, ...rest } = value;
  const entries = Object.entries(typeof error === 'string' ? rest : value);
  return h(
    'div',
    {},
    typeof error === 'string' ? h('p', { class: 'action-error' }, error) : null,
    entries.length > 0
      ? fields(entries)
      : typeof error === 'string'
        ? null
        : h('span', { class: 'muted' }, 'none'),
  );
}

/**
 * An action call of a digital employee in the agent's transcript (the note the server writes for it, read with
 * packages/webchat-protocol/src/action-call-note.ts): which action, how it ended, the arguments and the result as
 * name/value pairs, marked as a private note (visitors never see it).
 */
export function actionCallCard(call: ActionCallNote, meta: { id: string; who: Child[] }): HTMLElement {
  const ok = call.outcome === 'ok';
  const how = [
    OUTCOME_LABELS[call.outcome] ?? call.outcome,
    call.status !== null ? `HTTP ${call.status}` : null,
    `${call.durationMs} ms`,
  ]
    .filter(Boolean)
    .join(' · ');
  return h(
    'li',
    {
      class: 'message note action-call',
      'data-id': meta.id,
      'data-outcome': call.outcome,
    },
    h('span', { class: 'who' }, ...meta.who),
    h(
      'div',
      { class: 'action-head' },
      h('span', { class: 'action-kind' }, call.action === 'handover' ? 'Hand-over' : 'Action'),
      h('code', { class: 'action-name' }, call.action),
      h('span', { class: `badge action-outcome ${ok ? 'ok' : 'failed'}` }, how),
    ),
    h(
      'div',
      { class: 'action-body' },
      h(
        'div',
        { class: 'action-part' },
        h('span', { class: 'action-label' }, 'Arguments'),
        payload(call.arguments),
      ),
      h(
        'div',
        { class: 'action-part' },
        h('span', { class: 'action-label' }, 'Result'),
        payload(call.result),
      ),
    ),
  );
}
