import { randomBytes } from 'node:crypto'
import app from '@adonisjs/core/services/app'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import { MigrationRunner } from '@adonisjs/lucid/migration'
import env from '#start/env'
import settings from '#settings/settings_service'
import chainRegistry from '#chains/chain_registry'
import { DEFAULT_CHAINS } from '#chains/default_chains'
import User from '#models/user'
import { insertUnlessPresent } from '#support/insert_unless_present'

export const DEFAULT_PID = '1000'
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

  /** Runs pending migrations; returns the names of those it ran. */
  async migrate(): Promise<string[]> {
    const runner = new MigrationRunner(db, app, { direction: 'up' })
    await runner.run()
    if (runner.error) throw runner.error
    return Object.values(runner.migratedFiles).map((file) => file.file.name)
  }

  async installDefaults(print: Printer) {
    await this.#installApiKey(print)
    await this.#installSettings()
    await this.#installChains()
    await this.#installAdmin(print)
  }

  async #installApiKey(print: Printer) {
    const fromEnv = env.get('INITIAL_API_SECRET')
    const secret = fromEnv && fromEnv.trim() !== '' ? fromEnv.trim() : randomBytes(32).toString('hex')
    const now = Date.now()
    const { inserted } = await insertUnlessPresent(
      db.connection(),
      'api_keys',
      { pid: DEFAULT_PID, secret_key: secret, status: 'active', created_at: now, updated_at: now },
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

  async #installSettings() {
    await settings.setIfMissing('compat.default_currency', 'cny')
    await settings.setIfMissing('compat.default_token', '')
    await settings.setIfMissing('compat.default_network', '')
  }

  async #installChains() {
    const now = Date.now()
    for (const [index, chain] of DEFAULT_CHAINS.entries()) {
      await db
        .table('chains')
        .insert({
          network: chain.network,
          family: chain.family,
          display_name: chain.displayName,
          chain_id: chain.chainId,
          enabled: true,
          rpc_urls: JSON.stringify(chain.rpcUrls),
          confirmations: chain.confirmations,
          scan_interval_seconds: chain.scanIntervalSeconds,
          sort_order: (index + 1) * 10,
          created_at: now,
          updated_at: now,
        })
        .onConflict('network')
        .ignore()

      const family = chainRegistry.family(chain.family)
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
