import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Lua scripts that keep each multi-key change atomic in Redis (docs/protocol.md "Redis broker layout", after
 * LIB `internal/redis_lua/*.lua`). Time and new epochs come from the caller: scripts stay deterministic.
 */
export interface RedisScript {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): RedisScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Publish, optionally appending to the channel stream, optionally idempotent.
 * KEYS: stream, meta hash, idempotency result key ('' = none).
 * ARGV: payload, size, ttl ms, meta ttl ms ('0' = none), new epoch, PUB/SUB channel, result ttl ms, history '1'/'0'.
 * Returns {published 1|0, "offset:epoch" | ""}; the PUB/SUB message is `p<offset>:<epoch>:<payload>` (both empty
 * without history) so subscribers learn the position with the publication.
 */
export const PUBLISH = script(`
local result_key = KEYS[3]
if result_key ~= '' then
  local previous = redis.call('get', result_key)
  if previous then return {0, previous} end
end
local position = ''
local header = 'p::'
if ARGV[8] == '1' then
  local epoch = redis.call('hget', KEYS[2], 'e')
  if not epoch then
    epoch = ARGV[5]
    redis.call('hset', KEYS[2], 'e', epoch)
  end
  local offset = redis.call('hincrby', KEYS[2], 's', 1)
  -- A restarted offset means a new epoch: a stream left over from the old one must not mix in
  -- (docs/protocol.md "Streams").
  if offset == 1 then redis.call('del', KEYS[1]) end
  if ARGV[4] ~= '0' then redis.call('pexpire', KEYS[2], ARGV[4]) end
  redis.call('xadd', KEYS[1], 'MAXLEN', ARGV[2], offset, 'd', ARGV[1])
  -- The whole window expires ttl after the last publish, not per item (Centrifugo history_ttl).
  redis.call('pexpire', KEYS[1], ARGV[3])
  position = offset .. ':' .. epoch
  header = 'p' .. position .. ':'
end
redis.call('publish', ARGV[6], header .. ARGV[1])
if result_key ~= '' then redis.call('set', result_key, position, 'PX', ARGV[7]) end
return {1, position}
`);

/**
 * Read the stream position and optionally a range; creates the meta (new epoch) on first read and refreshes its
 * expiry. KEYS: stream, meta hash. ARGV: new epoch, meta ttl ms ('0' = none), limit (-1 = all, 0 = position only),
 * 'xrange' | 'xrevrange', from, to. Returns {top offset, epoch, entries}.
 */
export const HISTORY = script(`
local epoch = redis.call('hget', KEYS[2], 'e')
if not epoch then
  epoch = ARGV[1]
  redis.call('hset', KEYS[2], 'e', epoch)
end
local top = redis.call('hget', KEYS[2], 's') or '0'
if ARGV[2] ~= '0' then redis.call('pexpire', KEYS[2], ARGV[2]) end
local limit = tonumber(ARGV[3])
if limit == 0 then return {top, epoch, {}} end
local entries
if limit > 0 then
  entries = redis.call(ARGV[4], KEYS[1], ARGV[5], ARGV[6], 'COUNT', limit)
else
  entries = redis.call(ARGV[4], KEYS[1], ARGV[5], ARGV[6])
end
return {top, epoch, entries}
`);

/**
 * Add or refresh a presence entry. KEYS: data hash, expiry zset. ARGV: client id, info JSON, expires-at ms, ttl ms.
 * The keys themselves only ever get a longer TTL, so one short-lived entry cannot take the others with it.
 */
export const PRESENCE_ADD = script(`
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[4])
for _, key in ipairs(KEYS) do
  if redis.call('pttl', key) < ttl then redis.call('pexpire', key, ttl) end
end
return 1
`);

/** KEYS: data hash, expiry zset. ARGV: client id. */
export const PRESENCE_REMOVE = script(`
redis.call('hdel', KEYS[1], ARGV[1])
redis.call('zrem', KEYS[2], ARGV[1])
return 1
`);

const DROP_EXPIRED = `
local expired = redis.call('zrangebyscore', KEYS[2], '-inf', ARGV[1])
if #expired > 0 then
  -- unpack() has a stack limit; delete in chunks.
  for i = 1, #expired, 1000 do
    redis.call('hdel', KEYS[1], unpack(expired, i, math.min(i + 999, #expired)))
  end
  redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
end
`;

/** KEYS: data hash, expiry zset. ARGV: now ms. Returns HGETALL of the live entries. */
export const PRESENCE_GET = script(`${DROP_EXPIRED}
return redis.call('hgetall', KEYS[1])
`);

/** KEYS: data hash, expiry zset. ARGV: now ms. Returns {clients, distinct users} ("" counts as one user). */
export const PRESENCE_STATS = script(`${DROP_EXPIRED}
local values = redis.call('hvals', KEYS[1])
local users = {}
local num_users = 0
for _, value in ipairs(values) do
  local user = cjson.decode(value)['user']
  if not users[user] then
    users[user] = true
    num_users = num_users + 1
  end
end
return {#values, num_users}
`);

/** EVALSHA, loading the script with EVAL when this Redis has not seen it yet (after a restart or flush). */
export async function runScript(
  redis: Redis,
  { lua, sha }: RedisScript,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return await redis.eval(lua, keys.length, ...keys, ...args);
  }
}
