import type { HttpContext } from '@adonisjs/core/http'
import { presentCashier, presentStatus } from '#services/order_presenter'
import { orderByTradeId } from '#services/order_lookup'
import { ok } from '#support/http/envelope'

export default class CashierController {
  /** GET /pay/checkout-counter/:trade_id → 301 to the cashier page. */
  async page({ params, response }: HttpContext) {
    return response
      .redirect()
      .status(301)
      .toPath(`/cashier/${encodeURIComponent(params.trade_id)}`)
  }

  /** GET /pay/checkout-counter-resp/:trade_id */
  async init(ctx: HttpContext) {
    return ok(ctx, presentCashier(await orderByTradeId(ctx.params.trade_id)))
  }

  /** GET /pay/check-status/:trade_id */
  async status(ctx: HttpContext) {
    return ok(ctx, presentStatus(await orderByTradeId(ctx.params.trade_id)))
  }
}
