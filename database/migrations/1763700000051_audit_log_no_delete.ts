import { BaseSchema } from '@adonisjs/lucid/schema'
import { createAuditDeleteGuard, dropAuditDeleteGuard } from '#database/audit_log_guard'

/**
 * The audit log is append-only for deletions too: updates were already
 * refused (1763700000031); the database now refuses DELETE on both
 * engines, and TRUNCATE on PostgreSQL. Neither the console nor a bug nor
 * an injected statement on the app's connection can remove a row.
 */
export default class extends BaseSchema {
  async up() {
    this.defer((db) => createAuditDeleteGuard(db))
  }

  async down() {
    this.defer((db) => dropAuditDeleteGuard(db))
  }
}
