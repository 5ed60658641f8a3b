import { resolve } from 'node:path'
import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class DbRestore extends OperatorCommand {
  static commandName = 'db:restore'
  static description =
    'Replace the database with a backup of db:backup (refused while a server or worker uses it, or for a newer schema); runs pending migrations after'

  @args.string({ description: 'Backup file written by db:backup' })
  declare file: string

  @flags.boolean({ description: 'Do not ask for confirmation' })
  declare force?: boolean

  async execute() {
    const { backupKindOf, kindName } = await import('#services/backup/backup_kind')
    const { assertRestorable, describeVersion, releaseMigrations, shortName } =
      await import('#services/backup/schema_version')
    const { configuredDatabase } = await import('#services/backup/configured_database')

    const file = resolve(this.file)
    const database = configuredDatabase(this.app)
    const fileKind = backupKindOf(file)
    if (!fileKind) {
      throw new OperatorError(
        `${file} is not a backup of this gateway: it is neither a SQLite database nor a pg_dump custom-format archive`
      )
    }
    if (fileKind !== database.kind) {
      throw new OperatorError(
        `${file} is a ${kindName(fileKind)} backup, but this gateway runs on ${kindName(database.kind)} ` +
          `(DB_CONNECTION=${database.kind}): restore it where DB_CONNECTION=${fileKind}`
      )
    }
    const release = await releaseMigrations(this.app)

    const confirm = async (version: string) => {
      if (this.force) return
      const question = `Replace everything in ${database.shownAs} with ${file} (schema ${version})?`
      if (!process.stdin.isTTY) {
        throw new OperatorError(
          `${question} There is no terminal to ask: run again with --force to confirm`
        )
      }
      if (!(await this.prompt.confirm(question, { default: false })))
        throw new OperatorError('Nothing was restored')
    }

    let version
    if (database.kind === 'sqlite') {
      const { PartialFile } = await import('#services/backup/partial_file')
      const { assertSqliteNotInUse, inspectSqlite, stageSqliteCopy, swapSqliteFile } =
        await import('#services/backup/sqlite_backup')
      const live = database.sqliteFile
      assertSqliteNotInUse(live)
      // The backup is copied beside the live file and checked there; the operator's file is never changed.
      const staged = PartialFile.beside(live)
      try {
        stageSqliteCopy(file, staged)
        version = assertRestorable(file, inspectSqlite(staged.path, file), release)
        await confirm(describeVersion(version))
        swapSqliteFile(staged.path, live)
      } finally {
        staged.discard()
      }
    } else {
      const { inspectPgArchive, pgToolEnv, restorePg } = await import('#services/backup/pg_backup')
      const { holdPgForRestore } = await import('#services/backup/pg_guard')
      const contents = await inspectPgArchive(
        file,
        file,
        pgToolEnv(database.pg, 'gateway db:restore')
      )
      version = assertRestorable(file, contents, release)
      const guard = await holdPgForRestore()
      try {
        await guard.assertAlone()
        await confirm(describeVersion(version))
        await guard.assertAlone()
        await restorePg(database.pg, file)
      } finally {
        await guard.release()
      }
    }
    this.logger.success(
      `Restored ${file} into ${database.shownAs}; schema ${describeVersion(version)}`
    )

    if (version.pending.length > 0) {
      const { default: installation } = await import('#services/installation_service')
      try {
        const ran = await installation.migrate()
        this.logger.info(
          `The backup was older than this release: ran ${ran.length} migration${ran.length === 1 ? '' : 's'} (${ran.map(shortName).join(', ')})`
        )
      } catch (error) {
        throw new OperatorError(
          `Restored, but its migrations to this release failed: ${(error as Error).message}. Fix the cause and run node ace migration:run`
        )
      }
    } else {
      this.logger.info('Its schema is this release’s: no migration to run')
    }
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const [orders] = await db.from('orders').count('* as total')
    const [callbacks] = await db.from('callbacks').count('* as total')
    this.logger.info(
      `The database now holds ${Number(orders.total)} orders and ${Number(callbacks.total)} callbacks`
    )
  }
}
