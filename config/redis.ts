import env from '#start/env'
import type { InferConnections, RedisConnectionConfig } from '@adonisjs/redis/types'

/**
 * Redis is optional: it is connected to only when the setting
 * `rate_limit.store` is `redis` (request counts shared by every process).
 * While it is unreachable the limits are counted in memory (see
 * app/services/request_limits.ts), so reconnecting never stops: the
 * delay grows to 2 s between attempts.
 *
 * A plain object rather than `defineConfig()` of '@adonisjs/redis': that
 * module loads the Redis manager and ioredis, which a process counting
 * requests in memory or in the database never needs (the Redis manager is
 * made on first use: app/services/redis_limiter_store.ts).
 */
const redisConfig = {
  connection: 'main' as const,

  connections: {
    main: {
      host: env.get('REDIS_HOST', '127.0.0.1'),
      port: env.get('REDIS_PORT', 6379),
      password: env.get('REDIS_PASSWORD'),
      db: 0,
      keyPrefix: '',
      connectTimeout: 2000,
      retryStrategy(times) {
        return Math.min(times * 100, 2000)
      },
    } satisfies RedisConnectionConfig,
  },
}

export default redisConfig

declare module '@adonisjs/redis/types' {
  export interface RedisConnections extends InferConnections<typeof redisConfig> {}
}
