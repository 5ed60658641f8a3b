import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * The database's refusal to delete audit rows (migration
 * 1763700000051). Kept here, with its removal, so that the migration's
 * up/down and the test helper that empties the table between tests
 * (tests/helpers/database.ts) create exactly the same guard.
 *
 * PostgreSQL: row-level BEFORE DELETE and statement-level BEFORE TRUNCATE
 * triggers calling the function that already refuses updates
 * (audit_log_append_only, migration 1763700000031). SQLite has no TRUNCATE;
 * with a DELETE trigger present its "DELETE FROM without WHERE" fast path
 * is off, so every row goes through the trigger.
 */
export async function createAuditDeleteGuard(client: QueryClientContract) {
  if (client.dialect.name === 'postgres') {
    await client.rawQuery(`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`)
    await client.rawQuery(`CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`)
  } else {
    await client.rawQuery(`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
      BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`)
  }
}

export async function dropAuditDeleteGuard(client: QueryClientContract) {
  if (client.dialect.name === 'postgres') {
    await client.rawQuery('DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log')
    await client.rawQuery('DROP TRIGGER IF EXISTS audit_log_no_delete ON audit_log')
  } else {
    await client.rawQuery('DROP TRIGGER IF EXISTS audit_log_no_delete')
  }
}
