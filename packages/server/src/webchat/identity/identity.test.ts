import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runParleyInProcess } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  configureIdentity,
  createIdentityChannel,
  newIdentifiedVisitor,
  signVisitorToken,
} from '@parley/testing/webchat/identity-fixtures';
import {
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  listMessages,
  newCentrifugeClient,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { countSealedByMasterVersion } from '../../crypto/sealed-columns.ts';
import { visitorKeyOf } from '../visitor.ts';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
const ids = (res: { body: { conversations: Array<{ id: string }> } }) =>
  res.body.conversations.map((c) => c.id).sort();

for (const database of TEST_DATABASES) {
  describe(`verified visitor identity (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    it('`channels identity` sets the mode and shows a secret only when the channel first gets one or rotates it', async () => {
      const company = await server.ctx.companies.create('Cli Co');
      const employee = await server.ctx.digitalEmployees.getDefault(company.id);
      const channel = await server.ctx.webchat.channels.create({
        companyId: company.id,
        name: 'Shop',
        digitalEmployeeId: employee.id,
      });
      const run = (...extra: string[]) =>
        runParleyInProcess(server, [
          'channels',
          'identity',
          '--company',
          company.id,
          '--channel',
          channel.id,
          ...extra,
          '--json',
        ]);

      const first = await run('--mode', 'optional');
      assert.equal(first.code, 0, first.stdout);
      assert.deepEqual(Object.keys(first.json).sort(), ['channel_id', 'identity', 'identity_secret']);
      assert.equal(first.json.channel_id, channel.id);
      assert.equal(first.json.identity, 'optional');
      const secret: string = first.json.identity_secret;
      assert.match(secret, /^pvi_[0-9A-Za-z]{43}$/, '256 random bits with a recognisable prefix');

      const again = await run('--mode', 'required');
      assert.deepEqual(
        again.json,
        { channel_id: channel.id, identity: 'required' },
        'no secret the second time',
      );
      const rotated = await run('--mode', 'required', '--rotate-secret');
      assert.equal(rotated.json.identity, 'required');
      assert.match(rotated.json.identity_secret, /^pvi_/);
      assert.notEqual(rotated.json.identity_secret, secret);

      const listed = await runParleyInProcess(server, [
        'channels',
        'list',
        '--company',
        company.id,
        '--json',
      ]);
      assert.equal(listed.json.channels[0].identity, 'required');
      assert.ok(!listed.stdout.includes('pvi_'), 'listing never shows a secret');

      const bad = await run('--mode', 'sometimes');
      assert.equal(bad.code, 2);
      assert.equal(bad.json.error.code, 'usage');
      const unknown = await runParleyInProcess(server, [
        'channels',
        'identity',
        '--company',
        company.id,
        '--channel',
        randomUUID(),
        '--mode',
        'off',
        '--json',
      ]);
      assert.equal(unknown.json.error.code, 'channel_not_found');

      // Sealed at rest (bound to company, channel and slot), registered for master-key rotation, never audited.
      const row = await server.ctx.store.db
        .selectFrom('channels')
        .selectAll()
        .where('id', '=', channel.id)
        .executeTakeFirstOrThrow();
      assert.match(row.identity_secret!, /^pse1\./);
      assert.ok(!JSON.stringify(row).includes(rotated.json.identity_secret));
      const counts = await countSealedByMasterVersion(
        server.ctx.store.db,
        server.ctx.sealer,
        server.ctx.sealedColumns,
      );
      assert.ok(
        counts.some((c) => c.column === 'channels.identity_secret' && Object.keys(c.byVersion).length > 0),
      );
      assert.ok(counts.some((c) => c.column === 'channels.identity_previous_secret'));
      const events = await server.ctx.audit.list({ companyId: company.id, subject: channel.id });
      const types = events.map((e) => e.type).sort();
      assert.deepEqual(types, [
        'channel.identity_changed',
        'channel.identity_changed',
        'channel.identity_secret_rotated',
        'channel.identity_secret_rotated',
      ]);
      assert.ok(!JSON.stringify(events).includes('pvi_'), 'the audit log never holds a secret');
    });

    it('required, optional and off: no token, a token, and a token the channel ignores', async () => {
      const company = await server.ctx.companies.create('Modes Co');
      const required = await createIdentityChannel(server, company.id, 'required');
      const optional = await createIdentityChannel(server, company.id, 'optional');
      const off = await createIdentityChannel(server, company.id, 'off');

      const anonymousOnRequired = newVisitor(company.id, { channelId: required.channelId });
      for (const [method, path] of [
        ['POST', '/conversations'],
        ['GET', '/conversations'],
        ['POST', '/auth/connect-token'],
        ['GET', '/config'],
      ] as const) {
        const res =
          method === 'POST'
            ? await sdkPost(server, anonymousOnRequired, path)
            : await sdkGet(server, anonymousOnRequired, path);
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.equal(res.body.code, 'visitor_token_required');
        assert.match(res.headers.get('content-type')!, /application\/problem\+json/);
      }

      // Optional: anonymous without a token, identified with one; off: the header is ignored, even a bad one.
      const anonymousOnOptional = newVisitor(company.id, { channelId: optional.channelId });
      assert.equal((await sdkPost(server, anonymousOnOptional, '/conversations')).status, 201);
      const offVisitor = newIdentifiedVisitor(company.id, off.channelId, 'not-a-token');
      const offConversation = await sdkPost(server, offVisitor, '/conversations');
      assert.equal(offConversation.status, 201);
      const offToken = await sdkPost(server, offVisitor, '/auth/connect-token');
      assert.equal(claimsOf(offToken.body.connection_token).sub, offVisitor.sessionId);
      // Without X-Channel-Id there is no channel to verify with: anonymous.
      const noChannel = newVisitor(company.id);
      noChannel.headers['x-visitor-token'] = 'garbage';
      assert.equal((await sdkPost(server, noChannel, '/conversations')).status, 201);

      const token = await signVisitorToken(required.secret, 'user-1', { claims: { name: 'Ada' } });
      const identified = newIdentifiedVisitor(company.id, required.channelId, token);
      assert.equal((await sdkPost(server, identified, '/conversations')).status, 201);
      const bad = await sdkGet(
        server,
        newIdentifiedVisitor(company.id, required.channelId, `${token}x`),
        '/conversations',
      );
      assert.equal(bad.status, 401);
      assert.equal(bad.body.code, 'visitor_token_invalid');
    });

    it('a visitor’s conversations follow them to every session and device, and nobody else sees them', async () => {
      const company = await server.ctx.companies.create('Devices Co');
      const { channelId, secret } = await createIdentityChannel(server, company.id, 'optional');
      const laptop = newIdentifiedVisitor(
        company.id,
        channelId,
        await signVisitorToken(secret, 'user-42', {
          claims: { name: 'Ada Lovelace', email: 'ada@example.com' },
        }),
      );
      const phone = newIdentifiedVisitor(company.id, channelId, await signVisitorToken(secret, 'user-42'));
      const stranger = newIdentifiedVisitor(company.id, channelId, await signVisitorToken(secret, 'user-43'));
      const anonymous = newVisitor(company.id, { channelId });

      const conversation = await createConversation(server, laptop);
      const fromPhone = await sdkGet(server, phone, '/conversations');
      assert.deepEqual(ids(fromPhone), [conversation.id]);
      assert.equal(fromPhone.body.conversations[0].unread_count, 1, 'the greeting is unread');
      assert.equal((await listMessages(server, phone, conversation.id)).status, 200);
      assert.equal((await sdkGet(server, phone, `/conversations/${conversation.id}`)).status, 200);

      for (const other of [stranger, anonymous]) {
        assert.deepEqual(ids(await sdkGet(server, other, '/conversations')), []);
        assert.equal((await listMessages(server, other, conversation.id)).status, 404);
        const subscribe = await sdkPost(server, other, '/auth/subscribe-token', {
          conversation_id: conversation.id,
        });
        assert.equal(subscribe.status, 404);
        assert.equal(subscribe.body.code, 'conversation_not_found');
      }
      // The anonymous session that made it as the laptop, without its token, no longer sees it either.
      const laptopLoggedOut = newVisitor(company.id, { channelId, sessionId: laptop.sessionId });
      assert.deepEqual(ids(await sdkGet(server, laptopLoggedOut, '/conversations')), []);

      // One realtime subject for the visitor on every device: opaque, never the user id or a session id.
      const connectLaptop = await sdkPost(server, laptop, '/auth/connect-token');
      const connectPhone = await sdkPost(server, phone, '/auth/connect-token');
      const subject = claimsOf(connectLaptop.body.connection_token).sub;
      assert.equal(subject, visitorKeyOf(channelId, 'user-42'));
      assert.equal(claimsOf(connectPhone.body.connection_token).sub, subject);
      assert.ok(!subject.includes('user-42') && subject !== laptop.sessionId);
      const subscribeLaptop = await sdkPost(server, laptop, '/auth/subscribe-token', {
        conversation_id: conversation.id,
      });
      assert.equal(claimsOf(subscribeLaptop.body.subscription_token).sub, subject);

      // Both devices subscribe with the official client; a message from the phone reaches the laptop, authored
      // with the visitor's id and name from the token.
      const laptopLive = await connectVisitor(server, laptop, conversation);
      const phoneLive = await connectVisitor(server, phone, conversation);
      try {
        await sendMessage(phoneLive.sub, 'sent from my phone');
        const [userMessage] = (
          await laptopLive.log.waitFor((es) => es.some((e) => e.message_snapshot.role === 'user'))
        ).filter((e) => e.message_snapshot.role === 'user');
        assert.deepEqual(userMessage!.message_snapshot.author, { id: 'user-42', name: 'Ada Lovelace' });
        const stored = await listMessages(server, phone, conversation.id);
        const user = stored.body.messages.find((m: { role: string }) => m.role === 'user');
        assert.deepEqual(user.author, { id: 'user-42', name: 'Ada Lovelace' });
      } finally {
        laptopLive.close();
        phoneLive.close();
      }
    });

    it('refuses a subscription by another visitor even with a stolen subscription token', async () => {
      const company = await server.ctx.companies.create('Stolen Co');
      const { channelId, secret } = await createIdentityChannel(server, company.id, 'required');
      const owner = newIdentifiedVisitor(company.id, channelId, await signVisitorToken(secret, 'owner'));
      const thief = newIdentifiedVisitor(company.id, channelId, await signVisitorToken(secret, 'thief'));
      const conversation = await createConversation(server, owner);
      const stolen = (
        await sdkPost(server, owner, '/auth/subscribe-token', { conversation_id: conversation.id })
      ).body.subscription_token;
      const thiefToken = (await sdkPost(server, thief, '/auth/connect-token')).body.connection_token;
      const client = newCentrifugeClient(server, thiefToken);
      const received: unknown[] = [];
      const refused = new Promise<string>((resolve) => {
        client.on('disconnected', (ctx) => resolve(`disconnected ${ctx.code}`));
        const sub = client.newSubscription(conversation.channel, { token: stolen });
        sub.on('publication', (ctx) => received.push(ctx.data));
        sub.on('unsubscribed', (ctx) => resolve(`unsubscribed ${ctx.code}`));
        sub.subscribe();
      });
      client.connect();
      try {
        // The token's `sub` is the owner's, not the thief's connection's: the engine refuses it.
        assert.match(
          await waitForSettled(refused, 15_000, 'the refusal'),
          /^(disconnected 3500|unsubscribed 103)$/,
        );
        assert.equal(received.length, 0);
      } finally {
        client.disconnect();
      }
    });

    it('keeps the anonymous history of a session that identifies, and shows the visitor to agents', async () => {
      const company = await server.ctx.companies.create('History Co');
      const { channelId, secret } = await createIdentityChannel(server, company.id, 'optional');
      const browser = newVisitor(company.id, { channelId });
      const before = await createConversation(server, browser);
      const otherChannel = await createIdentityChannel(server, company.id, 'optional');
      const elsewhere = await createConversation(
        server,
        newVisitor(company.id, { channelId: otherChannel.channelId, sessionId: browser.sessionId }),
      );

      const token = await signVisitorToken(secret, 'user-7', {
        claims: { name: 'Grace', email: 'grace@example.com' },
      });
      const identified = { ...browser, headers: { ...browser.headers, 'x-visitor-token': token } };
      assert.deepEqual(ids(await sdkGet(server, identified, '/conversations')), [before.id]);
      const otherDevice = newIdentifiedVisitor(
        company.id,
        channelId,
        await signVisitorToken(secret, 'user-7'),
      );
      const second = await createConversation(server, otherDevice);
      assert.deepEqual(
        ids(await sdkGet(server, otherDevice, '/conversations')),
        [before.id, second.id].sort(),
      );
      // The same browser, signed out for a while, starts another conversation; signing in again takes it along.
      const later = await createConversation(server, browser);
      assert.deepEqual(
        ids(await sdkGet(server, identified, '/conversations')),
        [before.id, second.id, later.id].sort(),
      );
      // Identity is per channel: the other channel's anonymous conversation stays with the anonymous session.
      assert.ok(!ids(await sdkGet(server, otherDevice, '/conversations')).includes(elsewhere.id));

      // Agents see who it is; a newer token's name and email replace the old ones.
      const stored = await server.ctx.webchat.conversations.find(before.id);
      assert.deepEqual(
        { id: stored!.visitor!.id, name: stored!.visitor!.name, email: stored!.visitor!.email },
        { id: 'user-7', name: 'Grace', email: 'grace@example.com' },
      );
      const renamed = newIdentifiedVisitor(
        company.id,
        channelId,
        await signVisitorToken(secret, 'user-7', {
          claims: { name: 'Grace Hopper', email: 'grace@navy.example' },
        }),
      );
      await sdkGet(server, renamed, '/conversations');
      const platformToken = await fetchPlatformToken(server, company.id, ['conversations:read']);
      const platform = await http(`${server.baseUrl}/platform/v1/conversations/${second.id}`, {
        headers: { authorization: `Bearer ${platformToken}` },
      });
      assert.deepEqual(platform.body.visitor, {
        id: 'user-7',
        name: 'Grace Hopper',
        email: 'grace@navy.example',
        // The token carried no custom attributes (docs/design.md "Agent workspace").
        attributes: {},
      });
      const anonymousView = await http(`${server.baseUrl}/platform/v1/conversations/${elsewhere.id}`, {
        headers: { authorization: `Bearer ${platformToken}` },
      });
      assert.equal(anonymousView.body.visitor, null);
    });

    it('two channels never share visitors, even with the same user id', async () => {
      const company = await server.ctx.companies.create('Two Channels Co');
      const a = await createIdentityChannel(server, company.id, 'optional');
      const b = await createIdentityChannel(server, company.id, 'optional');
      const inA = newIdentifiedVisitor(company.id, a.channelId, await signVisitorToken(a.secret, 'same-id'));
      const inB = newIdentifiedVisitor(company.id, b.channelId, await signVisitorToken(b.secret, 'same-id'));
      const conversation = await createConversation(server, inA);
      assert.deepEqual(ids(await sdkGet(server, inB, '/conversations')), []);
      assert.equal((await listMessages(server, inB, conversation.id)).status, 404);
      const aSub = claimsOf((await sdkPost(server, inA, '/auth/connect-token')).body.connection_token).sub;
      const bSub = claimsOf((await sdkPost(server, inB, '/auth/connect-token')).body.connection_token).sub;
      assert.notEqual(aSub, bSub);
    });

    it('switching identity off keeps the secret; switching it on again needs no new one', async () => {
      const company = await server.ctx.companies.create('Toggle Co');
      const { channelId, secret } = await createIdentityChannel(server, company.id, 'required');
      assert.deepEqual(await configureIdentity(server, company.id, channelId, 'off'), {
        channel_id: channelId,
        identity: 'off',
      });
      assert.deepEqual(await configureIdentity(server, company.id, channelId, 'required'), {
        channel_id: channelId,
        identity: 'required',
      });
      const v = newIdentifiedVisitor(company.id, channelId, await signVisitorToken(secret, 'u'));
      assert.equal((await sdkGet(server, v, '/conversations')).status, 200);
    });
  });
}
