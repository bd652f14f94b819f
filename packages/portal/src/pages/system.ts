import type { RecentErrorView, SystemNodeView, SystemSnapshot } from '@parley/wire-types';
import { ApiError, api } from '../api.ts';
import { pageIntro, titledSection } from '../components/page-parts.ts';
import { notice } from '../components/widgets.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

/** How often the page asks again while it is shown (nodes announce themselves every few seconds). */
const REFRESH_MS = 3_000;

/**
 * Settings → System: the cluster's nodes with their connections and subscriptions, the company's replies in flight,
 * and the recent warnings and errors of the node that answered — refreshed every few seconds while the page is
 * open and the tab visible.
 */
export async function renderSystem(main: HTMLElement): Promise<void> {
  const totals = h('dl', { class: 'pairs', 'aria-label': 'Totals' });
  const nodesBody = h('tbody');
  const errorsBody = h('tbody');
  const updated = h('p', { class: 'muted', 'aria-live': 'off' });
  const problem = h('div', { 'aria-live': 'polite' });
  main.append(
    ...pageIntro('System', 'What the Parley cluster is doing now. Refreshed every few seconds.'),
    problem,
    totals,
    titledSection(
      'system-nodes',
      'Nodes',
      h(
        'table',
        { class: 'data' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Node', 'Connections', 'Users', 'Subscriptions', 'Channels', 'Up for', 'Version'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        nodesBody,
      ),
    ),
    titledSection(
      'system-errors',
      'Your recent warnings and errors (this node)',
      h(
        'table',
        { class: 'data' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Time', 'Level', 'Message', 'Code', 'Request'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        errorsBody,
      ),
    ),
    updated,
  );

  const show = (s: SystemSnapshot) => {
    replaceChildren(
      totals,
      ...pair('Nodes', s.totals.nodes),
      ...pair('Connections', s.totals.clients),
      ...pair('Subscriptions', s.totals.subscriptions),
      ...pair('Replies streaming', s.replies.streaming),
      ...pair('Messages waiting for a reply', s.replies.queued),
      ...pair('Webhook deliveries pending', s.webhooks.pending),
      ...pair('Webhook endpoints failing', s.webhooks.failing_endpoints),
      ...pair('Webhook endpoints disabled', s.webhooks.disabled_endpoints),
    );
    replaceChildren(nodesBody, ...s.nodes.map(nodeRow));
    replaceChildren(
      errorsBody,
      ...(s.recent_errors.length
        ? s.recent_errors.map(errorRow)
        : [
            h(
              'tr',
              {},
              h(
                'td',
                { colspan: 5, class: 'muted' },
                'Nothing of your company logged above info since this node started.',
              ),
            ),
          ]),
    );
    updated.textContent = `Updated ${formatTime(s.generated_at)}`;
    main.dataset.generatedAt = s.generated_at;
  };

  const refresh = async () => {
    try {
      show(await api<SystemSnapshot>('GET', '/system'));
      replaceChildren(problem);
    } catch (err) {
      replaceChildren(
        problem,
        notice('error', err instanceof ApiError ? err.message : 'The system view could not be loaded.'),
      );
    }
  };
  await refresh();
  const timer = setInterval(() => {
    if (!main.isConnected) return clearInterval(timer);
    if (document.visibilityState === 'visible') void refresh();
  }, REFRESH_MS);
}

const pair = (label: string, value: number) => [h('dt', {}, label), h('dd', {}, String(value))];

function nodeRow(n: SystemNodeView): HTMLElement {
  return h(
    'tr',
    { 'data-node': n.id },
    h('th', { scope: 'row' }, n.name, n.this_node ? h('span', { class: 'muted' }, ' (this node)') : null),
    h('td', {}, String(n.clients)),
    h('td', {}, String(n.users)),
    h('td', {}, String(n.subscriptions)),
    h('td', {}, String(n.channels)),
    h('td', {}, duration(n.uptime_seconds)),
    h('td', {}, n.version),
  );
}

function errorRow(e: RecentErrorView): HTMLElement {
  return h(
    'tr',
    { class: `level-${e.level}` },
    h('td', {}, formatTime(e.at)),
    h('td', {}, e.level),
    h('td', {}, e.module ? `${e.module}: ${e.message}` : e.message),
    h('td', {}, e.code ?? ''),
    h('td', {}, e.request_id ?? ''),
  );
}

/** "3 d 4 h", "2 h 5 min", "42 s": the two largest units. */
function duration(seconds: number): string {
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || (unit === 's' && parts.length === 0)) parts.push(`${n} ${unit}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}
