import { randomBytes } from 'node:crypto'
import { rmSync, statSync, writeFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import { MigrationRunner } from '@adonisjs/lucid/migration'
import env from '#start/env'
import settings from '#settings/settings_service'
import chainRegistry from '#chains/chain_registry'
import pluginRegistry from '#app_plugins/plugin_registry'
import User from '#models/user'
import { insertUnlessPresent } from '#support/insert_unless_present'
import { SecretPurpose, sealSecret } from '#support/secret_box'

export const DEFAULT_PID = '1000'
/** Advisory lock id of schema migrations (any constant distinct from other locks). */
const MIGRATION_LOCK_KEY = 7_355_608
/** How long a starting process waits for another one's migrations. */
const LOCK_WAIT_MS = 120_000
/** A migration lock file older than this belongs to a process that died. */
const STALE_LOCK_MS = 600_000
const DEFAULT_ADMIN_EMAIL = 'admin@localhost'

type Printer = (line: string) => void

/**
 * Brings a database to a working installation: runs pending migrations,
 * then inserts what is missing of the defaults. Idempotent and safe to run
 * from several processes at once: every insert is "insert unless present",
 * so an operator's changes are never overwritten.
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
      await knex.raw('SELECT pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]).connection(session)
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
          throw new Error(`Another process is migrating the database (${lock}); if none is, delete that file`)
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

  async installDefaults(print: Printer) {
    await this.#installApiKey(print)
    await this.#installSettings()
    await this.#installChains(print)
    await this.#installAdmin(print)
  }

  async #installApiKey(print: Printer) {
    const fromEnv = env.get('INITIAL_API_SECRET')
    const secret = fromEnv && fromEnv.trim() !== '' ? fromEnv.trim() : randomBytes(32).toString('hex')
    const now = Date.now()
    const { inserted } = await insertUnlessPresent(
      db.connection(),
      'api_keys',
      {
        pid: DEFAULT_PID,
        secret_key: sealSecret(secret, SecretPurpose.apiKeySecret),
        status: 'active',
        created_at: now,
        updated_at: now,
      },
      'pid'
    )
    if (!inserted) return
    if (fromEnv) {
      print(`Created API key PID ${DEFAULT_PID} with the secret from INITIAL_API_SECRET.`)
    } else {
      print(
        `Created API key PID ${DEFAULT_PID}. Its secret is shown only this once:\n` +
          `  pid:        ${DEFAULT_PID}\n  secret_key: ${secret}`
      )
    }
  }

  /** The enabled plugins' installation settings. */
  async #installSettings() {
    for (const [key, value] of pluginRegistry.seedSettings()) await settings.setIfMissing(key, value)
  }

  /**
   * The enabled plugins' chains and tokens. A chain whose family no
   * enabled plugin brings is skipped (with a line saying so), not an error.
   */
  async #installChains(print: Printer) {
    const now = Date.now()
    for (const [index, chain] of pluginRegistry.seedChains().entries()) {
      const family = chainRegistry.find(chain.family)
      if (!family) {
        print(`Skipped the chain ${chain.network}: no enabled plugin brings the family "${chain.family}".`)
        continue
      }
      await db
        .table('chains')
        .insert({
          network: chain.network,
          family: chain.family,
          display_name: chain.displayName,
          options: JSON.stringify(family.validateOptions?.(chain.options ?? {}) ?? {}),
          enabled: true,
          rpc_urls: JSON.stringify(chain.rpcUrls),
          confirmations: chain.confirmations,
          scan_interval_seconds: chain.scanIntervalSeconds,
          block_time_ms: chain.blockTimeMs,
          explorer_tx_url: chain.explorerTxUrl,
          sort_order: (index + 1) * 10,
          created_at: now,
          updated_at: now,
        })
        .onConflict('network')
        .ignore()

      for (const token of chain.tokens) {
        await db
          .table('tokens')
          .insert({
            network: chain.network,
            symbol: token.symbol,
            contract: token.contract === null ? null : family.normalizeContract(token.contract),
            decimals: token.decimals,
            amount_precision: token.amountPrecision,
            enabled: true,
            created_at: now,
            updated_at: now,
          })
          .onConflict(['network', 'symbol'])
          .ignore()
      }
    }
  }

  async #installAdmin(print: Printer) {
    const configuredEmail = env.get('ADMIN_EMAIL')
    const email = (configuredEmail ?? DEFAULT_ADMIN_EMAIL).toLowerCase()
    if (await User.findBy('email', email)) return
    // Without ADMIN_EMAIL, any existing administrator means "installed".
    if (!configuredEmail && (await User.query().first())) return

    const configuredPassword = env.get('ADMIN_PASSWORD')
    const password = configuredPassword ?? randomBytes(12).toString('base64url')
    const now = Date.now()
    const { inserted } = await insertUnlessPresent(
      db.connection(),
      'users',
      { email, password: await hash.make(password), role: 'admin', created_at: now, updated_at: now },
      'email'
    )
    if (!inserted) return
    if (configuredPassword) {
      print(`Created administrator ${email} with the password from ADMIN_PASSWORD.`)
    } else {
      print(
        `Created administrator ${email}. Its password is shown only this once:\n` +
          `  email:    ${email}\n  password: ${password}`
      )
    }
  }
}

const installation = new InstallationService()
export default installation
