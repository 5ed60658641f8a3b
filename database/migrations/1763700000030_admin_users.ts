import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/** Existing rows made valid for the rules below (exported for its test). */
export async function normalizeUsers(db: QueryClientContract) {
  const rows: { id: number; email: string }[] = await db
    .from('users')
    .select('id', 'email')
    .orderBy('id')
  const seen = new Map<string, string>()
  for (const row of rows) {
    const lower = row.email.trim().toLowerCase()
    const other = seen.get(lower)
    if (other !== undefined) {
      // Merging two accounts would drop one's password; the operator decides.
      throw new Error(
        `users "${other}" and "${row.email}" differ only by case: rename or delete one, then migrate again`
      )
    }
    seen.set(lower, row.email)
  }
  for (const row of rows) {
    const lower = row.email.trim().toLowerCase()
    if (lower !== row.email) await db.from('users').where('id', row.id).update({ email: lower })
  }
  await db.from('users').whereNotIn('role', ['admin', 'viewer']).update({ role: 'viewer' })
  await db
    .from('users')
    .whereNull('password_changed_at')
    .update({ password_changed_at: db.raw('updated_at') })
}

/**
 * Administrators for the console: roles admin | viewer, e-mails compared
 * case-insensitively, and the columns two-factor sign-in and session
 * renewal need. Existing rows are kept: e-mails are lower-cased, an
 * unknown role becomes `viewer` (least privilege), and the password
 * counts as changed when the row was last updated.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('users', (table) => {
      // Sealed with the app's secret box (purpose users.totp_secret).
      table.text('totp_secret').nullable()
      table.bigInteger('totp_enabled_at').nullable()
      // The last accepted 30 s step: a code is never accepted twice.
      table.bigInteger('totp_last_step').nullable()
      // JSON array of scrypt hashes of the unused recovery codes.
      table.text('recovery_codes').nullable()
      // Sessions opened before this instant are no longer valid.
      table.bigInteger('password_changed_at').nullable()
      table.bigInteger('last_login_at').nullable()
    })

    this.defer(async (db) => {
      await normalizeUsers(db)
      // Both databases index expressions: a mixed-case row written around the service still collides.
      await db.rawQuery('CREATE UNIQUE INDEX users_email_lower_unique ON users (lower(email))')
    })
  }

  async down() {
    this.schema.raw('DROP INDEX IF EXISTS users_email_lower_unique')
    this.schema.alterTable('users', (table) => {
      for (const column of [
        'totp_secret',
        'totp_enabled_at',
        'totp_last_step',
        'recovery_codes',
        'password_changed_at',
        'last_login_at',
      ]) {
        table.dropColumn(column)
      }
    })
  }
}
