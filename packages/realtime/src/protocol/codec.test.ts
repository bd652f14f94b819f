import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BrokerError } from '../broker/errors.ts';
import {
  commandMethod,
  decodeFrame,
  encodeErrorReply,
  encodePublicationPush,
  encodeUnsubscribePush,
  FrameDecodeError,
  safeRawJson,
} from './codec.ts';
import { isTerminalDisconnect } from './codes.ts';
import { ClientError, toClientError } from './errors.ts';

/**
 * JSON framing (docs/protocol.md "Frames", "Commands and replies"): newline-separated commands, raw JSON
 * payloads, omitted zero values.
 */

describe('decodeFrame', () => {
  test('splits newline-separated commands and tolerates a trailing newline', () => {
    const commands = decodeFrame('{"id":1,"connect":{}}\n{"id":2,"subscribe":{"channel":"a"}}\n');
    assert.equal(commands.length, 2);
    assert.equal(commandMethod(commands[0]!), 'connect');
    assert.equal(commandMethod(commands[1]!), 'subscribe');
  });

  test('an empty command is a pong; an unknown method with an id is undefined', () => {
    assert.equal(commandMethod(decodeFrame('{}')[0]!), 'pong');
    assert.equal(commandMethod(decodeFrame('{"id":3,"fly":{}}')[0]!), undefined);
    assert.equal(commandMethod(decodeFrame('{"send":{"data":1}}')[0]!), 'send');
  });

  test('malformed JSON, non-objects and bad ids are decode errors', () => {
    assert.throws(() => decodeFrame('{"id":1'), FrameDecodeError);
    assert.throws(() => decodeFrame('[1,2]'), FrameDecodeError);
    assert.throws(() => decodeFrame('{"id":-1,"connect":{}}'), FrameDecodeError);
    assert.throws(() => decodeFrame('{"id":"1","connect":{}}'), FrameDecodeError);
  });
});

describe('encoders', () => {
  test('a publication push embeds raw JSON, always writes user and client, omits zero offset', () => {
    assert.equal(
      encodePublicationPush('chat:1', {
        data: '{"a":1}',
        info: { user: '', client: 'c', connInfo: '{"n":"A"}' },
      }),
      '{"push":{"channel":"chat:1","pub":{"data":{"a":1},"info":{"user":"","client":"c","conn_info":{"n":"A"}}}}}',
    );
    assert.equal(
      encodePublicationPush('c', { data: '[1]', offset: 7, tags: { k: 'v' } }),
      '{"push":{"channel":"c","pub":{"data":[1],"offset":7,"tags":{"k":"v"}}}}',
    );
  });

  test('raw newlines (whitespace in JSON) are stripped so frames never contain blank lines', () => {
    assert.equal(safeRawJson('{\n"a": "x\\ny"\n}'), '{"a": "x\\ny"}');
    const push = encodePublicationPush('c', { data: '{\n\n"a":1}' });
    assert.equal(push.includes('\n'), false);
  });

  test('error replies carry temporary only for temporary codes', () => {
    assert.equal(
      encodeErrorReply(4, new ClientError(103)),
      '{"id":4,"error":{"code":103,"message":"permission denied"}}',
    );
    assert.equal(
      encodeErrorReply(5, new ClientError(111)),
      '{"id":5,"error":{"code":111,"message":"too many requests","temporary":true}}',
    );
    assert.equal(
      encodeUnsubscribePush('c', 2500, 'insufficient state'),
      '{"push":{"channel":"c","unsubscribe":{"code":2500,"reason":"insufficient state"}}}',
    );
  });

  test('an unreachable broker is reply error 503 temporary; an unreadable reply stays 100', () => {
    const unavailable = new BrokerError('broker_unavailable', 'redis: not connected (reconnecting)');
    assert.equal(
      encodeErrorReply(6, toClientError(unavailable)),
      '{"id":6,"error":{"code":503,"message":"broker unavailable","temporary":true}}',
    );
    assert.equal(toClientError(new BrokerError('broker_closed', 'closed')).protocolCode, 503);
    assert.equal(
      encodeErrorReply(7, new ClientError(503)),
      '{"id":7,"error":{"code":503,"message":"service unavailable","temporary":true}}',
    );
    assert.equal(
      encodeErrorReply(8, toClientError(new BrokerError('broker_bad_reply', 'malformed publication'))),
      '{"id":8,"error":{"code":100,"message":"internal server error","temporary":true}}',
    );
  });

  test('terminal disconnect codes follow the JS client rule', () => {
    assert.equal(isTerminalDisconnect(3500), true);
    assert.equal(isTerminalDisconnect(4501), true);
    assert.equal(isTerminalDisconnect(3001), false);
    assert.equal(isTerminalDisconnect(4000), false);
  });
});
