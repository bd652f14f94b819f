import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';

interface Grant {
  websocket_url: string;
  connection_token: string;
  subscription_token: string;
  channel: string;
}

/**
 * The portal inbox's realtime grant when the portal is opened under another name than PARLEY_PUBLIC_URL (here the
 * configured http://localhost:1, while the page is at 127.0.0.1): the engine admits the page origin the grant
 * recorded, and only that one.
 */
describe('portal inbox realtime grant: the page origin it records', () => {
  let server: TestServer;
  let agent: PortalTestClient;
  let conversation: { id: string; channel: string };
  let pageOrigin: string;
  before(async () => {
    let acmeId: string;
    ({ server, agent, acmeId } = await startPortalWorld('sqlite', {
      config: { publicUrl: 'http://localhost:1', oauth: { audience: 'http://localhost:1' } },
    }));
    pageOrigin = new URL(server.baseUrl).origin;
    conversation = await createConversation(server, newVisitor(acmeId));
  });
  after(() => server.close());

  const grant = async (origin?: string): Promise<Grant> => {
    const res = await agent.post(
      `/inbox/conversations/${conversation.id}/realtime`,
      {},
      {
        headers: origin ? { origin } : {},
      },
    );
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  /** Connects to this server's engine as a browser at `origin` would; resolves `subscribed` or the close code. */
  const watch = (g: Grant, origin: string): Promise<'subscribed' | number> => {
    const Socket = class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { origin });
      }
    };
    const client = new Centrifuge(`${server.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
      websocket: Socket,
      token: g.connection_token,
      timeout: 10_000,
    });
    const sub = client.newSubscription(g.channel, { token: g.subscription_token });
    return new Promise<'subscribed' | number>((resolve) => {
      sub.on('subscribed', () => resolve('subscribed'));
      client.on('disconnected', ({ code }) => resolve(code));
      client.connect();
      sub.subscribe();
    }).finally(() => client.disconnect());
  };

  it('keeps the configured websocket URL', async () => {
    assert.equal((await grant(pageOrigin)).websocket_url, 'ws://localhost:1/connection/websocket');
  });

  it('admits the page it was granted to, though its origin is not the public URL’s', async () => {
    assert.equal(await watch(await grant(pageOrigin), pageOrigin), 'subscribed');
  });

  it('admits no other origin with that grant', async () => {
    assert.equal(await watch(await grant(pageOrigin), 'http://elsewhere.example'), 4503);
  });

  it('records no origin that does not name the host the grant was asked from, nor a missing one', async () => {
    const foreign = await grant('http://elsewhere.example');
    assert.equal(await watch(foreign, 'http://elsewhere.example'), 4503);
    assert.equal(await watch(foreign, pageOrigin), 4503);
    assert.equal(await watch(await grant(), pageOrigin), 4503);
  });
});
