import type { HttpContext } from '@adonisjs/core/http'
import { orderByTradeId } from '#services/order_lookup'
import { paymentUriOf } from '#services/payment_uri'
import { ok } from '#support/http/envelope'

/**
 * GET /pay/payment-uri/:trade_id (not in the interface spec; for the
 * cashier's QR code): the wallet URI of the order's target, amount included
 * (built by the chain's family), or the hosted link.
 */
export default class PaymentUriController {
  async show(ctx: HttpContext) {
    const order = await orderByTradeId(ctx.params.trade_id)
    return ok(ctx, { trade_id: order.tradeId, uri: await paymentUriOf(order) })
  }
}
