import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class DbBackup extends OperatorCommand {
  static commandName = 'db:backup'
  static description =
    'Back up the database while the gateway runs (SQLite: online backup API; PostgreSQL: pg_dump) to storage/backups/ or --to FILE, mode 0600'

  @flags.string({
    description:
      'File to write (its directory must exist); default storage/backups/gateway-<kind>-<UTC time>.<ext>',
  })
  declare to?: string

  async execute() {
    const { PartialFile, cleaningUpOnSignal } = await import('#services/backup/partial_file')
    const { defaultBackupPath, formatSize, kindName } = await import('#services/backup/backup_kind')
    const { describeVersion, releaseMigrations, schemaVersion } =
      await import('#services/backup/schema_version')
    const { configuredDatabase } = await import('#services/backup/configured_database')

    if (this.to !== undefined && this.to.trim() === '')
      throw new OperatorError('--to needs a file name')
    const database = configuredDatabase(this.app)
    const target =
      this.to !== undefined
        ? resolve(this.to)
        : defaultBackupPath(this.app.makePath('storage'), database.kind)
    // The default directory is ours to create (owner only); a --to directory is the operator's.
    if (this.to === undefined) mkdirSync(dirname(target), { recursive: true, mode: 0o700 })

    let partial: ReturnType<typeof PartialFile.create> | undefined
    let contents
    try {
      partial = PartialFile.create(target)
      const writing = partial
      contents = await cleaningUpOnSignal(
        () => writing.discard(),
        async () => {
          if (database.kind === 'pg') {
            const { backupPg } = await import('#services/backup/pg_backup')
            return backupPg(database.pg, writing)
          }
          const { backupSqlite } = await import('#services/backup/sqlite_backup')
          return backupSqlite(database.sqliteFile, writing)
        }
      )
      writing.commit()
    } catch (error) {
      partial?.discard()
      if (error instanceof OperatorError)
        throw new OperatorError(`${error.message}. No backup was written`)
      throw new OperatorError(
        `The backup failed: ${(error as Error).message}. No backup was written`
      )
    }

    const version = schemaVersion(contents.migrations, await releaseMigrations(this.app))
    this.logger.success(`Backup written: ${target}`)
    this.logger.info(`size: ${formatSize(partial!.size)}`)
    this.logger.info(`database: ${kindName(database.kind)}, ${database.shownAs}`)
    this.logger.info(`schema: ${describeVersion(version)}`)
    this.logger.info(
      'It holds order data and secrets encrypted with APP_KEY: keep it private, and keep APP_KEY somewhere else (docs/backup.md)'
    )
  }
}
