import type { ApplicationService } from '@adonisjs/core/types'
import type { DatabaseKind } from '#services/backup/backup_kind'
import type { PgConnection } from '#services/backup/pg_backup'

/** The database this gateway is configured for (config/database.ts), as the backup commands need it. */
export type ConfiguredDatabase =
  | { kind: 'sqlite'; sqliteFile: string; shownAs: string }
  | { kind: 'pg'; pg: PgConnection; shownAs: string }

export function configuredDatabase(app: ApplicationService): ConfiguredDatabase {
  const kind = app.config.get<string>('database.connection') as DatabaseKind
  if (kind === 'pg') {
    const pg = app.config.get<PgConnection>('database.connections.pg.connection')
    return { kind, pg, shownAs: `database "${pg.database}" on ${pg.host}:${pg.port} as ${pg.user}` }
  }
  const sqliteFile = app.config.get<string>('database.connections.sqlite.connection.filename')
  return { kind: 'sqlite', sqliteFile, shownAs: sqliteFile }
}
