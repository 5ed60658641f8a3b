import { defineConfig, stores } from '@adonisjs/limiter'

/**
 * Three stores: `memory` (per process, the default), `database` (shared by
 * every process on the same database) and `redis` (shared through the Redis
 * of config/redis.ts). The setting `rate_limit.store` picks one at run
 * time; the limits themselves are settings too.
 */
const limiterConfig = defineConfig({
  default: 'memory',
  stores: {
    memory: stores.memory({}),
    database: stores.database({
      tableName: 'rate_limits',
      clearExpiredByTimeout: true,
    }),
    redis: stores.redis({
      connectionName: 'main',
      // Fail at once while Redis is down, so the request is counted in
      // memory instead of waiting (app/services/request_limits.ts).
      rejectIfRedisNotReady: true,
    }),
  },
})

export default limiterConfig

declare module '@adonisjs/limiter/types' {
  export interface LimitersList extends InferLimiters<typeof limiterConfig> {}
}
