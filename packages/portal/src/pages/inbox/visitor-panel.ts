import type { Csat } from '@parley/webchat-protocol';
import type { VisitorPanelView } from '@parley/wire-types';
import { formatTime, h } from '../../dom.ts';
import { type ConversationView, conversationPath, initialsOf } from './model.ts';

/**
 * The panel beside the conversation, from the workspace API's visitor panel (docs/design.md "Agent workspace"):
 * identity or anonymous, what the integrator sends as attributes, the channel and page, earlier conversations and
 * shared files. `onOpen` opens a previous conversation in place.
 */
export function visitorPanel(
  c: ConversationView,
  v: VisitorPanelView,
  onOpen: (id: string) => void,
): HTMLElement {
  const { sub, anonymous } = v;
  const name = v.name ?? v.email ?? (anonymous ? 'Anonymous visitor' : sub);
  return h(
    'aside',
    { class: 'visitor-panel', 'aria-label': 'Visitor' },
    h(
      'div',
      { class: 'visitor-head' },
      h('span', { class: 'avatar large', 'aria-hidden': 'true' }, anonymous ? '?' : initialsOf(name)),
      h(
        'div',
        {},
        h('h2', {}, name ?? 'Visitor'),
        h('p', { class: 'muted' }, anonymous ? 'Anonymous (not verified)' : 'Verified visitor'),
      ),
    ),
    h(
      'dl',
      { class: 'pairs visitor-details' },
      ...pair('Email', v.email ? h('a', { href: `mailto:${v.email}` }, v.email) : null),
      ...pair('User id', sub ? h('code', {}, sub) : null),
      ...pair('Channel', v.channel?.name ?? null),
      ...pair('Page', v.page_url ? h('span', { class: 'page-url' }, v.page_url) : null),
      ...pair('Started', formatTime(c.created_at)),
      ...pair('Session', h('code', {}, c.session_id.slice(0, 8))),
      ...pair('Satisfaction', csatText(c)),
    ),
    attributesSection(v.attributes),
    previousSection(v.previous_conversations, onOpen),
    filesSection(v.files),
  );
}

function pair(label: string, value: Node | string | null): HTMLElement[] {
  if (value === null || value === '') return [];
  return [h('dt', {}, label), h('dd', {}, value)];
}

function csatText(c: ConversationView): string | null {
  const csat = c.csat as Csat | null | undefined;
  if (!csat) return null;
  return `${csat.score}/5${csat.comment ? ` — “${csat.comment}”` : ''}`;
}

function attributesSection(attributes: VisitorPanelView['attributes']): HTMLElement | null {
  const entries = Object.entries(attributes ?? {});
  if (entries.length === 0) return null;
  return h(
    'section',
    { class: 'visitor-attributes', 'aria-label': 'Attributes' },
    h('h3', {}, 'Attributes'),
    h('dl', { class: 'pairs' }, ...entries.flatMap(([k, value]) => pair(k, String(value)))),
  );
}

function previousSection(
  previous: VisitorPanelView['previous_conversations'],
  onOpen: (id: string) => void,
): HTMLElement | null {
  if (!previous?.length) return null;
  return h(
    'section',
    { 'aria-label': 'Previous conversations' },
    h('h3', {}, 'Previous conversations'),
    h(
      'ul',
      { class: 'plain-list' },
      ...previous.map((p) => {
        const link = h('a', { href: conversationPath(p.id) }, `${formatTime(p.created_at)} · ${p.status}`);
        link.addEventListener('click', (event) => {
          event.preventDefault();
          onOpen(p.id);
        });
        return h(
          'li',
          {},
          link,
          p.last_message_preview ? h('span', { class: 'muted preview' }, p.last_message_preview) : null,
        );
      }),
    ),
  );
}

function filesSection(files: VisitorPanelView['files']): HTMLElement | null {
  if (!files?.length) return null;
  return h(
    'section',
    { 'aria-label': 'Shared files' },
    h('h3', {}, 'Shared files'),
    h(
      'ul',
      { class: 'plain-list' },
      ...files.map((f) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: f.url, target: '_blank', rel: 'noopener noreferrer', download: f.name },
            `📎 ${f.name}`,
          ),
          h('span', { class: 'muted' }, ` ${Math.max(1, Math.round(f.size / 1024))} KB`),
        ),
      ),
    ),
  );
}
