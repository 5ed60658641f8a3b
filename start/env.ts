/*
|--------------------------------------------------------------------------
| Environment variables
|--------------------------------------------------------------------------
|
| Every variable has a default so that a fresh clone starts without a
| `.env` file. APP_KEY, when absent, is generated once and kept in
| storage/app_key so that sessions and encrypted values survive restarts.
*/
import { Env } from '@adonisjs/core/env'
import { Secret } from '@adonisjs/core/helpers'
import { loadOrCreateAppKey } from '#support/app_key'

const APP_ROOT = new URL('../', import.meta.url)

const env = await Env.create(APP_ROOT, {
  NODE_ENV: Env.schema.enum.optional(['development', 'production', 'test'] as const),
  PORT: Env.schema.number.optional(),
  HOST: Env.schema.string.optional({ format: 'host' }),
  APP_URL: Env.schema.string.optional({ format: 'url', tld: false }),
  APP_KEY: (_key: string, value?: string) =>
    new Secret(value && value.trim() !== '' ? value : loadOrCreateAppKey(APP_ROOT)),
  // Keys that were APP_KEY before (comma-separated): still decrypt, never
  // encrypt. Kept only while `node ace secrets:reencrypt` moves values over.
  APP_KEY_PREVIOUS: (key: string, value?: string) => {
    const keys = (value ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '')
    if (keys.some((entry) => entry.length < 16)) {
      throw new Error(`${key}: every key must be at least 16 characters`)
    }
    return keys.map((entry) => new Secret(entry))
  },
  LOG_LEVEL: Env.schema.enum.optional([
    'fatal',
    'error',
    'warn',
    'info',
    'debug',
    'trace',
    'silent',
  ] as const),

  DB_CONNECTION: Env.schema.enum.optional(['sqlite', 'pg'] as const),
  SQLITE_PATH: Env.schema.string.optional(),
  PG_HOST: Env.schema.string.optional({ format: 'host' }),
  PG_PORT: Env.schema.number.optional(),
  PG_USER: Env.schema.string.optional(),
  PG_PASSWORD: Env.schema.string.optional(),
  PG_DB_NAME: Env.schema.string.optional(),

  RUN_JOBS: Env.schema.boolean.optional(),
  INITIAL_API_SECRET: Env.schema.string.optional(),
  ADMIN_EMAIL: Env.schema.string.optional({ format: 'email' }),
  ADMIN_PASSWORD: Env.schema.string.optional(),
})

/**
 * Defaults written back so that code reading process.env (the HTTP server
 * reads HOST and PORT itself) sees the same values as code reading `env`.
 */
if (env.get('HOST') === undefined) env.set('HOST', '127.0.0.1')
if (env.get('PORT') === undefined) env.set('PORT', 3333)
if (env.get('APP_URL') === undefined) {
  const host = env.get('HOST') === '0.0.0.0' ? 'localhost' : env.get('HOST')
  env.set('APP_URL', `http://${host}:${env.get('PORT')}`)
}

export default env
