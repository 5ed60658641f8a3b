import type { HttpContext } from '@adonisjs/core/http'
import Order, { OrderStatus } from '#models/order'
import ApiKey from '#models/api_key'
import callbackFormats from '#callbacks/callback_format'
import { orderByTradeId } from '#services/order_lookup'

/**
 * GET /pay/return/:trade_id: where the cashier sends the payer back to the
 * shop. Once paid, to the order's return address in the order's callback
 * format (CallbackFormat.returnUrl: native returns to redirect_url as
 * given, a plugin format may add its own fields, signed like its callback).
 * Before payment, without a return address, or while the order's format
 * is not loaded (its plugin turned off), back to the cashier.
 */
export default class PaymentReturnController {
  async show({ params, response }: HttpContext) {
    const cashier = `/cashier/${encodeURIComponent(String(params.trade_id))}`
    // An unknown trade_id ends on the cashier's not-found page, not on JSON.
    const order = await orderByTradeId(params.trade_id).catch(() => null)
    if (!order) return response.redirect().status(302).toPath(cashier)
    // A paid child pays its parent, and the merchant knows the parent.
    const merchantOrder = order.parentId !== null ? await Order.findOrFail(order.parentId) : order
    if (merchantOrder.status !== OrderStatus.PAID || merchantOrder.redirectUrl === '') {
      return response.redirect().status(302).toPath(cashier)
    }
    const apiKey =
      merchantOrder.apiKeyId !== null
        ? await ApiKey.find(merchantOrder.apiKeyId)
        : await ApiKey.findBy('pid', merchantOrder.pid)
    // The order's format is not loaded (its plugin is turned off): its return address cannot be
    // written as the shop expects, so the payer stays on the cashier, which shows the order paid.
    const format = callbackFormats.has(callbackFormats.nameFor(merchantOrder))
      ? callbackFormats.get(callbackFormats.nameFor(merchantOrder))
      : null
    if (!format) return response.redirect().status(302).toPath(cashier)
    // Without its key the return cannot be signed: the shop gets the plain URL.
    const target = apiKey ? format.returnUrl(merchantOrder, apiKey) : merchantOrder.redirectUrl
    return response.redirect().status(302).toPath(target)
  }
}
