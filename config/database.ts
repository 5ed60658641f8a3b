import { mkdirSync } from 'node:fs'
import { dirname, isAbsolute } from 'node:path'
import env from '#start/env'
import app from '@adonisjs/core/services/app'
import { defineConfig } from '@adonisjs/lucid'
import { SQLITE_PRAGMAS } from '#support/database/sqlite_pragmas'
import { pluginMigrationPaths } from '#plugin_host/plugin_migrations'

/**
 * Models declare their columns themselves (amounts as decimal strings,
 * times as epoch milliseconds), so Lucid's schema-class generation is off.
 *
 * SQLite (embedded, default) keeps its file under storage/; PostgreSQL is
 * chosen with DB_CONNECTION=pg and the PG_* variables.
 */
const sqlitePath = (() => {
  const configured = env.get('SQLITE_PATH', 'storage/gateway.sqlite3')
  const file = isAbsolute(configured) ? configured : app.makePath(configured)
  // better-sqlite3 refuses to create a file in a missing directory.
  mkdirSync(dirname(file), { recursive: true })
  return file
})()

/** The core's migrations, then the plugins' (app/plugin_host/plugin_migrations.ts). */
const migrations = {
  naturalSort: true,
  paths: [
    'database/migrations',
    ...pluginMigrationPaths(app.makePath(), env.get('PLUGIN_MODULES', '') ?? ''),
  ],
}

/**
 * `node ace db:seed` runs the one seeder of this folder, which runs the
 * installation seeders in their order (database/seeders/main/index_seeder.ts).
 */
const seeders = {
  paths: ['./database/seeders/main'],
}

const dbConfig = defineConfig({
  connection: env.get('DB_CONNECTION', 'sqlite'),
  prettyPrintDebugQueries: false,
  connections: {
    sqlite: {
      client: 'better-sqlite3',
      connection: {
        filename: sqlitePath,
      },
      useNullAsDefault: true,
      migrations,
      seeders,
      schemaGeneration: { enabled: false },
      pool: {
        // One writer: WAL lets readers in other processes proceed, and a
        // busy writer is waited for rather than failing at once.
        afterCreate: (conn: any, done: (error: Error | null, conn: any) => void) => {
          for (const pragma of SQLITE_PRAGMAS) conn.pragma(pragma)
          done(null, conn)
        },
      },
    },
    pg: {
      client: 'pg',
      connection: {
        host: env.get('PG_HOST', '127.0.0.1'),
        port: env.get('PG_PORT', 5432),
        user: env.get('PG_USER', 'postgres'),
        password: env.get('PG_PASSWORD', ''),
        database: env.get('PG_DB_NAME', 'crypto_pay'),
      },
      pool: { min: 0, max: 20 },
      migrations,
      seeders,
      schemaGeneration: { enabled: false },
    },
  },
})

export default dbConfig
