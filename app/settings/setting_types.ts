/**
 * Typed settings: each definition knows its default, how to parse the
 * text an operator types (or the database holds) and how to store it.
 */
export class SettingValueError extends Error {}

export type SettingDefinition<T> = {
  type: 'string' | 'integer' | 'boolean' | 'list' | 'url' | 'enum'
  default: T
  description: string
  /** Secrets are masked by `settings:get` and the console. */
  secret?: boolean
  /** State the gateway keeps for itself (a poller's offset): listed, never offered on a console form. */
  internal?: boolean
  /** What a form may offer (the console): bounds of an integer, choices of an enum, longest text. */
  bounds?: { min: number; max: number }
  options?: readonly string[]
  maxLength?: number
  parse(raw: string): T
  serialize(value: T): string
}

export function stringSetting(
  defaultValue: string,
  description: string,
  options: { maxLength?: number; pattern?: RegExp; secret?: boolean; lowerCase?: boolean } = {}
): SettingDefinition<string> {
  return {
    type: 'string',
    default: defaultValue,
    description,
    secret: options.secret,
    maxLength: options.maxLength,
    parse(raw) {
      const value = options.lowerCase ? raw.trim().toLowerCase() : raw.trim()
      if (options.maxLength !== undefined && value.length > options.maxLength) {
        throw new SettingValueError(`must be at most ${options.maxLength} characters`)
      }
      if (options.pattern && value !== '' && !options.pattern.test(value)) {
        throw new SettingValueError(`must match ${options.pattern}`)
      }
      return value
    },
    serialize: (value) => value,
  }
}

export function urlSetting(defaultValue: string, description: string): SettingDefinition<string> {
  return {
    type: 'url',
    default: defaultValue,
    description,
    parse(raw) {
      const value = raw.trim()
      if (value === '') return ''
      let url: URL
      try {
        url = new URL(value)
      } catch {
        throw new SettingValueError('must be an http(s) URL or empty')
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new SettingValueError('must be an http(s) URL or empty')
      }
      return value
    },
    serialize: (value) => value,
  }
}

export function integerSetting(
  defaultValue: number,
  description: string,
  bounds: { min: number; max: number }
): SettingDefinition<number> {
  return {
    type: 'integer',
    default: defaultValue,
    description,
    bounds,
    parse(raw) {
      const value = raw.trim()
      if (!/^-?\d+$/.test(value)) throw new SettingValueError('must be a whole number')
      const number = Number.parseInt(value, 10)
      if (number < bounds.min || number > bounds.max) {
        throw new SettingValueError(`must be between ${bounds.min} and ${bounds.max}`)
      }
      return number
    },
    serialize: (value) => String(value),
  }
}

export function booleanSetting(
  defaultValue: boolean,
  description: string
): SettingDefinition<boolean> {
  return {
    type: 'boolean',
    default: defaultValue,
    description,
    parse(raw) {
      const value = raw.trim().toLowerCase()
      if (['true', '1', 'yes', 'on'].includes(value)) return true
      if (['false', '0', 'no', 'off'].includes(value)) return false
      throw new SettingValueError('must be true or false')
    },
    serialize: (value) => (value ? 'true' : 'false'),
  }
}

export function enumSetting<const T extends string>(
  defaultValue: T,
  options: readonly T[],
  description: string
): SettingDefinition<T> {
  return {
    type: 'enum',
    default: defaultValue,
    description,
    options,
    parse(raw) {
      const value = raw.trim().toLowerCase() as T
      if (!options.includes(value))
        throw new SettingValueError(`must be one of ${options.join(', ')}`)
      return value
    },
    serialize: (value) => value,
  }
}

/** Comma-separated list, stored and returned upper-cased (token symbols). */
export function upperListSetting(
  defaultValue: string[],
  description: string
): SettingDefinition<string[]> {
  return {
    type: 'list',
    default: defaultValue,
    description,
    parse(raw) {
      return raw
        .split(',')
        .map((item) => item.trim().toUpperCase())
        .filter((item) => item !== '')
    },
    serialize: (value) => value.join(','),
  }
}

/** Comma-separated list of trimmed, non-empty items, as typed (chat ids, e-mail addresses). */
export function listSetting(
  defaultValue: string[],
  description: string,
  options: { item?: RegExp; itemHint?: string; maxItems?: number } = {}
): SettingDefinition<string[]> {
  return {
    type: 'list',
    default: defaultValue,
    description,
    parse(raw) {
      const items = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
      if (options.maxItems !== undefined && items.length > options.maxItems)
        throw new SettingValueError(`must have at most ${options.maxItems} items`)
      const bad = options.item ? items.find((item) => !options.item!.test(item)) : undefined
      if (bad !== undefined)
        throw new SettingValueError(`"${bad}" is not ${options.itemHint ?? 'a valid item'}`)
      return [...new Set(items)]
    },
    serialize: (value) => value.join(','),
  }
}

/** An IANA time zone name (Europe/Berlin, UTC), as Intl knows it. */
export function timeZoneSetting(
  defaultValue: string,
  description: string
): SettingDefinition<string> {
  return {
    type: 'string',
    default: defaultValue,
    description,
    maxLength: 64,
    parse(raw) {
      const value = raw.trim()
      try {
        return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone
      } catch {
        throw new SettingValueError('must be a time zone name such as UTC or Europe/Berlin')
      }
    },
    serialize: (value) => value,
  }
}
