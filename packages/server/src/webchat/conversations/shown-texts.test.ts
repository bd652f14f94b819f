import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testRedisUrl } from '@parley/testing/databases';
import type { Redis } from 'ioredis';
import { connectFailFastRedis } from '../../storage/redis-client.ts';
import type { Block } from '../messages/message.ts';
import { withShownText } from './conversation-engine.ts';
import { RedisShownTexts } from './shown-texts.ts';

describe('shown texts of streaming replies (Redis)', () => {
  let redis: Redis;
  before(async () => {
    const connection = connectFailFastRedis(testRedisUrl());
    await connection.ready;
    redis = connection.redis;
  });
  after(() => redis.disconnect());

  it('records many replies of one turn in one pipeline, keeps the newest text, expires and forgets', async () => {
    const prefix = `t${randomUUID()}:`;
    const shown = new RedisShownTexts(redis, { prefix, ttlMs: 60_000 });
    let pipelines = 0;
    const pipeline = redis.pipeline.bind(redis);
    redis.pipeline = ((...args: Parameters<Redis['pipeline']>) => {
      pipelines += 1;
      return pipeline(...args);
    }) as Redis['pipeline'];
    try {
      const ids = Array.from({ length: 20 }, () => randomUUID());
      await Promise.all([
        ...ids.map((id) => shown.record(id, 'Hello')),
        ...ids.map((id) => shown.record(id, 'Hello there')),
      ]);
      assert.equal(pipelines, 1, 'one round trip for the turn');
      for (const id of ids) assert.equal(await shown.longest(id), 'Hello there');
      const ttl = await redis.pttl(`${prefix}reply-shown:${ids[0]}`);
      assert.ok(ttl > 0 && ttl <= 60_000, `expires (${ttl} ms left)`);
      shown.forget(ids[0]!);
      // The DEL goes out first on the same connection, so the read after it finds nothing.
      assert.equal(await shown.longest(ids[0]!), undefined);
      assert.equal(await shown.longest(randomUUID()), undefined);
    } finally {
      redis.pipeline = pipeline;
    }
  });

  it('an unreachable Redis: records and reads reject (a takeover then waits rather than take words back)', async () => {
    const away = connectFailFastRedis('redis://127.0.0.1:1');
    await away.ready;
    try {
      const shown = new RedisShownTexts(away.redis, { prefix: 'away:' });
      await assert.rejects(shown.record(randomUUID(), 'text'));
      await assert.rejects(shown.longest(randomUUID()));
    } finally {
      away.redis.disconnect();
    }
  });
});

describe('a taken-over reply keeps the text that was shown', () => {
  const md = (content: string): Block => ({ id: 'm', type: 'markdown', content });
  const offer: Block = { id: 'q', type: 'quick_replies', options: [] } as unknown as Block;

  it('the longer shown text replaces the stored markdown in place; a shorter or missing one changes nothing', () => {
    assert.deepEqual(withShownText([md('Once upon'), offer], 'Once upon a time'), [
      md('Once upon a time'),
      offer,
    ]);
    assert.deepEqual(withShownText([md('Once upon a time')], 'Once upon'), [md('Once upon a time')]);
    assert.deepEqual(withShownText([md('Once')], undefined), [md('Once')]);
  });

  it('a reply stored before its first words gets a markdown block first', () => {
    const [first, ...rest] = withShownText([offer], 'Once upon');
    assert.deepEqual([first!.type, (first as { content: string }).content], ['markdown', 'Once upon']);
    assert.deepEqual(rest, [offer]);
  });
});
