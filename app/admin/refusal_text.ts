import type { I18n } from '@adonisjs/i18n'
import type { OperatorError, Refusal } from '#support/cli/operator_error'

/** Where the refusals' texts are in the catalogue: `admin.refusals.<key>`. */
export const REFUSALS_PREFIX = 'admin.refusals.'

/**
 * A refusal in the console's language: the catalogue's text of its key
 * with its arguments, else (no key, or a key the catalogue lacks) the
 * English message. Every console place that shows an OperatorError's
 * text goes through here.
 */
export function refusalText(i18n: I18n, error: OperatorError): string {
  return keyedText(i18n, error.refusal, error.message)
}

/** A kept refusal (key and arguments) in the console's language, else `english`. */
export function keyedText(i18n: I18n, refusal: Refusal | null | undefined, english: string) {
  if (!refusal) return english
  const key = REFUSALS_PREFIX + refusal.key
  if (!i18n.hasMessage(key) && !i18n.hasFallbackMessage(key)) return english
  // Values stay as written: an ICU number would be regrouped (2000 → 2,000).
  const args = Object.fromEntries(
    Object.entries(refusal.args ?? {}).map(([name, value]) => [name, String(value)])
  )
  return i18n.formatMessage(key, args)
}
