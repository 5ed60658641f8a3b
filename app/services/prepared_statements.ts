import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'

/** The parts of better-sqlite3 used here (the package ships no types). */
type Statement = { reader: boolean; all(bindings: unknown[]): unknown[]; run(bindings: unknown[]): unknown }
type Connection = { prepare(sql: string): Statement; exec(sql: string): void; inTransaction: boolean }
type KnexClient<C = Connection> = {
  acquireConnection(): Promise<C>
  releaseConnection(connection: C): Promise<unknown>
  emit(event: 'query', query: { sql: string; bindings: unknown[]; method: string }): boolean
}

export type SqliteStep = { sql: string; bindings: (string | number)[] }

/** The parts of node-postgres used here. */
type PgConnection = {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>
}

function knexClient<C>(): KnexClient<C> {
  return (db.connection().getWriteClient() as unknown as { client: KnexClient<C> }).client
}

/** Prepared statements kept per connection, at most this many (the SQL texts are a handful). */
const MAX_CACHED = 64

/**
 * SQLite's hot path without knex in the middle: statements prepared once
 * per connection (knex prepares every query anew, which for the order
 * insert costs as much as running it) and a transaction run in one
 * synchronous block on a connection taken from the same knex pool.
 *
 * The pool has one connection (better-sqlite3), so the block never runs
 * while a Lucid transaction holds it, and nothing else runs on it while the
 * block does: BEGIN IMMEDIATE takes SQLite's write lock first (other
 * processes wait for it, busy_timeout), then the statements, then COMMIT
 * (ROLLBACK on any error, which is rethrown). Each statement is reported
 * as a knex `query` event like any other, so query counting sees them.
 */
export class SqliteStatements {
  #cache = new WeakMap<Connection, Map<string, Statement>>()

  /**
   * Runs `first`, then, when it returned a row, the step `next` makes of
   * that row, in one transaction; returns the first row, or null (nothing
   * written) when `first` returned none.
   */
  async transaction(
    [first, next]: [SqliteStep, (row: Record<string, unknown>) => SqliteStep]
  ): Promise<Record<string, unknown> | null> {
    const client = knexClient<Connection>()
    const connection = await client.acquireConnection()
    const report = (sql: string, bindings: unknown[] = []) => client.emit('query', { sql, bindings, method: 'raw' })
    try {
      report('BEGIN IMMEDIATE')
      this.#prepare(connection, 'BEGIN IMMEDIATE').run([])
      try {
        report(first.sql, first.bindings)
        const row = (this.#prepare(connection, first.sql).all(first.bindings)[0] as Record<string, unknown>) ?? null
        if (row) {
          const step = next(row)
          report(step.sql, step.bindings)
          this.#prepare(connection, step.sql).run(step.bindings)
        }
        report('COMMIT')
        this.#prepare(connection, 'COMMIT').run([])
        return row
      } catch (error) {
        if (connection.inTransaction) {
          report('ROLLBACK')
          connection.exec('ROLLBACK')
        }
        throw error
      }
    } finally {
      await client.releaseConnection(connection)
    }
  }

  #prepare(connection: Connection, sql: string): Statement {
    let statements = this.#cache.get(connection)
    if (!statements) this.#cache.set(connection, (statements = new Map()))
    let statement = statements.get(sql)
    if (!statement) {
      if (statements.size >= MAX_CACHED) statements.clear()
      statement = connection.prepare(sql)
      statements.set(sql, statement)
    }
    return statement
  }
}

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
      return (await connection.query({ name: prepared.name, text: prepared.text, values: bindings })).rows
    } finally {
      await client.releaseConnection(connection)
    }
  }
}

export const sqliteStatements = new SqliteStatements()
export const pgStatements = new PgStatements()
