import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import {
  SETTINGS,
  isSettingKey,
  type SettingKey,
  type SettingValue,
} from '#settings/definitions'
import { SettingValueError, type SettingDefinition } from '#settings/setting_types'
import { SecretPurpose, looksSealed, sealSecret } from '#support/secret_box'
import { redactSecrets } from '#support/redaction'

/** How long a process trusts its copy of the settings table. */
export const SETTINGS_REFRESH_MS = 2000

export type SettingRow = {
  key: SettingKey
  type: string
  value: unknown
  stored: boolean
  description: string
  secret: boolean
}

/**
 * Typed access to the settings table with an in-process cache. The whole
 * (small) table is re-read at most every 2 s when a setting is asked for,
 * so a change made by an ace command or another process is seen by every
 * running process within that time; a change made here is seen at once.
 */
export class SettingsService {
  #rows: Map<string, string> | null = null
  #loadedAt = 0
  #loading: Promise<Map<string, string>> | null = null
  /** Bumped by invalidate() so that a read begun before a write is not kept. */
  #generation = 0

  /**
   * The typed value. A secret setting (provider.shop_token) comes back as
   * stored, encrypted: revealSecret() gives the secret where it is used.
   */
  async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
    const rows = await this.#load()
    return this.#decode(key, rows.get(key)) as SettingValue<K>
  }

  /** Parses and stores an operator-supplied value; throws SettingValueError. */
  async set(key: string, raw: string): Promise<unknown> {
    const definition = this.definition(key)
    const value = definition.parse(raw)
    await db
      .table('settings')
      .insert({ key, type: definition.type, value: this.#stored(key, definition, value), updated_at: Date.now() })
      .onConflict('key')
      .merge(['type', 'value', 'updated_at'])
    this.invalidate()
    return value
  }

  /** Stores `raw` only when the key has no row yet (installation defaults). */
  async setIfMissing(key: SettingKey, raw: string): Promise<boolean> {
    const definition = this.definition(key)
    const value = this.#stored(key, definition, definition.parse(raw))
    const returned: unknown[] = await db
      .connection()
      .knexQuery()
      .table('settings')
      .insert({ key, type: definition.type, value, updated_at: Date.now() })
      .onConflict('key')
      .ignore()
      .returning('key')
    this.invalidate()
    return returned.length > 0
  }

  async list(): Promise<SettingRow[]> {
    const rows = await this.#load()
    return (Object.keys(SETTINGS) as SettingKey[]).map((key) => {
      const definition = SETTINGS[key] as SettingDefinition<unknown>
      return {
        key,
        type: definition.type,
        value: this.#decode(key, rows.get(key)),
        stored: rows.has(key),
        description: definition.description,
        secret: definition.secret === true,
      }
    })
  }

  definition(key: string): SettingDefinition<unknown> {
    if (!isSettingKey(key)) {
      throw new SettingValueError(`unknown setting "${key}"`)
    }
    return SETTINGS[key] as SettingDefinition<unknown>
  }

  invalidate() {
    this.#generation++
    this.#rows = null
    this.#loadedAt = 0
    this.#loading = null
  }

  /** The text stored for a value: secrets encrypted. */
  #stored(key: string, definition: SettingDefinition<unknown>, value: unknown): string {
    const text = definition.serialize(value)
    if (!definition.secret) return text
    if (looksSealed(text)) throw new SettingValueError('has the shape of an encrypted value; choose another')
    return sealSecret(text, SecretPurpose.setting(key))
  }

  #decode(key: SettingKey, raw: string | undefined): unknown {
    const definition = SETTINGS[key] as SettingDefinition<unknown>
    if (raw === undefined) return definition.default
    // Encrypted: checked when it was set, opaque until revealed.
    if (definition.secret && looksSealed(raw)) return raw
    try {
      return definition.parse(raw)
    } catch (error) {
      // The value of a secret never goes to the log; URL credentials of others neither.
      const shown = definition.secret ? undefined : redactSecrets(raw)
      logger.warn({ key, raw: shown }, `stored setting is invalid (${(error as Error).message}); using the default`)
      return definition.default
    }
  }

  async #load(): Promise<Map<string, string>> {
    if (this.#rows && Date.now() - this.#loadedAt < SETTINGS_REFRESH_MS) return this.#rows
    if (!this.#loading) {
      const generation = this.#generation
      const loading = db
        .from('settings')
        .select('key', 'value')
        .then((records: { key: string; value: string }[]) => {
          const rows = new Map(records.map((record) => [record.key, record.value]))
          if (generation === this.#generation) {
            this.#rows = rows
            this.#loadedAt = Date.now()
          }
          return rows
        })
        .finally(() => {
          if (this.#loading === loading) this.#loading = null
        })
      this.#loading = loading
    }
    return this.#loading
  }
}

const settings = new SettingsService()
export default settings
