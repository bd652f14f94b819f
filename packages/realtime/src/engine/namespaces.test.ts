import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseGoDuration } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';
import { ChannelRegistry, isValidPublicationData } from './namespaces.ts';

/** Namespaces with Centrifugo's option names and channel parsing rules (CFGO `container.go`, `format.go`). */

describe('durations', () => {
  test('Go duration strings become milliseconds', () => {
    assert.equal(parseGoDuration('1h'), 3_600_000);
    assert.equal(parseGoDuration('300s'), 300_000);
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('1.5s'), 1500);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('0'), 0);
    assert.throws(() => parseGoDuration('5 minutes'), ConfigError);
    assert.throws(() => parseGoDuration(''), ConfigError);
  });
});

describe('ChannelRegistry', () => {
  const registry = new ChannelRegistry(
    [
      { name: 'messages', history_size: 100, history_ttl: '1h', force_recovery: true },
      { name: 'dialog', allow_user_limited_channels: true, channel_regex: '^[a-z0-9#,]+$' },
    ],
    { presence: true },
  );

  test('the namespace is the text before the first colon; the private prefix is ignored for lookup', () => {
    assert.equal(registry.resolve('messages:companies.1.conversations.2')?.options.namespace, 'messages');
    assert.equal(registry.resolve('$messages:secret')?.options.namespace, 'messages');
    assert.equal(registry.resolve('lobby')?.options.namespace, '');
    assert.equal(registry.resolve('lobby')?.options.presence, true);
    assert.equal(registry.resolve('unknown:x'), undefined);
  });

  test('history retention and recovery options are resolved in milliseconds', () => {
    const options = registry.resolve('messages:x')!.options;
    assert.deepEqual(options.history, { size: 100, ttlMs: 3_600_000, metaTtlMs: 720 * 3_600_000 });
    assert.equal(options.forceRecovery, true);
    assert.equal(options.forcePositioning, true, 'recovery implies positioning');
  });

  test('names: ASCII only unless channel_regex; user-limited channels list their users', () => {
    const lobby = registry.resolve('lobby')!;
    assert.equal(registry.isValidName('lobby', lobby), true);
    assert.equal(registry.isValidName('lobbé', registry.resolve('lobbé')!), false);
    const dialog = registry.resolve('dialog:a#42,43')!;
    assert.equal(registry.isValidName('dialog:a#42,43', dialog), true);
    assert.equal(registry.isValidName('dialog:A', registry.resolve('dialog:A')!), false);
    assert.equal(registry.isUserLimited('dialog:a#42,43'), true);
    assert.equal(registry.userAllowed('dialog:a#42,43', '43'), true);
    assert.equal(registry.userAllowed('dialog:a#42,43', '44'), false);
    assert.equal(registry.isPrivate('$messages:x'), true);
  });

  test('invalid configurations are refused', () => {
    assert.throws(() => new ChannelRegistry([{ name: 'a' }]), ConfigError);
    assert.throws(() => new ChannelRegistry([{ name: 'ok' }, { name: 'ok' }]), ConfigError);
    assert.throws(() => new ChannelRegistry([{ name: 'rec', force_recovery: true }]), ConfigError);
    assert.throws(
      () => new ChannelRegistry([{ name: 'ttl', history_size: 1, history_ttl: 'soon' }]),
      ConfigError,
    );
  });

  test('publication_data_format', () => {
    assert.equal(isValidPublicationData('', ''), false);
    assert.equal(isValidPublicationData('1', ''), true);
    assert.equal(isValidPublicationData('[1]', 'json_object'), false);
    assert.equal(isValidPublicationData('{}', 'json_object'), true);
    assert.equal(isValidPublicationData('', 'binary'), true);
  });
});
