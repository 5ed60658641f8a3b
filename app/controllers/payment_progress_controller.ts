import type { HttpContext } from '@adonisjs/core/http'
import { orderByTradeId } from '#services/order_lookup'
import { presentProgress } from '#services/payment_progress'
import { ok } from '#support/http/envelope'

/**
 * GET /pay/payment-progress/:trade_id (not in the interface spec; for the
 * cashier's "payment seen, confirming" state and its explorer link).
 */
export default class PaymentProgressController {
  async show(ctx: HttpContext) {
    return ok(ctx, await presentProgress(await orderByTradeId(ctx.params.trade_id)))
  }
}
