import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { Decimal, fractionDigits, isDecimalLiteral } from '#support/text/money'

/**
 * A fiat amount: a plain decimal (no sign, no exponent) strictly above
 * `min`, below `max`, with at most `maxFractionDigits` fraction digits.
 */
export const fiatAmountRule = vine.createRule(
  (
    value: unknown,
    options: { min: string; max: string; maxFractionDigits: number },
    field: FieldContext
  ) => {
    if (typeof value !== 'string') return
    const text = value.trim()
    if (!isDecimalLiteral(text)) {
      field.report(
        `The ${field.name} field must be a decimal number such as 100 or 12.50`,
        'decimal',
        field
      )
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
      field.report(
        `The ${field.name} field must be greater than ${options.min}`,
        'min_amount',
        field
      )
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

/** Fiat code, any case in, upper-case out (cny → CNY). */
export const currencyField = () =>
  vine
    .string()
    .trim()
    .regex(/^[A-Za-z]{3,10}$/)
    .toUpperCase()

/** Token symbol, any case in, upper-case out (usdt → USDT). */
export const tokenField = () =>
  vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{1,16}$/)
    .toUpperCase()

/** Network name, any case in, lower-case out. */
export const networkField = () =>
  vine
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{1,32}$/)
    .toLowerCase()

/** The merchant's order number: 1–32 characters, no control characters. */
export const merchantOrderIdField = () =>
  vine
    .string()
    .minLength(1)
    .maxLength(32)
    // Refuses control characters: that is the point of this regex.
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f]+$/)

/** Messages shared by the order-creation validators. */
export const ORDER_FIELD_MESSAGES = {
  'required': 'The {{ field }} field is required',
  'string': 'The {{ field }} field must be a string',
  'currency.regex': 'The currency field must be a fiat code such as CNY or USD',
  'token.regex': 'The token field must be a token symbol such as USDT',
  'network.regex': 'The network field must be a network name (lower-case letters, digits and "-")',
  'notify_url.url': 'The notify_url field must be an http(s) URL',
}
