import app from '@adonisjs/core/services/app'
import { stores } from '@adonisjs/limiter'
import type { LimiterManagerStoreFactory } from '@adonisjs/limiter/types'
import type { RedisConnection } from '@adonisjs/redis'

/**
 * The rate limiter's Redis store, loaded on first use.
 *
 * With `stores.redis()` in config/limiter.ts, the limiter resolves the
 * Redis manager when it starts, and with it ioredis: a few MB in every web
 * process, while most installations count requests in memory or in the
 * database (the setting `rate_limit.store`). Here the store is a factory
 * that the limiter calls only for `limiter.use('redis')`; RequestLimits
 * awaits loadRedisLimiterStore() before that first use.
 */
const OPTIONS = {
  connectionName: 'main' as const,
  // Fail at once while Redis is down, so the request is counted in
  // memory instead of waiting (app/services/request_limits.ts).
  rejectIfRedisNotReady: true,
}

let factory: LimiterManagerStoreFactory | null = null
let loading: Promise<RedisConnection> | null = null

/** Loads the Redis manager and the limiter's Redis store once; resolves with the connection the store uses. */
export function loadRedisLimiterStore(): Promise<RedisConnection> {
  loading ??= (async () => {
    factory = await stores.redis(OPTIONS).resolver(app)
    const { default: redis } = await import('@adonisjs/redis/services/main')
    return redis.connection(OPTIONS.connectionName) as RedisConnection
  })()
  return loading
}

/** The store factory of config/limiter.ts; loadRedisLimiterStore() must have resolved first. */
export const redisLimiterStore: LimiterManagerStoreFactory = (options) => {
  if (!factory) {
    throw new Error('the Redis rate-limit store is used before loadRedisLimiterStore() resolved')
  }
  return factory(options)
}
