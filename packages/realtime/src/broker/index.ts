export { newEpoch } from './epoch.ts';
export { BrokerError, type BrokerErrorCode } from './errors.ts';
export {
  MemoryBroker,
  type MemoryBrokerOptions,
  MemoryHub,
  type MemoryHubOptions,
  MemoryPresenceManager,
  type MemoryPresenceManagerOptions,
} from './memory.ts';
export {
  RedisBroker,
  type RedisBrokerOptions,
  RedisPresenceManager,
  type RedisPresenceManagerOptions,
} from './redis.ts';
export {
  keepAlive as keepRedisAlive,
  OutageAwareRedis,
  outageAwareOptions as outageAwareRedisOptions,
} from './redis-connection.ts';
export type * from './types.ts';
