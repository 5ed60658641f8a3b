import db from '@adonisjs/lucid/services/db'
import readiness from '#services/readiness'
import { plural, result, type CheckResult, type DoctorContext } from '#services/doctor/doctor_check'

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

/** Payers and merchants reach the gateway at APP_URL: it must be https outside a developer's machine. */
export function appUrlCheck(context: DoctorContext): CheckResult {
  const title = 'Public address (APP_URL)'
  const fix =
    'Set APP_URL to the https address payers and merchants use, e.g. APP_URL=https://pay.example.com (TLS at your proxy, with TRUST_PROXY set)'
  let url: URL
  try {
    url = new URL(context.appUrl)
  } catch {
    return result('app_url', title, 'problem', `APP_URL "${context.appUrl}" is not a URL`, fix)
  }
  if (url.protocol === 'https:') return result('app_url', title, 'ok', `${url.origin} uses https`)
  const local = LOCAL_HOSTS.has(url.hostname) || url.hostname.endsWith('.localhost')
  if (local && context.nodeEnv !== 'production') {
    return result(
      'app_url',
      title,
      'ok',
      `${url.origin} is this machine (fine while developing; use https in production)`
    )
  }
  return result(
    'app_url',
    title,
    'warning',
    `${url.origin} is not https: cashier pages, callbacks' links and the console session travel in clear`,
    fix
  )
}

/**
 * Example and placeholder keys seen in documentation and starter files:
 * whoever copied one shares it with everyone who did.
 */
const KNOWN_KEYS = new Set(
  [
    'changeme',
    'change-me',
    'secret',
    'app_key',
    'appkey',
    'your-app-key',
    'your_app_key',
    'your-secret-key',
    'your-32-character-random-string',
    'replace-with-a-random-string-of-32-characters',
    'please-change-this-key-32-characters',
    '0123456789abcdef0123456789abcdef',
    '00000000000000000000000000000000',
    'abcdefghijklmnopqrstuvwxyz123456',
  ].map((key) => key.toLowerCase())
)

const MIN_KEY_LENGTH = 32
const KEY_FIX =
  'Set APP_KEY to a new random value (e.g. `openssl rand -base64 32`), list the old one in APP_KEY_PREVIOUS, then run `node ace secrets:reencrypt`'

/** APP_KEY encrypts the sessions and the stored secrets (API secrets, RPC keys, 2FA). */
export function appKeyCheck(context: DoctorContext): CheckResult {
  const title = 'Encryption key (APP_KEY)'
  const key = context.appKey.trim()
  if (key === '') return result('app_key', title, 'problem', 'APP_KEY is empty', KEY_FIX)
  const lower = key.toLowerCase()
  if (
    KNOWN_KEYS.has(lower) ||
    /^(.)\1*$/.test(key) ||
    /^(changeme|example|secret|your)/.test(lower)
  ) {
    return result(
      'app_key',
      title,
      'problem',
      'APP_KEY is a placeholder or example value that others know too',
      KEY_FIX
    )
  }
  if (key.length < MIN_KEY_LENGTH) {
    return result(
      'app_key',
      title,
      'problem',
      `APP_KEY has ${key.length} characters: at least ${MIN_KEY_LENGTH} random ones are needed`,
      KEY_FIX
    )
  }
  if (new Set(key).size < 10) {
    return result(
      'app_key',
      title,
      'problem',
      `APP_KEY uses only ${new Set(key).size} distinct characters: it is not random`,
      KEY_FIX
    )
  }
  if (
    context.generatedAppKey !== '' &&
    key === context.generatedAppKey &&
    context.nodeEnv === 'production'
  ) {
    return result(
      'app_key',
      title,
      'warning',
      'APP_KEY is not set: the key generated in storage/app_key is used, and losing storage/ makes every stored secret unreadable',
      'Copy storage/app_key into the environment as APP_KEY and back it up apart from the database'
    )
  }
  return result(
    'app_key',
    title,
    'ok',
    context.generatedAppKey === key
      ? 'generated into storage/app_key (back it up)'
      : 'set, long and not a known value'
  )
}

/** The console moves money (mark paid, wallets): at least one admin should need a second factor. */
export async function adminTwoFactorCheck(): Promise<CheckResult> {
  const title = 'Console administrators with 2FA'
  const rows = await db
    .from('users')
    .where('role', 'admin')
    .select(
      db.raw('COUNT(*) AS total'),
      db.raw('SUM(CASE WHEN totp_enabled_at IS NOT NULL THEN 1 ELSE 0 END) AS enrolled')
    )
  const total = Number(rows[0]?.total ?? 0)
  const enrolled = Number(rows[0]?.enrolled ?? 0)
  if (total === 0) {
    return result(
      'admin_2fa',
      title,
      'warning',
      'No admin account exists: nobody can sign in to the console',
      'node ace admin:create <email>, then enrol 2FA on its Account page'
    )
  }
  if (enrolled === 0) {
    return result(
      'admin_2fa',
      title,
      'warning',
      `None of the ${plural(total, 'admin account')} has two-factor sign-in: a stolen password opens the console`,
      'Sign in and turn on two-factor authentication on the console’s Account page'
    )
  }
  return result(
    'admin_2fa',
    title,
    'ok',
    `${enrolled} of ${plural(total, 'admin account')} with 2FA`
  )
}

/** The schema of this release is applied (the same check as GET /health/ready). */
export async function migrationsCheck(): Promise<CheckResult> {
  const title = 'Database migrations'
  readiness.reset()
  const state = await readiness.check()
  if (state.checks.database === 'unreachable' && (await answers())) {
    return result(
      'migrations',
      title,
      'problem',
      'The database answers but holds no schema: no migration was ever applied',
      'node ace migration:run --force (npm start does it on its first start)'
    )
  }
  if (state.checks.database !== 'ok') {
    return result(
      'migrations',
      title,
      'problem',
      `The database is ${state.checks.database === 'timeout' ? 'not answering' : 'unreachable'}`,
      'Check DB_CONNECTION and the PG_* / SQLITE_PATH settings, and that the database is running'
    )
  }
  const pending = state.pending_migrations ?? []
  if (pending.length > 0) {
    return result(
      'migrations',
      title,
      'problem',
      `${plural(pending.length, 'migration')} not applied: ${pending.map((name) => name.split('/').pop()).join(', ')}`,
      'node ace migration:run --force (GET /health/ready answers 503 until then)'
    )
  }
  if (state.checks.migrations !== 'ok') {
    return result(
      'migrations',
      title,
      'warning',
      'Could not tell which migrations are applied',
      'node ace migration:status'
    )
  }
  return result('migrations', title, 'ok', 'Every migration of this release is applied')
}

/** The database takes a query (readiness found no migrations table: an empty database). */
async function answers(): Promise<boolean> {
  try {
    await db.rawQuery('SELECT 1')
    return true
  } catch {
    return false
  }
}
