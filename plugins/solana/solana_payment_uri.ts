import type { PaymentUriContext } from '#chains/chain_family'
import { toDecimalString } from '#support/text/money'

/**
 * Solana Pay transfer request: `solana:<recipient>?amount=<decimal>`, plus
 * `&spl-token=<mint>` for an SPL token. The amount is in token units (not
 * base units), as a plain decimal, which is what wallets expect.
 */
export function solanaPayUri({ token, order }: PaymentUriContext): string {
  const params = new URLSearchParams({ amount: toDecimalString(order.actualAmount) })
  if (token.contract) params.set('spl-token', token.contract)
  return `solana:${order.receiveAddress}?${params.toString()}`
}
