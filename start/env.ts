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
import { loadOrCreateAppKey } from '#support/crypto/app_key'
import { parseTrustProxy } from '#support/http/trust_proxy'
import { parseBenchRoutes } from '#support/http/bench_routes_flag'

const APP_ROOT = new URL('../', import.meta.url)

/** A duration in seconds above 0, `fallback` when unset. */
const seconds = (fallback: number) => (key: string, value?: string) => {
  if (value === undefined || value.trim() === '') return fallback
  const parsed = Number(value)
  if (!Number.isFinite(parsed) || parsed <= 0) {
    throw new Error(`${key} must be a number of seconds above 0, not "${value}"`)
  }
  return parsed
}

/** Paths the gateway itself serves: the console cannot take them over. */
const RESERVED_PATHS = ['/payments', '/pay', '/cashier', '/assets', '/health', '/metrics']

function parseAdminPath(key: string, value?: string): string {
  const raw = (value ?? '').trim()
  if (raw === '') return '/admin'
  const path = raw.replace(/\/+$/, '')
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) {
    throw new Error(
      `${key} must be a path such as /admin or /ops/console (letters, digits, . _ ~ -), not "${value}"`
    )
  }
  const reserved = RESERVED_PATHS.find((prefix) => path === prefix || path.startsWith(`${prefix}/`))
  if (reserved) throw new Error(`${key} cannot be under ${reserved}: the gateway serves that path`)
  return path
}

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
  // Benchmark-only routes under /__bench (start/bench_routes.ts): refused when NODE_ENV=production.
  BENCH_ROUTES: (key: string, value?: string) => parseBenchRoutes(key, value, process.env.NODE_ENV),
  // Plugins: PLUGINS=a,b keeps only those, PLUGINS=-c,-d removes those;
  // PLUGIN_MODULES adds plugin modules (paths from the app root or npm packages).
  PLUGINS: Env.schema.string.optional(),
  PLUGIN_MODULES: Env.schema.string.optional(),
  INITIAL_API_SECRET: Env.schema.string.optional(),
  ADMIN_EMAIL: Env.schema.string.optional({ format: 'email' }),
  ADMIN_PASSWORD: Env.schema.string.optional(),
  // Where the console lives (default /admin) and how long an idle console session lasts.
  ADMIN_PATH: (key: string, value?: string) => parseAdminPath(key, value),
  ADMIN_IDLE_MINUTES: Env.schema.number.optional(),

  // Whose X-Forwarded-For is believed (app/support/http/trust_proxy.ts); a bad
  // value stops the start with a message naming it.
  TRUST_PROXY: (_key: string, value?: string) => parseTrustProxy(value),

  // Slow clients are dropped: all headers within HTTP_HEADERS_TIMEOUT, the
  // whole request within HTTP_REQUEST_TIMEOUT, idle keep-alive connections
  // after HTTP_KEEP_ALIVE_TIMEOUT (seconds).
  HTTP_HEADERS_TIMEOUT: seconds(10),
  HTTP_REQUEST_TIMEOUT: seconds(30),
  HTTP_KEEP_ALIVE_TIMEOUT: seconds(5),

  // Redis, used only when the setting rate_limit.store is `redis`.
  REDIS_HOST: Env.schema.string.optional({ format: 'host' }),
  REDIS_PORT: Env.schema.number.optional(),
  REDIS_PASSWORD: Env.schema.secret.optional(),
})

/**
 * Defaults written back so that code reading process.env (the HTTP server
 * reads HOST and PORT itself) sees the same values as code reading `env`.
 */
if (env.get('HOST') === undefined) env.set('HOST', '127.0.0.1')
if (env.get('PORT') === undefined) env.set('PORT', 3333)
if (env.get('HTTP_HEADERS_TIMEOUT') > env.get('HTTP_REQUEST_TIMEOUT')) {
  throw new Error('HTTP_HEADERS_TIMEOUT cannot be longer than HTTP_REQUEST_TIMEOUT')
}
if (env.get('APP_URL') === undefined) {
  const host = env.get('HOST') === '0.0.0.0' ? 'localhost' : env.get('HOST')
  env.set('APP_URL', `http://${host}:${env.get('PORT')}`)
}

export default env
