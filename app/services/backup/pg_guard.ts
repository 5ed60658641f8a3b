import db from '@adonisjs/lucid/services/db'
import { OperatorError } from '#support/cli/operator_error'

/**
 * The advisory lock a starting process holds while it migrates
 * (MIGRATION_LOCK_KEY of app/services/installation_service.ts): held here
 * for the whole restore, so a server or worker started meanwhile waits
 * before it touches the database, then migrates what was restored.
 */
const MIGRATION_LOCK_KEY = 7_355_608

type Session = { release: () => Promise<void>; assertAlone: () => Promise<void> }

type Backend = {
  pid: number
  usename: string | null
  application_name: string | null
  client_addr: string | null
  state: string | null
}

/**
 * One session of our own on the gateway's database, holding the
 * migration lock. `assertAlone()` refuses while any other client session
 * is connected to the database (pg_stat_activity): every server and
 * worker of the gateway keeps connections while it runs jobs or serves,
 * and so does any other client (psql, a dashboard) that a restore would
 * pull the tables from under.
 */
export async function holdPgForRestore(): Promise<Session> {
  const knex = db.connection().getWriteClient()
  const session = await knex.client.acquireConnection()
  let locked = false
  const release = async () => {
    try {
      if (locked)
        await knex.raw('SELECT pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(session)
    } finally {
      locked = false
      await knex.client.releaseConnection(session)
    }
  }
  try {
    const result = await knex
      .raw('SELECT pg_try_advisory_lock(?) AS locked', [MIGRATION_LOCK_KEY])
      .connection(session)
    if (result.rows[0]?.locked !== true) {
      throw new OperatorError(
        'A process is migrating the database (a server or worker is starting): stop every process of the gateway, then run db:restore again'
      )
    }
    locked = true
    const assertAlone = async () => {
      const others: { rows: Backend[] } = await knex
        .raw(
          `SELECT pid, usename, application_name, client_addr::text AS client_addr, state
             FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            ORDER BY backend_start`
        )
        .connection(session)
      if (others.rows.length === 0) return
      const shown = others.rows
        .slice(0, 5)
        .map((row) => {
          const who = row.application_name ? `"${row.application_name}"` : 'a client'
          return `${who} as ${row.usename ?? '?'} from ${row.client_addr ?? 'a local socket'} (pid ${row.pid}, ${row.state ?? 'connected'})`
        })
        .join('; ')
      const more = others.rows.length > 5 ? ` and ${others.rows.length - 5} more` : ''
      throw new OperatorError(
        `The database ${await currentDatabase(knex, session)} is in use: ${others.rows.length} other ` +
          `connection${others.rows.length > 1 ? 's' : ''} (${shown}${more}). Stop every server and worker of the gateway ` +
          '(and other clients), then run db:restore again'
      )
    }
    return { release, assertAlone }
  } catch (error) {
    await release()
    throw error
  }
}

async function currentDatabase(
  knex: ReturnType<ReturnType<typeof db.connection>['getWriteClient']>,
  session: unknown
) {
  const result = await knex.raw('SELECT current_database() AS name').connection(session)
  return String(result.rows[0]?.name)
}
