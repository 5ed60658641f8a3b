import type { PaymentUriContext } from '#chains/chain_family'
import { toBaseUnits } from '#support/text/money'

/**
 * The ton:// transfer link TON wallets (Tonkeeper, Tonhub, MyTonWallet)
 * open, amount in base units:
 * - TON:    ton://transfer/<wallet>?amount=<nanotons>
 * - jetton: ton://transfer/<wallet>?jetton=<jetton master>&amount=<jetton base units>
 */
export function tonPaymentUri({ token, order }: PaymentUriContext): string {
  const amount = toBaseUnits(order.actualAmount, token.decimals).toString()
  const jetton = token.contract ? `jetton=${encodeURIComponent(token.contract)}&` : ''
  return `ton://transfer/${encodeURIComponent(order.receiveAddress)}?${jetton}amount=${amount}`
}
