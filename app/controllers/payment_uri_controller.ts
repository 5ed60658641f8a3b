import type { HttpContext } from '@adonisjs/core/http'
import { orderByTradeId } from '#services/order_lookup'
import Chain from '#models/chain'
import Token from '#models/token'
import chainRegistry from '#chains/chain_registry'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { ok } from '#support/envelope'

/**
 * GET /pay/payment-uri/:trade_id (not in the interface spec; for the
 * cashier's QR code): the wallet URI of the order's target, amount included
 * (built by the chain's family), or the hosted link.
 */
export default class PaymentUriController {
  async show(ctx: HttpContext) {
    const order = await orderByTradeId(ctx.params.trade_id)
    if (order.isProviderOrder) return ok(ctx, { trade_id: order.tradeId, uri: order.paymentUrl })
    if (!order.isOnChain) {
      throw new BusinessError(ErrorCode.NOT_WAITING, 'Order is not waiting for payment: choose a network and token first')
    }
    const chain = await Chain.findByOrFail('network', order.network)
    const token = await Token.query().where('network', order.network).where('symbol', order.token).firstOrFail()
    const family = chainRegistry.find(chain.family)
    const uri = family?.paymentUri ? family.paymentUri({ chain, token, order }) : order.receiveAddress
    return ok(ctx, { trade_id: order.tradeId, uri })
  }
}
