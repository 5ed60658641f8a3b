import { defineConfig, stores } from '@adonisjs/limiter'
import { redisLimiterStore } from '#services/redis_limiter_store'

/**
 * Three stores: `memory` (per process, the default), `database` (shared by
 * every process on the same database) and `redis` (shared through the Redis
 * of config/redis.ts). The setting `rate_limit.store` picks one at run
 * time; the limits themselves are settings too. The Redis store is
 * loaded on first use (app/services/redis_limiter_store.ts), so that a
 * process counting in memory or in the database never loads ioredis.
 */
const limiterConfig = defineConfig({
  default: 'memory',
  stores: {
    memory: stores.memory({}),
    database: stores.database({
      tableName: 'rate_limits',
      clearExpiredByTimeout: true,
    }),
    redis: redisLimiterStore,
  },
})

export default limiterConfig

declare module '@adonisjs/limiter/types' {
  export interface LimitersList extends InferLimiters<typeof limiterConfig> {}
}
