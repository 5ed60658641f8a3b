import { defineConfig, stores } from '@adonisjs/limiter'

/**
 * Two stores: `memory` (per process, the default) and `database` (shared by
 * every process on the same database). The setting `rate_limit.store`
 * picks one at run time; the limits themselves are settings too.
 */
const limiterConfig = defineConfig({
  default: 'memory',
  stores: {
    memory: stores.memory({}),
    database: stores.database({
      tableName: 'rate_limits',
      clearExpiredByTimeout: true,
    }),
  },
})

export default limiterConfig

declare module '@adonisjs/limiter/types' {
  export interface LimitersList extends InferLimiters<typeof limiterConfig> {}
}
