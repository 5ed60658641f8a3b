import { assert } from '@japa/assert'
import { apiClient } from '@japa/api-client'
import app from '@adonisjs/core/services/app'
import type { Config } from '@japa/runner/types'
import { pluginAdonisJS } from '@japa/plugin-adonisjs'
import { spec } from '@japa/runner/reporters'
import testUtils from '@adonisjs/core/services/test_utils'
import { counts } from '#tests/reporters/counts_reporter'
import { recreateSchema } from '#tests/helpers/database'
import { killLeftoverProcesses } from '#tests/helpers/processes'

export const plugins: Config['plugins'] = [assert(), apiClient(), pluginAdonisJS(app)]

export const reporters: Config['reporters'] = {
  activated: ['spec', 'counts'],
  list: [spec(), counts()],
}

/**
 * Once per run: the test database is emptied and migrated from scratch,
 * and the HTTP server is started for the functional suite.
 */
export const runnerHooks: Required<Pick<Config, 'setup' | 'teardown'>> = {
  setup: [() => recreateSchema()],
  teardown: [() => killLeftoverProcesses()],
}

export const configureSuite: Config['configureSuite'] = (suite) => {
  if (['browser', 'functional', 'e2e'].includes(suite.name)) {
    return suite.setup(() => testUtils.httpServer().start())
  }
}
