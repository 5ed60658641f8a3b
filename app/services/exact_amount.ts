import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import {
  type Decimal,
  MAX_SIGNIFICANT_DIGITS,
  isKeptExactly,
  significantDigits,
  toDecimalString,
} from '#support/text/money'

/**
 * Refuses (10004) a crypto amount that could not be stored, shown and
 * signed exactly (more than MAX_SIGNIFICANT_DIGITS digits: a large fiat
 * amount in a token of tiny unit value, at a high precision). Called where
 * an amount is priced or stepped, before anything is kept, so the merchant
 * gets a clear refusal instead of an order for a silently rounded amount.
 */
export function refuseInexactAmount(
  crypto: Decimal | string,
  priced: { amount: string; currency: string; token: string }
) {
  if (isKeptExactly(crypto)) return
  const text = toDecimalString(crypto)
  throw new BusinessError(
    ErrorCode.INVALID_AMOUNT,
    `Invalid payment amount: ${priced.amount} ${priced.currency} is ${text} ${priced.token}, ${significantDigits(text)} significant digits; amounts are kept exactly up to ${MAX_SIGNIFICANT_DIGITS}`
  )
}
