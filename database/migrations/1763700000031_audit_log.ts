import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Who changed what, when, from where. Append-only: the app never updates
 * a row, and the database refuses it on both engines (trigger).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('audit_log', (table) => {
      table.bigIncrements('id')
      table.bigInteger('created_at').notNullable()
      // user | ace | system
      table.string('actor_kind', 8).notNullable()
      table.integer('actor_user_id').nullable()
      // the user's e-mail, ace:<os user> or system
      table.string('actor', 280).notNullable()
      table.string('action', 64).notNullable()
      table.string('subject_type', 32).notNullable()
      table.string('subject_id', 255).notNullable()
      // JSON, secrets masked
      table.text('before').nullable()
      table.text('after').nullable()
      table.string('ip', 64).nullable()
      table.string('request_id', 64).nullable()
      // Listing is newest first, by time alone or by actor / subject / action.
      table.index(['created_at', 'id'], 'audit_log_time')
      table.index(['actor', 'created_at', 'id'], 'audit_log_actor_time')
      table.index(['subject_type', 'subject_id', 'created_at', 'id'], 'audit_log_subject_time')
      table.index(['action', 'created_at', 'id'], 'audit_log_action_time')
    })

    this.defer(async (db) => {
      if (db.dialect.name === 'postgres') {
        await db.rawQuery(`CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$`)
        await db.rawQuery(`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
          FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`)
      } else {
        await db.rawQuery(`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
          BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`)
      }
    })
  }

  async down() {
    this.schema.dropTableIfExists('audit_log')
    this.defer(async (db) => {
      if (db.dialect.name === 'postgres')
        await db.rawQuery('DROP FUNCTION IF EXISTS audit_log_append_only()')
    })
  }
}
