import type { I18n } from '@adonisjs/i18n'

/**
 * The catalogue's message `key` in `i18n`'s language (or its fallback
 * language), else `fallback`: for texts that only some plugins bring, or
 * that an outside plugin may lack.
 */
export function textOr<T>(
  i18n: I18n,
  key: string,
  fallback: T,
  values?: Record<string, unknown>
): string | T {
  return i18n.resolveIdentifier(key) ? i18n.t(key, values) : fallback
}
