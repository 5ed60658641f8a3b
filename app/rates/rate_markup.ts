import { Decimal } from '#support/text/money'

/**
 * An operator's markup on a live rate, in BEpusdt's notation:
 * - `~1.02`: the rate times 1.02 (2 % up; `~0.98` is 2 % down);
 * - `+0.3`: the rate plus 0.3 (in the fiat);
 * - `-0.2`: the rate minus 0.2.
 * A plain number (`7.25`) is no markup but a fixed rate.
 */
export type Markup =
  { kind: 'factor'; value: Decimal; text: string } | { kind: 'add'; value: Decimal; text: string }

export class MarkupError extends Error {}

const NUMBER = /^\d+(\.\d+)?$/

/** Parses `~1.02`, `+0.3` or `-0.2`; throws MarkupError with what is expected. */
export function parseMarkup(raw: string): Markup {
  const text = raw.trim()
  const sign = text[0]
  const rest = text.slice(1)
  if (!['~', '+', '-'].includes(sign) || !NUMBER.test(rest))
    throw new MarkupError(
      `"${raw}" is not a markup: write ~1.02 (times 1.02), +0.3 (plus 0.3) or -0.2 (minus 0.2)`
    )
  const value = new Decimal(rest)
  if (sign === '~') {
    if (!value.gt(0)) throw new MarkupError('a ~ factor must be above 0')
    if (value.lt(0.5) || value.gt(2))
      throw new MarkupError(`a ~ factor of ${rest} moves the rate by more than half: a typo?`)
    return { kind: 'factor', value, text }
  }
  return { kind: 'add', value: sign === '-' ? value.negated() : value, text }
}

/** Whether `raw` is written as a markup (rather than a fixed rate). */
export function isMarkup(raw: string): boolean {
  return /^[~+-]/.test(raw.trim())
}

/**
 * The rate a payer is charged at: the live `rate` (fiat per token) with the
 * markup applied, exactly (no rounding: the token amount is rounded up to
 * the token's precision afterwards, as with any rate). Throws MarkupError
 * when the result is not positive (a `-` larger than the rate).
 */
export function applyMarkup(rate: Decimal, markup: Markup | null): Decimal {
  if (!markup) return rate
  const marked =
    markup.kind === 'factor' ? rate.multipliedBy(markup.value) : rate.plus(markup.value)
  if (!marked.gt(0))
    throw new MarkupError(
      `the markup ${markup.text} leaves no positive rate (${rate.toFixed()} → ${marked.toFixed()})`
    )
  return marked
}
