import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { Decimal, fractionDigits, isDecimalLiteral } from '#support/money'

/**
 * A fiat amount: a plain decimal (no sign, no exponent) strictly above
 * `min`, below `max`, with at most `maxFractionDigits` fraction digits.
 */
export const fiatAmountRule = vine.createRule(
  (value: unknown, options: { min: string; max: string; maxFractionDigits: number }, field: FieldContext) => {
    if (typeof value !== 'string') return
    const text = value.trim()
    if (!isDecimalLiteral(text)) {
      field.report(`The ${field.name} field must be a decimal number such as 100 or 12.50`, 'decimal', field)
      return
    }
    if (fractionDigits(text) > options.maxFractionDigits) {
      field.report(
        `The ${field.name} field must have at most ${options.maxFractionDigits} digits after the decimal point`,
        'decimal_places',
        field
      )
      return
    }
    const amount = new Decimal(text)
    if (amount.lte(options.min)) {
      field.report(`The ${field.name} field must be greater than ${options.min}`, 'min_amount', field)
      return
    }
    if (amount.gte(options.max)) {
      field.report(`The ${field.name} field must be less than ${options.max}`, 'max_amount', field)
      return
    }
    field.mutate(new Decimal(text).toFixed(), field)
  }
)

/** An http(s) URL (localhost and plain IPs allowed), at most 2048 characters. */
export const httpUrl = () =>
  vine
    .string()
    .trim()
    .maxLength(2048)
    .url({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
