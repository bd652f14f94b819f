import type { AgentList, AgentView } from '@parley/wire-types';
import { api } from '../../api.ts';
import { h, replaceChildren } from '../../dom.ts';

/**
 * The agent's own availability (round-robin assigns only to available agents, docs/routing.md) and, for admins,
 * everyone's availability and load. `refresh` re-reads the agents (the inbox calls it when assignments change).
 */
export function routingPanel(me: { id: string; role: 'admin' | 'agent' }): {
  el: HTMLElement;
  refresh: () => Promise<void>;
} {
  const toggle = h('button', { type: 'button', class: 'secondary availability', 'aria-pressed': 'false' });
  const team = h('ul', { class: 'agents', 'aria-label': 'Agents', hidden: me.role !== 'admin' });
  const show = (mine: AgentView | undefined) => {
    const available = mine?.availability === 'available';
    toggle.setAttribute('aria-pressed', String(available));
    toggle.textContent = available ? 'Available — click to go away' : 'Away — click to become available';
    toggle.dataset.availability = available ? 'available' : 'away';
  };
  const refresh = async () => {
    const { agents } = await api<AgentList>('GET', '/inbox/agents');
    show(agents.find((a) => a.id === me.id));
    if (me.role !== 'admin') return;
    replaceChildren(
      team,
      ...agents.map((a) =>
        h(
          'li',
          { 'data-agent': a.name },
          h('span', { class: `dot ${a.availability}`, 'aria-hidden': 'true' }),
          `${a.name} — ${a.availability}, ${a.open_conversations} open`,
        ),
      ),
    );
  };
  toggle.addEventListener('click', async () => {
    const next = toggle.dataset.availability === 'available' ? 'away' : 'available';
    show(await api<AgentView>('PUT', '/inbox/availability', { availability: next }));
    void refresh();
  });
  return { el: h('div', { class: 'routing-panel' }, toggle, team), refresh };
}
