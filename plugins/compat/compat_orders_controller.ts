import type { HttpContext } from '@adonisjs/core/http'
import Order, { OrderStatus } from '#models/order'
import { cashierUrl } from '#services/order_presenter'
import { paymentUriOf } from '#services/payment_uri'
import { CompatParams } from '#plugins/compat/compat_params'
import { createCompatOrder } from '#plugins/compat/compat_order_creation'
import { answerEpay, refuseEpay } from '#plugins/compat/epay_answer'

/**
 * The EPay entries of shop plugins that create orders, under the base URL
 * `/payments/compat/v1/order/create-transaction/` that an EPay SDK appends
 * `submit.php` and `mapi.php` to.
 */
export default class CompatOrdersController {
  /**
   * GET|POST submit.php: the page jump. MD5-signed parameters in the query
   * or the form body; success is a 302 to the cashier, a refusal the JSON
   * envelope (the spec's submit.php).
   */
  async submit(ctx: HttpContext) {
    const order = await createCompatOrder(ctx, CompatParams.read(ctx))
    return ctx.response.redirect().status(302).toPath(`/pay/checkout-counter/${order.tradeId}`)
  }

  /**
   * POST mapi.php: API mode, for plugins that show the payment themselves.
   * The same fields, sign and rules as submit.php; the answer is EPay's
   * JSON: `code` 1, `trade_no`, `payurl` (the cashier) and, once token and
   * network are known, `qrcode` (the wallet URI the cashier's QR code
   * shows); any refusal `code` -1 with `msg`.
   */
  async mapi(ctx: HttpContext) {
    try {
      if (ctx.request.method() !== 'POST') {
        return answerEpay(ctx, {
          code: -1,
          msg: 'mapi.php takes a POST with form fields (EPay API mode)',
        })
      }
      const created = await createCompatOrder(ctx, CompatParams.read(ctx))
      const qrcode =
        created.status === OrderStatus.WAITING ? await this.#walletUri(ctx, created.tradeId) : null
      return answerEpay(ctx, {
        code: 1,
        msg: 'success',
        trade_no: created.tradeId,
        out_trade_no: created.orderId,
        payurl: cashierUrl(created.tradeId),
        ...(qrcode ? { qrcode } : {}),
      })
    } catch (error) {
      return refuseEpay(ctx, error)
    }
  }

  /**
   * The order exists now: should its URI fail to build, the shop still
   * gets the cashier link rather than a refusal of an order it cannot retry
   * under the same out_trade_no.
   */
  async #walletUri(ctx: HttpContext, tradeId: string): Promise<string | null> {
    try {
      return await paymentUriOf(await Order.findByOrFail('trade_id', tradeId))
    } catch (error) {
      ctx.logger.warn(
        { err: error, trade_id: tradeId },
        'mapi.php: no wallet URI for the order; answered the cashier link only'
      )
      return null
    }
  }
}
