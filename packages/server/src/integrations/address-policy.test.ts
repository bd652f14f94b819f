import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, it } from 'node:test';
import { type KeyRecorder, startKeyRecorder } from '@parley/testing/integrations/connectors-fixtures';
import { ConfigError } from '../config/load.ts';
import { DestinationPolicy, type Resolver } from './address-policy.ts';
import { OutboundError } from './connectors.errors.ts';
import { OutboundHttp } from './outbound-http.ts';
import { IPV4_BLOCKS, IPV6_BLOCKS } from './special-purpose-addresses.ts';

// Only ever judged here, never connected to: every call below that could connect goes to a name whose resolver stub
// answers with loopback addresses, or to a literal the policy refuses before a socket exists.
const blocking = new DestinationPolicy({ blockPrivate: true });

describe('destination policy: the special-purpose address registries', () => {
  it('refuses the network address of every row of both tables', () => {
    for (const { prefix, name } of [...IPV4_BLOCKS, ...IPV6_BLOCKS]) {
      const network = prefix.split('/')[0]!;
      assert.ok(blocking.refuses(network), `${prefix} (${name})`);
    }
  });

  it('refuses private, loopback, link-local, shared, documentation, benchmarking, multicast and reserved IPv4', () => {
    for (const address of [
      ...['0.0.0.0', '0.1.2.3', '10.1.2.3', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.254'],
      ...['169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.9', '192.0.2.1', '192.31.196.1'],
      ...['192.52.193.1', '192.88.99.2', '192.168.1.1', '192.175.48.1', '198.18.0.1', '198.19.255.255'],
      ...['198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.255', '240.0.0.1', '255.255.255.255'],
    ]) {
      assert.ok(blocking.refuses(address), address);
    }
  });

  it('refuses translated, mapped, 6to4, Teredo, site-local, unique-local and reserved IPv6 — public IPv4 inside too', () => {
    for (const address of [
      ...[
        '::',
        '::1',
        '::ffff:127.0.0.1',
        '::ffff:7f00:1',
        '::ffff:8.8.8.8',
        '::8.8.8.8',
        '64:ff9b::808:808',
      ],
      ...[
        '64:ff9b::a9fe:a9fe',
        '64:ff9b:1::a00:1',
        '64:ff9b:1:ffff::1',
        '100::1',
        '2001::1',
        '2001:0:4136::1',
      ],
      ...['2001:2::1', '2001:db8::1', '2002:808:808::1', '2002:a00:1::', '3fff::1', '5f00::1', 'fc00::1'],
      ...['fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'feff::1', 'ff02::1', '4000::1', 'e000::1'],
    ]) {
      assert.ok(blocking.refuses(address), address);
    }
  });

  it('lets public unicast through, and refuses what is not an address at all', () => {
    for (const address of [
      ...['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '192.169.0.1', '100.128.0.1', '198.20.0.1'],
      ...['2606:4700::1111', '2a00:1450:4001::200e', '2001:4860:4860::8888', '2003::1', '2620:4f:8001::1'],
    ]) {
      assert.equal(blocking.refuses(address), false, address);
    }
    assert.ok(blocking.refuses('not-an-ip'));
    assert.ok(
      blocking.refuses('127.1'),
      'only canonical literals are addresses; the URL parser makes them so',
    );
  });

  it('refuses nothing when blocking is off, and allows the PARLEY_OUTBOUND_ALLOW prefixes when it is on', () => {
    const open = new DestinationPolicy({ blockPrivate: false });
    for (const address of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1', 'fd00::1']) {
      assert.equal(open.refuses(address), false, address);
    }
    const allowing = new DestinationPolicy({
      blockPrivate: true,
      allow: ['127.0.0.1', '10.1.0.0/16', 'fd00::/8'],
    });
    for (const address of ['127.0.0.1', '10.1.2.3', 'fd12::1'])
      assert.equal(allowing.refuses(address), false);
    for (const address of ['127.0.0.2', '10.2.0.1', 'fc00::1', '::ffff:127.0.0.1']) {
      assert.ok(allowing.refuses(address), address);
    }
    for (const bad of ['10.0.0.0/33', 'example.com', '300.1.1.1', '::1/129', '10.0.0.0/8/8']) {
      assert.throws(() => new DestinationPolicy({ blockPrivate: true, allow: [bad] }), ConfigError, bad);
    }
  });
});

/** A resolver that answers from a table and counts its questions (nothing goes to DNS). */
function stubResolver(answers: Record<string, string[] | string[][]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = async (hostname: string) => {
    const round = asked.filter((h) => h === hostname).length;
    asked.push(hostname);
    const answer = answers[hostname];
    if (!answer) throw Object.assign(new Error(`no such host ${hostname}`), { code: 'ENOTFOUND' });
    const addresses = (
      Array.isArray(answer[0]) ? answer[Math.min(round, answer.length - 1)] : answer
    ) as string[];
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { asked });
}

const lookup = (policy: DestinationPolicy, hostname: string, all = true) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((resolve) =>
    policy.lookup(hostname, { all }, (err, address) => resolve({ err, address })),
  );

describe('destination policy: the lookup each socket connects through', () => {
  it('refuses a name when any of its A or AAAA answers is refused', async () => {
    const resolve = stubResolver({
      'metadata.test': ['169.254.169.254'],
      'intranet.test': ['10.0.0.1'],
      'cgnat.test': ['100.64.0.1'],
      'ula.test': ['fd00::1'],
      'nat64.test': ['64:ff9b:1::a00:1'],
      'mapped.test': ['::ffff:10.0.0.1'],
      '6to4.test': ['2002:a00:1::1'],
      'teredo.test': ['2001:0:4136:e378::1'],
      'sitelocal.test': ['fec0::1'],
      'mixed.test': ['93.184.216.34', '10.0.0.1'],
      'mixed6.test': ['2606:4700::1111', 'fe80::1'],
      'empty.test': [],
    });
    const policy = new DestinationPolicy({ blockPrivate: true, resolve });
    for (const name of [
      ...[
        'metadata.test',
        'intranet.test',
        'cgnat.test',
        'ula.test',
        'nat64.test',
        'mapped.test',
        '6to4.test',
      ],
      ...['teredo.test', 'sitelocal.test', 'mixed.test', 'mixed6.test', 'empty.test'],
    ]) {
      for (const all of [true, false]) {
        const { err } = await lookup(policy, name, all);
        assert.ok(err instanceof OutboundError, name);
        assert.equal(err.code, 'connector_destination_blocked', name);
        assert.doesNotMatch(err.message, /10\.0\.0\.1|169\.254|fd00|fec0/, 'the answer is not revealed');
      }
    }
  });

  it('hands every answer of a public name to the socket, and passes resolver errors on', async () => {
    const resolve = stubResolver({ 'public.test': ['93.184.216.34', '2606:4700::1111'] });
    const policy = new DestinationPolicy({ blockPrivate: true, resolve });
    const all = await lookup(policy, 'public.test', true);
    assert.equal(all.err, null);
    assert.deepEqual(
      (all.address as LookupAddress[]).map((a) => a.address),
      ['93.184.216.34', '2606:4700::1111'],
    );
    const one = await lookup(policy, 'public.test', false);
    assert.equal(one.address, '93.184.216.34');
    const missing = await lookup(policy, 'missing.test');
    assert.equal(missing.err?.code, 'ENOTFOUND');
  });
});

describe('outbound HTTP under the destination policy', () => {
  let recorder: KeyRecorder;
  let port: string;
  before(async () => {
    recorder = await startKeyRecorder();
    port = new URL(recorder.url).port;
  });
  after(() => recorder.close());

  const client = (policy: DestinationPolicy) =>
    new OutboundHttp({ destinations: policy, timeoutMs: 5_000, maxRedirects: 3 });

  it('refuses loopback written as odd IPv4 and IPv6 literals before any socket exists', async () => {
    const http = client(blocking);
    try {
      for (const host of [
        ...[
          '127.0.0.1',
          '0x7f.1',
          '0x7f000001',
          '2130706433',
          '017700000001',
          '0177.0.0.1',
          '127.1',
          '127.0.0.1.',
        ],
        ...['[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', '[::127.0.0.1]'],
        ...['[64:ff9b::127.0.0.1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::]', '0.0.0.0', '0'],
      ]) {
        await assert.rejects(
          http.fetch(`http://${host}:${port}/x`),
          { code: 'connector_destination_blocked' },
          host,
        );
      }
    } finally {
      http.close();
    }
    assert.equal(recorder.calls.length, 0, 'nothing connected');
  });

  it('refuses a name whose answers include a refused address, and connects to an allowed one', async () => {
    const resolve = stubResolver({ 'half.test': ['127.0.0.1', '127.0.0.2'], 'own.test': ['127.0.0.1'] });
    // Only 127.0.0.1 is allowed: 127.0.0.2 stands for any refused address, and nothing leaves the machine.
    const http = client(new DestinationPolicy({ blockPrivate: true, allow: ['127.0.0.1'], resolve }));
    try {
      await assert.rejects(http.fetch(`http://half.test:${port}/half`), {
        code: 'connector_destination_blocked',
      });
      assert.equal(recorder.calls.length, 0, 'the allowed answer was not used either');
      assert.equal((await http.fetch(`http://own.test:${port}/own`)).status, 200);
      assert.deepEqual(
        recorder.calls.map((c) => c.path),
        ['/own'],
      );
    } finally {
      http.close();
    }
  });

  it('judges every hop of a redirect again: a name rebound to a refused address between hops is refused', async () => {
    const before = recorder.calls.length;
    // First answer allowed, every later one refused (DNS rebinding); the redirect closes its connection, so the
    // second hop needs a new socket and so a new lookup.
    const resolve = stubResolver({ 'rebind.test': [['127.0.0.1'], ['127.0.0.2']] });
    const http = client(new DestinationPolicy({ blockPrivate: true, allow: ['127.0.0.1'], resolve }));
    try {
      await assert.rejects(http.fetch(`http://rebind.test:${port}/redirect?to=/landed&close=1`), {
        code: 'connector_destination_blocked',
      });
    } finally {
      http.close();
    }
    assert.deepEqual(resolve.asked, ['rebind.test', 'rebind.test']);
    assert.deepEqual(
      recorder.calls.slice(before).map((c) => c.path),
      ['/redirect?to=/landed&close=1'],
      'the second hop never arrived',
    );
  });
});
