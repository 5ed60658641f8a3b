import type { I18n } from '@adonisjs/i18n'
import type { OperatorError, Refusal, RefusalArgs } from '#support/cli/operator_error'
import { textOr } from '#support/text/catalogue'

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

/**
 * A kept refusal (key and arguments) in the console's language, else
 * `english`; a plugin's reason (`refusal.reason`) in the same language
 * when its texts have it, else as the plugin wrote it.
 */
export function keyedText(i18n: I18n, refusal: Refusal | null | undefined, english: string) {
  if (!refusal) return english
  const args = shownArgs(refusal.args)
  if (refusal.reason) {
    const reason = textOr(i18n, refusal.reason.key, null, shownArgs(refusal.reason.args))
    if (reason !== null) args.reason = reason
  }
  return textOr(i18n, REFUSALS_PREFIX + refusal.key, english, args)
}

/** Values stay as written: an ICU number would be regrouped (2000 → 2,000). */
function shownArgs(args: RefusalArgs | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(args ?? {}).map(([name, value]) => [name, String(value)])
  )
}
