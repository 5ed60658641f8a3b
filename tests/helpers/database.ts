import db from '@adonisjs/lucid/services/db'
import installation from '#services/installation_service'
import settings from '#settings/settings_service'
import rateService from '#rates/rate_service'
import configCache from '#services/config_cache'
import limiter from '@adonisjs/limiter/services/main'
import { createAuditDeleteGuard, dropAuditDeleteGuard } from '#database/audit_log_guard'

/** Tables emptied between tests, children first. */
const TABLES = [
  'audit_log',
  'payment_sightings',
  'balance_seen',
  'balance_readings',
  'rpc_endpoints',
  'unmatched_payments',
  'chain_cursors',
  'callback_attempts',
  'callbacks',
  'payment_references',
  'provider_orders',
  'amount_locks',
  'orders',
  'rates',
  'wallets',
  'tokens',
  'chains',
  'settings',
  'api_keys',
  'users',
  'rate_limits',
  'sessions',
]

/** Drops every table of the test database and migrates it again. */
export async function recreateSchema() {
  const connection = db.connection()
  if (connection.dialect.name === 'postgres') {
    await connection.rawQuery('DROP SCHEMA IF EXISTS public CASCADE')
    await connection.rawQuery('CREATE SCHEMA public')
  } else {
    await connection.dialect.dropAllTables(['main'])
  }
  await installation.migrate()
}

/** What the installation seeded in this run for its administrator, once known (see resetDatabase). */
let seededAdmin: { user: Record<string, unknown>; audit: Record<string, unknown>[] } | null = null

/**
 * Empties the tables and installs the defaults again (with the test API
 * secret of bin/test.ts), so each test starts from a fresh installation.
 *
 * The administrator (ADMIN_EMAIL / ADMIN_PASSWORD of bin/test.ts) is put
 * back as the first installation of the run seeded it, its id, password
 * hash and audit entry included, before the seeders run (which then find
 * it and add nothing): hashing the same password again for every test was
 * two thirds of a reset's CPU (scrypt, about 50 ms). Everything else is
 * seeded anew.
 */
export async function resetDatabase() {
  for (const table of TABLES) {
    if (table === 'audit_log') await emptyAuditLog()
    else await db.from(table).delete()
  }
  settings.invalidate()
  configCache.invalidate()
  rateService.clearCache()
  // Not Redis: its clear() empties the whole Redis database; Redis tests use keys of their own.
  await limiter.clear(['memory', 'database'])
  if (seededAdmin) {
    await db.table('users').insert(seededAdmin.user)
    if (seededAdmin.audit.length > 0) await db.table('audit_log').multiInsert(seededAdmin.audit)
  }
  await installation.installDefaults(() => {})
  if (!seededAdmin) {
    const user = await db.from('users').orderBy('id').firstOrFail()
    const audit = await db
      .from('audit_log')
      .where({ subject_type: 'user', subject_id: String(user.id) })
      .orderBy('id')
    for (const row of audit) delete row.id
    seededAdmin = { user, audit }
  }
}

/** Number of rows of `table` matching `where`. */
export async function countRows(
  table: string,
  where: Record<string, unknown> = {}
): Promise<number> {
  const [row] = await db.from(table).where(where).count('* as total')
  return Number(row.total)
}

/**
 * Empties the append-only audit log between tests: the database refuses
 * DELETE there, so the guard is lifted and put back in one transaction
 * (never done by the app; see database/audit_log_guard.ts).
 */
export async function emptyAuditLog() {
  await db.transaction(async (trx) => {
    await dropAuditDeleteGuard(trx)
    await trx.from('audit_log').delete()
    await createAuditDeleteGuard(trx)
  })
}
