import type { HttpContext } from '@adonisjs/core/http'
import merchantAuth from '#services/merchant_auth'
import requestLimits from '#services/request_limits'
import orderService from '#services/order_service'
import { readFlatParams, withoutEmpty, type FlatParams } from '#support/request_params'
import { compatSignature } from '#plugins/compat/compat_signature'
import { compatOrderValidator } from '#plugins/compat/compat_validator'
import { resolveCompatTarget } from '#plugins/compat/compat_resolution'

/**
 * GET|POST /payments/compat/v1/order/create-transaction/submit.php
 * The EPay-style entry of shop plugins: MD5-signed parameters in the query
 * or the form body; success is a 302 to the cashier.
 */
export default class CompatOrdersController {
  async submit(ctx: HttpContext) {
    const params = this.#params(ctx)
    const apiKey = await requestLimits.authenticateCreate(ctx, () =>
      merchantAuth.authenticate(params, ctx.request.ip(), {
        field: 'sign',
        expected: (secret) => compatSignature(params, secret),
      })
    )
    const fields = await ctx.request.validateUsing(compatOrderValidator, { data: withoutEmpty(params) })
    const target = await resolveCompatTarget(fields)

    const order = await orderService.create({
      apiKey,
      orderId: fields.out_trade_no,
      currency: target.currency,
      amount: fields.money,
      token: target.token,
      network: target.network,
      notifyUrl: fields.notify_url,
      redirectUrl: fields.return_url,
      name: fields.name,
      paymentType: 'Compat',
      compatType: fields.type,
    })
    return ctx.response.redirect().status(302).toPath(`/pay/checkout-counter/${order.tradeId}`)
  }

  /** GET: the query; POST: the body's fields over any query parameters. */
  #params(ctx: HttpContext): FlatParams {
    const body = readFlatParams(ctx)
    if (ctx.request.method() === 'GET') return body
    const params: FlatParams = {}
    for (const [name, value] of new URLSearchParams(ctx.request.parsedUrl.query ?? '')) params[name] = value
    return { ...params, ...body }
  }
}
