import type { HttpContext } from '@adonisjs/core/http'
import Order from '#models/order'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { presentCashier, presentStatus } from '#services/order_presenter'
import { ok } from '#support/envelope'

/** trade_ids are 22 base64url characters; anything else cannot exist. */
const TRADE_ID = /^[A-Za-z0-9_-]{1,64}$/

async function findOrder(tradeId: string): Promise<Order> {
  const order = TRADE_ID.test(tradeId) ? await Order.findBy('trade_id', tradeId) : null
  if (!order) throw new BusinessError(ErrorCode.ORDER_NOT_FOUND)
  return order
}

export default class CashierController {
  /** GET /pay/checkout-counter/:trade_id → 301 to the cashier page. */
  async page({ params, response }: HttpContext) {
    return response.redirect().status(301).toPath(`/cashier/${encodeURIComponent(params.trade_id)}`)
  }

  /** GET /pay/checkout-counter-resp/:trade_id */
  async init(ctx: HttpContext) {
    return ok(ctx, presentCashier(await findOrder(ctx.params.trade_id)))
  }

  /** GET /pay/check-status/:trade_id */
  async status(ctx: HttpContext) {
    return ok(ctx, presentStatus(await findOrder(ctx.params.trade_id)))
  }
}
