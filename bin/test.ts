/*
|--------------------------------------------------------------------------
| Test runner entry point (`npm test` → `node ace test`)
|--------------------------------------------------------------------------
|
| Tests never touch the application's own database: SQLite goes to
| storage/test.sqlite3 and PostgreSQL to the `test` database unless
| TEST_PG_DB_NAME says otherwise.
*/
process.env.NODE_ENV = 'test'
process.env.SQLITE_PATH = process.env.TEST_SQLITE_PATH ?? 'storage/test.sqlite3'
process.env.PG_DB_NAME = process.env.TEST_PG_DB_NAME ?? 'test'
process.env.RUN_JOBS = 'false'
process.env.LOG_LEVEL ??= 'silent'
process.env.INITIAL_API_SECRET = 'test-secret-0123456789abcdef'
process.env.ADMIN_EMAIL = 'admin@example.test'
process.env.ADMIN_PASSWORD = 'test-admin-password'
process.env.HOST = '127.0.0.1'
process.env.PORT = process.env.TEST_PORT ?? '33331'
process.env.APP_URL = `http://127.0.0.1:${process.env.PORT}`

import 'reflect-metadata'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { configure, processCLIArgs, run } from '@japa/runner'
import { fileURLToPath } from 'node:url'
import { parseShard, shardSuites } from '../tests/sharding.js'

const APP_ROOT = new URL('../', import.meta.url)

const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('#start/env')
    })
    app.listen('SIGTERM', () => app.terminate())
    app.listenIf(app.managedByPm2, 'SIGINT', () => app.terminate())
  })
  .testRunner()
  .configure(async (app) => {
    const { runnerHooks, ...config } = await import('../tests/bootstrap.js')

    processCLIArgs(process.argv.splice(2))
    // TEST_SHARD=k/n: this run takes the k-th of n shares of the spec files (tests/sharding.ts).
    const shard = parseShard(process.env.TEST_SHARD)
    const suites = shard
      ? shardSuites(app.rcFile.tests.suites, fileURLToPath(APP_ROOT), shard)
      : app.rcFile.tests.suites
    configure({
      ...app.rcFile.tests,
      suites,
      ...config,
      ...{
        setup: runnerHooks.setup,
        teardown: runnerHooks.teardown.concat([() => app.terminate()]),
      },
    })
  })
  .run(() => run())
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
