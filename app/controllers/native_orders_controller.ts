import type { HttpContext } from '@adonisjs/core/http'
import merchantAuth from '#services/merchant_auth'
import requestLimits from '#services/request_limits'
import orderService from '#services/order_service'
import { presentCreated } from '#services/order_presenter'
import { createOrderValidator } from '#validators/create_order_validator'
import BusinessError from '#exceptions/business_error'
import callbackFormats from '#callbacks/callback_format'
import { readFlatParams, withoutEmpty } from '#support/request_params'
import { nativeSignature } from '#support/signing'
import { ok } from '#support/envelope'

export default class NativeOrdersController {
  /** POST /payments/native/v1/order/create-transaction */
  async create(ctx: HttpContext) {
    const params = readFlatParams(ctx)
    const apiKey = await requestLimits.authenticateCreate(ctx, () =>
      merchantAuth.authenticate(params, ctx.request.ip(), {
        field: 'signature',
        expected: (secret) => nativeSignature(params, secret),
      })
    )

    const fields = await ctx.request.validateUsing(createOrderValidator, { data: withoutEmpty(params) })
    const paymentType = fields.payment_type === 'compat' ? 'Compat' : 'Native'
    if (paymentType === 'Compat' && !/^\d+$/.test(apiKey.pid)) {
      throw BusinessError.parameter('payment_type Compat requires a numeric pid')
    }
    // An order must be able to tell its merchant once paid: no loaded format, no order.
    if (!callbackFormats.servesPaymentType(paymentType)) {
      throw BusinessError.parameter(`payment_type ${paymentType} is not available: its plugin is turned off on this gateway`)
    }

    const order = await orderService.create({
      apiKey,
      orderId: fields.order_id,
      currency: fields.currency,
      amount: fields.amount,
      token: fields.token,
      network: fields.network,
      notifyUrl: fields.notify_url,
      redirectUrl: fields.redirect_url,
      name: fields.name,
      paymentType,
    })
    return ok(ctx, presentCreated(order))
  }
}
