import { rmSync, statSync, writeFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { MigrationRunner } from '@adonisjs/lucid/migration'
import IndexSeeder from '#database/seeders/main/index_seeder'
import type { Printer } from '#database/installation_seeder'

/** Advisory lock id of schema migrations (any constant distinct from other locks). */
const MIGRATION_LOCK_KEY = 7_355_608
/** How long a starting process waits for another one's migrations. */
const LOCK_WAIT_MS = 120_000
/** How often a waiting process asks for the migration lock again. */
const MIGRATION_LOCK_POLL_MS = 250
/** A migration lock file older than this belongs to a process that died. */
const STALE_LOCK_MS = 600_000

/**
 * Brings a database to a working installation: runs pending migrations,
 * then the installation seeders (database/seeders). Idempotent and safe to
 * run from several processes at once: every insert is "insert unless
 * present", so an operator's changes are never overwritten.
 */
export class InstallationService {
  async prepare(options: { print: Printer }) {
    await this.migrate()
    await this.installDefaults(options.print)
  }

  /**
   * Runs pending migrations; returns the names of those it ran. Processes
   * starting together (web and worker) take turns: on PostgreSQL each waits
   * for a session advisory lock held on one dedicated connection. (Lucid's
   * own lock only tries once, so the second process would fail to start, and
   * it may release on another pooled connection than the one that locked.)
   */
  async migrate(): Promise<string[]> {
    return this.#exclusively(async () => {
      const runner = new MigrationRunner(db, app, { direction: 'up', disableLocks: true })
      await runner.run()
      if (runner.error) throw runner.error
      return Object.values(runner.migratedFiles).map((file) => file.file.name)
    })
  }

  async #exclusively<T>(work: () => Promise<T>): Promise<T> {
    const connection = db.connection()
    if (connection.dialect.name !== 'postgres') {
      const config = db.getRawConnection(db.primaryConnectionName)?.config.connection
      const filename = (config as { filename?: string } | undefined)?.filename
      return filename ? this.#withLockFile(`${filename}.migrating`, work) : work()
    }
    const knex = connection.getWriteClient()
    const session = await knex.client.acquireConnection()
    try {
      // Polled with pg_try_advisory_lock rather than waited for in one
      // statement: a statement blocked here would hold a snapshot the whole
      // time, and the other process's CREATE INDEX CONCURRENTLY waits for
      // every older snapshot to end: each would wait for the other.
      const deadline = Date.now() + LOCK_WAIT_MS
      for (;;) {
        const result = await knex
          .raw('SELECT pg_try_advisory_lock(?) AS locked', [MIGRATION_LOCK_KEY])
          .connection(session)
        if (result.rows[0]?.locked === true) break
        if (Date.now() > deadline) {
          throw new Error(
            `Another process has been migrating the database for over ${LOCK_WAIT_MS / 1000} s`
          )
        }
        await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS))
      }
      try {
        return await work()
      } finally {
        await knex.raw('SELECT pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(session)
      }
    } finally {
      await knex.client.releaseConnection(session)
    }
  }

  /**
   * SQLite has no advisory locks: a lock file beside the database (created
   * exclusively) does the same. One left by a process that died while
   * migrating is taken over after STALE_LOCK_MS.
   */
  async #withLockFile<T>(lock: string, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LOCK_WAIT_MS
    for (;;) {
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' })
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        if (this.#isStale(lock)) {
          rmSync(lock, { force: true })
          continue
        }
        if (Date.now() > deadline) {
          throw new Error(
            `Another process is migrating the database (${lock}); if none is, delete that file`
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    try {
      return await work()
    } finally {
      rmSync(lock, { force: true })
    }
  }

  #isStale(lock: string) {
    try {
      return Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS
    } catch {
      return false
    }
  }

  /**
   * Inserts what is missing of the defaults: the seeders of
   * database/seeders, the same `node ace db:seed` runs. Under the
   * migration lock, one process at a time: a seeder may look at what is
   * there before it inserts (the chains seeder adds a default token to a
   * chain it did not add itself disabled), and a process starting beside
   * another must not take that one's fresh rows for an operator's.
   */
  async installDefaults(print: Printer) {
    await this.#exclusively(() => new IndexSeeder(db.connection(), print).run())
  }
}

const installation = new InstallationService()
export default installation
