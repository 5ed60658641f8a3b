import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { SETTINGS, type SettingKey, type SettingValue } from '#settings/definitions'
import { SettingValueError, type SettingDefinition } from '#settings/setting_types'
import { SecretPurpose, looksSealed, sealSecret } from '#support/crypto/secret_box'
import auditLog from '#services/audit/audit_log'
import { MASK, redactSecrets } from '#support/http/redaction'

/** How long a process trusts its copy of the settings table. */
export const SETTINGS_REFRESH_MS = 2000

export type SettingRow = {
  key: string
  type: string
  value: unknown
  stored: boolean
  description: string
  secret: boolean
}

/** Values of several settings refused at once: key → why. */
export class SettingsInputError extends SettingValueError {
  constructor(readonly errors: Record<string, string>) {
    super(
      Object.entries(errors)
        .map(([key, message]) => `${key} ${message}`)
        .join('; ')
    )
  }
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
  /** The core's definitions and those of the enabled plugins. */
  #definitions = new Map<string, SettingDefinition<unknown>>(
    Object.entries(SETTINGS) as [string, SettingDefinition<unknown>][]
  )
  /** Keys of the plugins that are off → the plugin's name. */
  #hidden = new Map<string, string>()
  /** Secret keys of every plugin, on or off (their rows are re-encrypted too). */
  #secretKeys = new Set(
    Object.entries(SETTINGS)
      .filter(([, definition]) => (definition as SettingDefinition<unknown>).secret === true)
      .map(([key]) => key)
  )

  /**
   * Adds a plugin's settings: listed, validated and read like the core's
   * when the plugin is on; refused with a clear message when it is off.
   */
  addDefinitions(
    plugin: string,
    definitions: Record<string, SettingDefinition<unknown>>,
    enabled: boolean
  ) {
    for (const [key, definition] of Object.entries(definitions)) {
      if (this.#definitions.has(key) || this.#hidden.has(key)) {
        throw new Error(`The plugin "${plugin}" defines the setting "${key}", which already exists`)
      }
      if (definition.secret) this.#secretKeys.add(key)
      if (enabled) this.#definitions.set(key, definition)
      else this.#hidden.set(key, plugin)
    }
  }

  /** Keys of secret settings (encrypted at rest). */
  secretKeys(): string[] {
    return [...this.#secretKeys]
  }

  /** The value of a plugin's setting; see pluginSettings() for the typed accessor. */
  async read(key: string): Promise<unknown> {
    const rows = await this.#load()
    return this.#decode(key, rows.get(key))
  }

  /**
   * The typed value. A secret setting (a plugin's shared secret) comes back as
   * stored, encrypted: revealSecret() gives the secret where it is used.
   */
  async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
    const rows = await this.#load()
    return this.#decode(key, rows.get(key)) as SettingValue<K>
  }

  /** Parses and stores an operator-supplied value; throws SettingValueError. */
  async set(key: string, raw: string): Promise<unknown> {
    const [value] = await this.#write([[key, this.definition(key).parse(raw)]])
    return value
  }

  /**
   * Parses every value first, then stores those that differ from the
   * current value in one transaction (one audit row each): a form of
   * several settings is saved whole or not at all. Throws
   * SettingsInputError naming each refused key. Returns the changed keys.
   */
  async setMany(raws: Record<string, string>): Promise<string[]> {
    const parsed: [string, unknown][] = []
    const errors: Record<string, string> = {}
    for (const [key, raw] of Object.entries(raws)) {
      try {
        const definition = this.definition(key)
        const value = definition.parse(raw)
        this.#stored(key, definition, value) // refuses a secret shaped like an encrypted value
        parsed.push([key, value])
      } catch (error) {
        if (!(error instanceof SettingValueError)) throw error
        errors[key] = error.message
      }
    }
    if (Object.keys(errors).length > 0) throw new SettingsInputError(errors)
    const changed: [string, unknown][] = []
    for (const [key, value] of parsed) {
      const definition = this.definition(key)
      const current = await this.read(key)
      // A secret is compared by what was typed: its stored form is encrypted.
      const same =
        !definition.secret && definition.serialize(current) === definition.serialize(value)
      if (!same) changed.push([key, value])
    }
    if (changed.length > 0) await this.#write(changed)
    return changed.map(([key]) => key)
  }

  /** Stores parsed values in one transaction, each with its audit row. */
  async #write(entries: [string, unknown][]): Promise<unknown[]> {
    const rows = await this.#load()
    const befores = new Map<string, unknown>()
    for (const [key] of entries) befores.set(key, rows.has(key) ? await this.read(key) : null)
    const stored = entries.map(([key, value]) => {
      const definition = this.definition(key)
      return { key, definition, value, text: this.#stored(key, definition, value) }
    })
    try {
      await db.transaction(async (trx) => {
        for (const { key, definition, value, text } of stored) {
          // A secret is audited as set or empty, never by any part of it.
          const shown = (setting: unknown) =>
            definition.secret && setting !== '' && setting !== null ? MASK : setting
          await trx
            .knexQuery()
            .table('settings')
            .insert({ key, type: definition.type, value: text, updated_at: Date.now() })
            .onConflict('key')
            .merge(['type', 'value', 'updated_at'])
          await auditLog.record(
            {
              action: 'setting.set',
              subjectType: 'setting',
              subjectId: key,
              before: shown(befores.get(key)),
              after: shown(value),
            },
            trx
          )
        }
      })
    } finally {
      this.invalidate()
    }
    return stored.map(({ value }) => value)
  }

  /** Settings of plugins that are turned off: key → plugin (kept, not listed, not settable). */
  turnedOff(): Map<string, string> {
    return new Map(this.#hidden)
  }

  /** Stores `raw` only when the key has no row yet (installation defaults). */
  async setIfMissing(key: string, raw: string): Promise<boolean> {
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
    return [...this.#definitions].map(([key, definition]) => {
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
    const plugin = this.#hidden.get(key)
    if (plugin) {
      throw new SettingValueError(
        `"${key}" is a setting of the plugin "${plugin}", which is turned off (PLUGINS)`
      )
    }
    const definition = this.#definitions.get(key)
    if (!definition) throw new SettingValueError(`unknown setting "${key}"`)
    return definition
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
    if (looksSealed(text))
      throw new SettingValueError('has the shape of an encrypted value; choose another')
    return sealSecret(text, SecretPurpose.setting(key))
  }

  #decode(key: string, raw: string | undefined): unknown {
    const definition = this.definition(key)
    if (raw === undefined) return definition.default
    // Encrypted: checked when it was set, opaque until revealed.
    if (definition.secret && looksSealed(raw)) return raw
    try {
      return definition.parse(raw)
    } catch (error) {
      // The value of a secret never goes to the log; URL credentials of others neither.
      const shown = definition.secret ? undefined : redactSecrets(raw)
      logger.warn(
        { key, raw: shown },
        `stored setting is invalid (${(error as Error).message}); using the default`
      )
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

/**
 * Typed access to a plugin's own settings:
 * `const mySettings = pluginSettings(MY_SETTINGS)`, then
 * `await mySettings.get('my.key')` has the type its definition parses to.
 */
export function pluginSettings<D extends Record<string, SettingDefinition<any>>>(definitions: D) {
  return {
    definitions,
    get<K extends keyof D & string>(key: K): Promise<ReturnType<D[K]['parse']>> {
      return settings.read(key) as Promise<ReturnType<D[K]['parse']>>
    },
  }
}
