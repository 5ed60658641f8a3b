import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { SqliteWriter } from '#services/sqlite_writer'

type KnexClient<C = unknown> = {
  config: { connection?: { filename?: string } }
  acquireConnection(): Promise<C>
  releaseConnection(connection: C): Promise<unknown>
  emit(event: 'query', query: { sql: string; bindings: unknown[]; method: string }): boolean
}

/** The parts of node-postgres used here. */
type PgConnection = {
  query(config: {
    name: string
    text: string
    values: unknown[]
  }): Promise<{ rows: Record<string, unknown>[] }>
}

function knexClient<C>(): KnexClient<C> {
  return (db.connection().getWriteClient() as unknown as { client: KnexClient<C> }).client
}

/** Named PostgreSQL statements kept, at most this many (the SQL texts are a handful). */
const MAX_CACHED = 64

/**
 * PostgreSQL's hot path: a named prepared statement (node-postgres parses
 * it once per connection, then sends only Bind/Execute; PostgreSQL plans it
 * once it has seen it a few times) on a connection of the same knex pool.
 * `?` placeholders as in knex; the statement is reported as a knex `query`
 * event. Returns the rows.
 */
export class PgStatements {
  #names = new Map<string, { name: string; text: string }>()

  async query(sql: string, bindings: unknown[]): Promise<Record<string, unknown>[]> {
    let prepared = this.#names.get(sql)
    if (!prepared) {
      let position = 0
      const text = sql.replace(/\?/g, () => `$${++position}`)
      prepared = { name: `gw_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text }
      if (this.#names.size >= MAX_CACHED) this.#names.clear()
      this.#names.set(sql, prepared)
    }
    const client = knexClient<PgConnection>()
    const connection = await client.acquireConnection()
    try {
      client.emit('query', { sql, bindings, method: 'raw' })
      const { rows } = await connection.query({
        name: prepared.name,
        text: prepared.text,
        values: bindings,
      })
      return rows
    } finally {
      await client.releaseConnection(connection)
    }
  }
}

/**
 * SQLite's hot path: the order-creation writes on a thread of their own
 * (app/services/sqlite_writer.ts), with the database file of the default
 * connection; each statement it runs is reported as a knex `query` event
 * like any other, so query counting sees them.
 */
export const sqliteWriter = new SqliteWriter(
  () => String(knexClient().config.connection?.filename),
  (sql, bindings = []) => knexClient().emit('query', { sql, bindings, method: 'raw' })
)
export const pgStatements = new PgStatements()
