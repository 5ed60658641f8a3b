import db from '@adonisjs/lucid/services/db'
import installation from '#services/installation_service'
import settings from '#settings/settings_service'
import rateService from '#rates/rate_service'
import configCache from '#services/config_cache'
import limiter from '@adonisjs/limiter/services/main'
import { createAuditDeleteGuard, dropAuditDeleteGuard } from '#database/audit_log_guard'

/** Tables emptied between tests, children first. */
const TABLES = [
  'notification_deliveries',
  'notification_events',
  'notification_targets',
  'rate_answers',
  'rate_current',
  'rate_history',
  'rate_markups',
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

/** Every row the installation seeded in this run, table by table (see resetDatabase). */
let seeded: { table: string; rows: Record<string, unknown>[] }[] | null = null

/**
 * Empties the tables and installs the defaults again (with the test API
 * secret of bin/test.ts), so each test starts from a fresh installation.
 *
 * The first reset of the run seeds them (installation.installDefaults, as
 * `node ace setup` does) and keeps what it wrote; the next ones write those
 * same rows back, parents first, under new ids (but the administrator's).
 * A seeding per test was most of a reset: the administrator's password
 * hashed again (scrypt, about 50 ms of CPU), and on PostgreSQL about a
 * hundred statements, each a round trip. What the seeders write depends
 * only on the environment and the plugins of the process, the same for
 * the whole run;
 * tests/functional/seeders.spec.ts and installation.spec.ts run the
 * seeders themselves.
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
  if (seeded) {
    for (const { table, rows } of seeded) await db.table(table).multiInsert(rows)
    return
  }
  await installation.installDefaults(() => {})
  const snapshot: { table: string; rows: Record<string, unknown>[] }[] = []
  for (const table of [...TABLES].reverse()) {
    const rows = await db.from(table)
    // New ids, as a seeding gives: this process keeps state by id (an API key's last use).
    // The administrator keeps its own: its installation audit entry names it.
    if (table !== 'users') for (const row of rows) delete row.id
    if (rows.length > 0) snapshot.push({ table, rows })
  }
  seeded = snapshot
}

/** The id of a row just inserted, as `.returning('id')` gives it (a value, or an object on PostgreSQL). */
export function insertedId(row: unknown): number {
  return Number(typeof row === 'object' && row !== null ? (row as { id: unknown }).id : row)
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
