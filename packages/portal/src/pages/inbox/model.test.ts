import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  belongs,
  type ConversationView,
  conversationIdFromPath,
  conversationPath,
  firstUnreadIndex,
  handlerLabel,
  initialsOf,
  type ListFilter,
  labelNames,
  listQuery,
  listTime,
  snoozeChoices,
  sortForList,
  unreadOf,
} from './model.ts';

const conv = (over: Partial<ConversationView>): ConversationView =>
  ({
    id: 'c1',
    status: 'open',
    handled_by: 'digital_employee',
    agent_name: null,
    assignee_id: null,
    queued_at: null,
    created_at: '2026-11-27T09:00:00.000Z',
    updated_at: '2026-11-27T09:00:00.000Z',
    ...over,
  }) as ConversationView;

const filter = (over: Partial<ListFilter> = {}): ListFilter => ({
  view: 'all',
  status: '',
  label: '',
  q: '',
  ...over,
});

describe('inbox model', () => {
  it('puts unread conversations first, then the most recently changed', () => {
    const sorted = sortForList([
      conv({ id: 'old-read', updated_at: '2026-11-27T08:00:00Z' }),
      conv({ id: 'new-read', updated_at: '2026-11-27T10:00:00Z' }),
      conv({ id: 'old-unread', unread_count: 2, updated_at: '2026-11-27T07:00:00Z' }),
      conv({ id: 'new-unread', unread: 1, updated_at: '2026-11-27T09:30:00Z' }),
    ]);
    assert.deepEqual(
      sorted.map((c) => c.id),
      ['new-unread', 'old-unread', 'new-read', 'old-read'],
    );
  });

  it('reads unread from the old count and the new field alike', () => {
    assert.equal(unreadOf(conv({ unread_count: 3 })), 3);
    assert.equal(unreadOf(conv({ unread: 2, unread_count: 5 })), 2);
    assert.equal(unreadOf(conv({ unread: true })), 1);
    assert.equal(unreadOf(conv({})), 0);
  });

  it('filters by view, status and label as the list does for pushed entries', () => {
    const mine = conv({ assignee_id: 'me', labels: ['vip'] });
    const queued = conv({ queued_at: '2026-11-27T09:00:00Z' });
    assert.equal(belongs(mine, filter({ view: 'mine' }), 'me'), true);
    assert.equal(belongs(queued, filter({ view: 'mine' }), 'me'), false);
    assert.equal(belongs(queued, filter({ view: 'queued' }), 'me'), true);
    assert.equal(belongs(mine, filter({ view: 'unassigned' }), 'me'), false);
    assert.equal(belongs(mine, filter({ label: 'vip' }), 'me'), true);
    assert.equal(belongs(queued, filter({ label: 'vip' }), 'me'), false);
    assert.equal(belongs(conv({ status: 'closed' }), filter({ status: 'resolved' }), 'me'), true);
    assert.equal(belongs(conv({ status: 'snoozed' }), filter({ status: 'open' }), 'me'), false);
    assert.equal(belongs(mine, filter({ q: 'x' }), 'me'), false, 'search results are not followed live');
  });

  it('asks the workspace API for views and labels, and the older API only for what it knows', () => {
    const f = filter({ view: 'mine', status: 'snoozed', label: 'vip' });
    assert.equal(listQuery(f, true).toString(), 'limit=25&view=mine&status=snoozed&label=vip');
    assert.equal(listQuery({ ...f, status: 'resolved' }, false).toString(), 'limit=25&status=closed');
    assert.equal(listQuery(f, false, 'abc').toString(), 'limit=25&cursor=abc');
    assert.equal(listQuery(filter({ q: 'order 42' }), true).toString(), 'limit=25&q=order+42');
  });

  it('names who handles a conversation', () => {
    assert.deepEqual(handlerLabel(conv({ status: 'closed' })), { text: 'resolved', kind: 'closed' });
    assert.deepEqual(handlerLabel(conv({ queued_at: 'x' })), { text: 'queued', kind: 'queued' });
    assert.deepEqual(handlerLabel(conv({ handled_by: 'agent', agent_name: 'Kim' })), {
      text: 'Kim',
      kind: 'agent',
    });
    assert.deepEqual(handlerLabel(conv({})), { text: 'bot', kind: 'digital_employee' });
  });

  it('makes avatar initials from a name or an email', () => {
    assert.equal(initialsOf('Kim Lee'), 'KL');
    assert.equal(initialsOf('Ann Marie Smith'), 'AS');
    assert.equal(initialsOf('kim@acme.test'), 'KI');
    assert.equal(initialsOf(''), '?');
    assert.equal(initialsOf(null), '?');
  });

  it('maps a conversation to its URL and back', () => {
    assert.equal(conversationPath('a b'), '/portal/inbox/a%20b');
    assert.equal(conversationIdFromPath('/portal/inbox/a%20b'), 'a b');
    assert.equal(conversationIdFromPath('/portal/inbox/abc/'), 'abc');
    assert.equal(conversationIdFromPath('/portal/inbox'), undefined);
    assert.equal(conversationIdFromPath('/portal/inbox/a/b'), undefined);
  });

  it('puts the unread separator before the oldest unread visitor message', () => {
    const roles = ['user', 'digital_employee', 'user', 'agent', 'user'].map((role) => ({ role }));
    assert.equal(firstUnreadIndex(roles, 0), -1);
    assert.equal(firstUnreadIndex(roles, 1), 4);
    assert.equal(firstUnreadIndex(roles, 2), 2);
    assert.equal(firstUnreadIndex(roles, 9), 0, 'more unread than messages: all of it');
    assert.equal(firstUnreadIndex([], 3), -1);
  });

  it('offers snooze times in an hour, tomorrow 09:00 and next Monday 09:00', () => {
    // A Wednesday afternoon, local time.
    const now = new Date(2026, 10, 25, 15, 30);
    const [hour, tomorrow, monday] = snoozeChoices(now);
    assert.equal(hour!.until.getTime() - now.getTime(), 3_600_000);
    assert.deepEqual([tomorrow!.until.getDate(), tomorrow!.until.getHours()], [26, 9]);
    assert.deepEqual([monday!.until.getDay(), monday!.until.getDate(), monday!.until.getHours()], [1, 30, 9]);
    // On a Monday, "Monday" is the next one.
    const onMonday = snoozeChoices(new Date(2026, 10, 30, 8, 0))[2]!.until;
    assert.equal(onMonday.getDate(), 7);
  });

  it('reads the label names of GET /labels ({label, conversations}), most used first as the server sends them', () => {
    assert.deepEqual(
      labelNames({
        labels: [
          { label: 'vip', conversations: 3 },
          { label: 'refund', conversations: 1 },
        ],
      }),
      ['vip', 'refund'],
    );
  });

  it('says when in the list briefly: the time today, the day this year, the date before', () => {
    const now = new Date(2026, 10, 27, 15, 0);
    const today = new Date(2026, 10, 27, 9, 5);
    assert.equal(
      listTime(today.toISOString(), now),
      today.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
    );
    const march = new Date(2026, 2, 3, 9, 5);
    assert.equal(
      listTime(march.toISOString(), now),
      march.toLocaleDateString([], { day: 'numeric', month: 'short' }),
    );
    const old = new Date(2024, 2, 3);
    assert.equal(listTime(old.toISOString(), now), old.toLocaleDateString());
    assert.equal(listTime(null, now), '');
  });
});
