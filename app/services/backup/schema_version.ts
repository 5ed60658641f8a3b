import { sourceFiles } from '@adonisjs/lucid/utils'
import type { ApplicationService } from '@adonisjs/core/types'
import { OperatorError } from '#support/cli/operator_error'

/**
 * The schema version a database (or a backup of one) holds is the list of
 * migrations recorded in its `adonis_schema` table; its name is the latest
 * of them. A backup is restorable by this release when every migration it
 * records is one this release ships: it may lack some (an older backup,
 * migrated after the restore), never have more (a newer release's).
 */

/** The migration every database of this gateway starts with: its absence means "not ours". */
const FIRST_MIGRATION = 'database/migrations/1763700000001_create_core_tables'

/** Tables a backup must hold besides `adonis_schema` to be one of this gateway. */
export const REQUIRED_TABLES = ['orders', 'callbacks', 'settings', 'api_keys']

function naturalCompare(a: string, b: string) {
  return a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' })
}

/** Names of the migrations this release ships, as Lucid records them (`database/migrations/<file>`). */
export async function releaseMigrations(app: ApplicationService): Promise<string[]> {
  const connection = app.config.get<string>('database.connection')
  const config = app.config.get<{ migrations?: { paths?: string[]; naturalSort?: boolean } }>(
    `database.connections.${connection}`
  )
  const paths = config.migrations?.paths?.length ? config.migrations.paths : ['database/migrations']
  const names: string[] = []
  for (const path of paths) {
    const { files } = await sourceFiles(app.appRoot, path, true)
    names.push(...files.map((file) => file.name))
  }
  return names.sort(naturalCompare)
}

/** The short name of a migration, as the operator sees it ("1763700000102_rpc_endpoint_memory"). */
export function shortName(migration: string) {
  return migration.slice(migration.lastIndexOf('/') + 1)
}

export type SchemaVersion = {
  /** The latest migration recorded (its short name), or null when none is. */
  latest: string | null
  count: number
  /** Recorded by the backup, unknown to this release (a newer release's). */
  unknown: string[]
  /** Shipped by this release, not recorded by the backup (run after the restore). */
  pending: string[]
}

export function schemaVersion(recorded: string[], release: string[]): SchemaVersion {
  const sorted = [...recorded].sort(naturalCompare)
  const known = new Set(release)
  const held = new Set(recorded)
  return {
    latest: sorted.length > 0 ? shortName(sorted[sorted.length - 1]) : null,
    count: sorted.length,
    unknown: sorted.filter((name) => !known.has(name)),
    pending: release.filter((name) => !held.has(name)),
  }
}

/** How a version is printed: "1763700000102_rpc_endpoint_memory (23 migrations)". */
export function describeVersion(version: SchemaVersion) {
  return version.latest
    ? `${version.latest} (${version.count} migrations)`
    : 'none (no migration recorded)'
}

/**
 * Refuses a file that is not a backup of this gateway (no `adonis_schema`,
 * missing tables, or not started by our first migration) or one taken by a
 * newer release (migrations this one does not know).
 */
export function assertRestorable(
  file: string,
  found: { tables: string[]; migrations: string[] },
  release: string[]
): SchemaVersion {
  const tables = new Set(found.tables)
  const missing = ['adonis_schema', ...REQUIRED_TABLES].filter((table) => !tables.has(table))
  if (missing.length > 0 || !found.migrations.includes(FIRST_MIGRATION)) {
    const why =
      missing.length > 0
        ? `it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}`
        : 'its migrations are not this gateway’s'
    throw new OperatorError(`${file} is not a backup of this gateway: ${why}`)
  }
  const version = schemaVersion(found.migrations, release)
  if (version.unknown.length > 0) {
    const latestKnown = release.length > 0 ? shortName(release[release.length - 1]) : 'none'
    throw new OperatorError(
      `${file} was taken by a newer release: its schema ${describeVersion(version)} has ` +
        `${version.unknown.length} migration${version.unknown.length > 1 ? 's' : ''} this release does not know ` +
        `(${version.unknown.map(shortName).join(', ')}); this release's latest is ${latestKnown}. ` +
        'Restore it with the release that took it, or a newer one'
    )
  }
  return version
}
