import type Order from '#models/order'
import Chain from '#models/chain'
import Token from '#models/token'
import chainRegistry from '#chains/chain_registry'
import { assertOnChainTarget } from '#services/order_rules'
import { isWebAddress } from '#support/http/web_address'

/**
 * The wallet URI of an order's target, amount included (each family's
 * own URI scheme), or the hosted link of a provider order. The
 * payment-uri endpoint and the cashier page's QR code both use it, so the
 * QR always encodes what the endpoint says.
 */
export async function paymentUriOf(order: Order): Promise<string> {
  if (order.isProviderOrder) return isWebAddress(order.paymentUrl) ? order.paymentUrl : ''
  assertOnChainTarget(order)
  const chain = await Chain.findByOrFail('network', order.network)
  const token = await Token.query()
    .where('network', order.network)
    .where('symbol', order.token)
    .firstOrFail()
  const family = chainRegistry.find(chain.family)
  return family?.paymentUri ? family.paymentUri({ chain, token, order }) : order.receiveAddress
}
