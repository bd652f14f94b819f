import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Centrifuge } from 'centrifuge';
import {
  connectionToken,
  connectRawClient,
  newClient,
  RawClient,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/**
 * Token expiry: client-side refresh of connections and subscriptions, and what happens when it lapses
 * (docs/protocol.md "Token refresh and expiry").
 */

/** Short grace periods for the lapse tests; refresh tests get a server whose grace absorbs a loaded machine. */
let server: TestServer;
let refreshServer: TestServer;
const closers: Array<() => void> = [];

before(async () => {
  const base = {
    namespaces: [{ name: 'chat', history_size: 10, history_ttl: '1h', force_recovery: true }],
    timerResolutionMs: 20,
  };
  server = await startTestServer({ ...base, expiredCloseDelayMs: 300, expiredSubCloseDelayMs: 300 });
  refreshServer = await startTestServer({ ...base, expiredCloseDelayMs: 5000, expiredSubCloseDelayMs: 5000 });
});

after(async () => {
  for (const close of closers) close();
  await server.close();
  await refreshServer.close();
});

function newExpiryClient(
  options: Parameters<typeof newClient>[1],
  target: TestServer = refreshServer,
): Centrifuge {
  const c = newClient(target.wsUrl, options);
  closers.push(() => c.disconnect());
  return c;
}

async function connectRaw(token: string): Promise<RawClient> {
  const raw = await connectRawClient(server.wsUrl, token);
  closers.push(() => raw.close());
  return raw;
}

describe('refresh', () => {
  test('a short-lived connection token is refreshed on the same connection', async () => {
    let refreshes = 0;
    const c = newExpiryClient({
      token: connectionToken('alice', {}, 2),
      getToken: async () => {
        refreshes += 1;
        return connectionToken('alice', {}, 2);
      },
    });
    const ids: string[] = [];
    c.on('connected', (ctx) => ids.push(ctx.client));
    c.connect();
    await waitFor('two refreshes', () => refreshes >= 2, 8000);
    // A reconnect would have connected again before a later refresh: one connection through both.
    assert.equal(ids.length, 1, 'never reconnected');
    assert.equal(c.state, 'connected');
  });

  test('a short-lived subscription token is refreshed with sub_refresh', async () => {
    let refreshes = 0;
    const c = newExpiryClient({ token: connectionToken('bob') });
    const sub = c.newSubscription('chat:refresh', {
      getToken: async () => {
        refreshes += 1;
        return subscriptionToken('bob', 'chat:refresh', {}, 2);
      },
    });
    const subscribedCount = { n: 0 };
    sub.on('subscribed', () => subscribedCount.n++);
    c.connect();
    sub.subscribe();
    await waitFor('two subscription refreshes', () => refreshes >= 3, 8000);
    assert.equal(subscribedCount.n, 1, 'never resubscribed');
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    await refreshServer.engine.publish({ channel: 'chat:refresh', data: { still: 'here' } });
    assert.deepEqual((await received).data, { still: 'here' });
  });

  test('refresh with a token of another user closes with 3500', async () => {
    const raw = await connectRaw(connectionToken('carol'));
    raw.send({ id: 2, refresh: { token: connectionToken('mallory') } });
    assert.equal(await raw.waitForClose(), 3500);
  });

  test('refresh and sub_refresh answer expires/ttl and the client id', async () => {
    const raw = await connectRaw(connectionToken('dave', {}, 60));
    raw.send({ id: 2, refresh: { token: connectionToken('dave', {}, 120) } });
    const refresh = (await raw.waitForReply(2)).refresh as Record<string, unknown>;
    assert.equal(refresh.expires, true);
    assert.ok((refresh.ttl as number) > 100);
    assert.equal(typeof refresh.client, 'string');
    raw.send({ id: 3, subscribe: { channel: 'chat:d', token: subscriptionToken('dave', 'chat:d', {}, 60) } });
    const subscribe = (await raw.waitForReply(3)).subscribe as Record<string, unknown>;
    assert.equal(subscribe.expires, true);
    raw.send({
      id: 4,
      sub_refresh: { channel: 'chat:d', token: subscriptionToken('dave', 'chat:d', {}, -1) },
    });
    assert.deepEqual((await raw.waitForReply(4)).error, { code: 109, message: 'token expired' });
    raw.send({
      id: 5,
      sub_refresh: { channel: 'chat:d', token: subscriptionToken('dave', 'chat:d', { expire_at: 0 }) },
    });
    assert.deepEqual((await raw.waitForReply(5)).sub_refresh, {});
  });
});

describe('lapsed credentials', () => {
  test('a connection whose token lapsed is closed with 3005 after the grace period', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const raw = await connectRaw(connectionToken('erin', { exp }));
    assert.equal(await raw.waitForClose(6000), 3005);
    assert.ok(Date.now() >= exp * 1000 + 300, 'not before expiry plus grace');
  });

  test('a subscription whose token lapsed gets an unsubscribe push 2501', async () => {
    const raw = await connectRaw(connectionToken('frank'));
    raw.send({
      id: 2,
      subscribe: { channel: 'chat:lapse', token: subscriptionToken('frank', 'chat:lapse', {}, 1) },
    });
    await raw.waitForReply(2);
    const push = await raw.waitForMessage((m) => m.push !== undefined, 5000);
    assert.deepEqual(push, {
      push: { channel: 'chat:lapse', unsubscribe: { code: 2501, reason: 'subscription expired' } },
    });
    assert.equal(raw.closeCode, undefined, 'the connection stays');
  });

  test('expire_at: 0 disables expiry; expire_at in the past answers 110', async () => {
    // Two seconds ahead: both connections below are made well before then, on a loaded machine too.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const raw = await connectRaw(connectionToken('gina', { exp, expire_at: 0 }));
    assert.equal((raw.messages[0]!.connect as Record<string, unknown>).expires, undefined);
    // A control connection whose token lapses at the same second, without expire_at: 0, is closed with 3005 — by
    // then gina's would have been too, were its expiry not disabled.
    const control = await connectRaw(connectionToken('gina-control', { exp }));
    assert.equal(await control.waitForClose(6000), 3005);
    assert.equal(raw.closeCode, undefined);
    const late = new RawClient(server.wsUrl);
    closers.push(() => late.close());
    await late.opened;
    late.send({
      id: 1,
      connect: { token: connectionToken('gina', { expire_at: Math.floor(Date.now() / 1000) - 5 }) },
    });
    assert.deepEqual((await late.waitForReply(1)).error, { code: 110, message: 'expired' });
  });

  test('the centrifuge client reconnects after 3005 and fetches a fresh token', async () => {
    let calls = 0;
    const c = newExpiryClient(
      {
        token: connectionToken('hank', {}, 1),
        getToken: async () => {
          calls += 1;
          // The first refresh hands out an already expired token: the server closes with 3005.
          return calls === 1 ? connectionToken('hank', {}, -1) : connectionToken('hank');
        },
        minReconnectDelay: 100,
      },
      server,
    );
    const connecting: number[] = [];
    c.on('connecting', (ctx) => connecting.push(ctx.code));
    c.connect();
    await waitFor('close 3005', () => connecting.includes(3005), 8000);
    await waitFor('reconnect with a fresh token', () => c.state === 'connected' && calls >= 2, 8000);
  });
});
