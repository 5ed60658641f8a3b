import type { PaymentUriContext } from '#chains/chain_family'
import { toDecimalString } from '#support/text/money'

/**
 * TRON has no URI standard like EIP-681. The de-facto form wallets read
 * from a QR code is `tron:<address>`; the amount goes in `amount` (token
 * units, as the payer types it, like BIP-21) and a TRC-20 payment names its
 * token contract in `token`, so that a wallet never offers TRX for a USDT
 * order. Wallets that ignore the parameters still get the right address.
 *
 *   tron:TXyz…?amount=12.5                                  (TRX)
 *   tron:TXyz…?token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t&amount=13.8   (TRC-20)
 */
export function tronPaymentUri({ token, order }: PaymentUriContext): string {
  const amount = toDecimalString(order.actualAmount)
  if (token.contract === null) return `tron:${order.receiveAddress}?amount=${amount}`
  return `tron:${order.receiveAddress}?token=${token.contract}&amount=${amount}`
}
